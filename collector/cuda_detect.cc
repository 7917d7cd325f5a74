#include "collector/cuda_detect.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace reverie::collector {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool ReadAt(int fd, void* out, size_t size, off_t offset) {
  char* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, offset);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return true;
}

int FindCudaObject(struct dl_phdr_info* info, size_t, void* found) {
  if (info->dlpi_name != nullptr && IsCudaLibraryName(info->dlpi_name)) {
    *static_cast<bool*>(found) = true;
    return 1;  // stop iterating
  }
  return 0;
}

}  // namespace

bool IsCudaLibraryName(std::string_view path) {
  const std::string_view name = BaseName(path);
  static constexpr std::string_view kPrefixes[] = {
      "libcuda.so", "libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn.so",
      "libnccl.so", "libtorch_cuda.so", "libc10_cuda.so", "libnvrtc.so",
  };
  for (std::string_view prefix : kPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool ElfHasDeviceCode(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  Elf64_Ehdr eh{};
  if (ReadAt(fd, &eh, sizeof eh, 0) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) &&
      eh.e_shnum > 0 && eh.e_shnum < 65535 && eh.e_shstrndx < eh.e_shnum) {
    std::vector<Elf64_Shdr> sections(eh.e_shnum);
    if (ReadAt(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr),
               static_cast<off_t>(eh.e_shoff))) {
      const Elf64_Shdr& strtab = sections[eh.e_shstrndx];
      if (strtab.sh_size > 0 && strtab.sh_size < (1u << 24)) {
        std::vector<char> names(strtab.sh_size + 1, '\0');
        if (ReadAt(fd, names.data(), strtab.sh_size, static_cast<off_t>(strtab.sh_offset))) {
          for (const Elf64_Shdr& s : sections) {
            if (s.sh_name < strtab.sh_size &&
                std::strcmp(names.data() + s.sh_name, ".nv_fatbin") == 0) {
              found = true;
              break;
            }
          }
        }
      }
    }
  }
  ::close(fd);
  return found;
}

bool ProcessUsesCuda() {
  bool found = false;
  ::dl_iterate_phdr(&FindCudaObject, &found);
  return found || ElfHasDeviceCode("/proc/self/exe");
}

bool PreloadNames(std::string_view ld_preload, std::string_view library_name) {
  // LD_PRELOAD separates entries with spaces or colons.
  size_t pos = 0;
  while (pos <= ld_preload.size()) {
    size_t end = ld_preload.find_first_of(" :", pos);
    if (end == std::string_view::npos) end = ld_preload.size();
    if (end > pos && BaseName(ld_preload.substr(pos, end - pos)) == library_name) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace reverie::collector
