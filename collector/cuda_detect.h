// File: collector/cuda_detect.h
//
// Does this process use CUDA? Asked by the LD_PRELOAD constructor, which
// must leave every other program exactly as it was: it only reads the list
// of loaded objects and the section headers of /proc/self/exe, never loads
// anything, never writes anything.
//
// A process "uses CUDA" when a loaded object is the CUDA runtime or driver
// (or a CUDA math library, NCCL, PyTorch's CUDA library), or when the main
// executable carries device code (an .nv_fatbin section: nvcc's default is
// to link the CUDA runtime statically, so no libcudart shows up). A Python
// interpreter that imports torch later is not detected at load time; use
// CUDA_INJECTION64_PATH (or `reverie collect`) for it.
#ifndef REVERIE_COLLECTOR_CUDA_DETECT_H_
#define REVERIE_COLLECTOR_CUDA_DETECT_H_

#include <string>
#include <string_view>

namespace reverie::collector {

// True when `path`'s file name is one of the CUDA libraries above.
bool IsCudaLibraryName(std::string_view path);

// True when the ELF file at `path` has a section named `.nv_fatbin`.
bool ElfHasDeviceCode(const std::string& path);

bool ProcessUsesCuda();

// True when LD_PRELOAD names a file whose name is `library_name`.
bool PreloadNames(std::string_view ld_preload, std::string_view library_name);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_CUDA_DETECT_H_
