// File: whatif/memory_view.h
//
// The step's memory as `reverie info` prints it (text and --json) and the
// Python module returns it: per device each step's peak allocated (and
// reserved), and what is live at the peak (depgraph/memory.h).
#ifndef REVERIE_WHATIF_MEMORY_VIEW_H_
#define REVERIE_WHATIF_MEMORY_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "depgraph/memory.h"
#include "depgraph/step_time.h"

namespace reverie::whatif {

// What the split means, for the text and the JSON.
inline constexpr char kMemoryDefinition[] =
    "memory: each step's peak allocated (the allocator's totals where recorded) and what is live "
    "at it: persistent (allocated before the step, live after it: weights, optimizer state), "
    "from earlier steps (freed in this one), kept (allocated in the step, live after it), and "
    "by the phase of the op that allocated it (allocated and freed in the step: activations, "
    "temporaries)";

// "2.01 MiB", "12.0 KiB", "8 B".
std::string MemorySize(int64_t bytes);

// Text for `info`; empty when the trace recorded no memory.
std::string MemoryText(const depgraph::MemoryReport& m, const std::vector<std::string>& step_names,
                       const std::vector<depgraph::StepTime>& steps);

// The "memory" object of `info --json` (the caller writes the key).
void WriteMemoryJson(JsonWriter& w, const depgraph::MemoryReport& m,
                     const std::vector<std::string>& step_names,
                     const std::vector<depgraph::StepTime>& steps);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_MEMORY_VIEW_H_
