#include "whatif/memory_view.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reverie::whatif {
namespace {

using depgraph::DeviceMemory;
using depgraph::Phase;
using depgraph::StepMemory;

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }


std::string DeviceName(const DeviceMemory& d) {
  return d.device < 0 ? "host" : absl::StrCat("gpu ", d.device);
}

int64_t Phase_(const StepMemory& s, Phase p) { return s.by_phase[static_cast<size_t>(p)]; }

// Unknown, data loading and other phases together.
int64_t OtherPhases(const StepMemory& s) {
  return Phase_(s, Phase::kUnknown) + Phase_(s, Phase::kDataLoading) + Phase_(s, Phase::kOther);
}

std::string Cell(int64_t bytes, bool known) {
  return known ? absl::StrFormat("%10.2f", MiB(bytes)) : absl::StrFormat("%10s", "-");
}

const std::string& NameOf(const std::vector<std::string>& names, size_t i) {
  static const std::string kNone = "step";
  return i < names.size() ? names[i] : kNone;
}

}  // namespace

std::string MemorySize(int64_t bytes) {
  const double b = static_cast<double>(bytes < 0 ? -bytes : bytes);
  if (b >= 1024.0 * 1024.0 * 1024.0) return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  if (b >= 1024.0 * 1024.0) return absl::StrFormat("%.2f MiB", MiB(bytes));
  if (b >= 1024.0) return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return absl::StrFormat("%lld B", bytes);
}

std::string MemoryText(const depgraph::MemoryReport& m, const std::vector<std::string>& step_names,
                       const std::vector<depgraph::StepTime>& steps) {
  if (m.empty()) return "";
  std::string out = absl::StrCat("\n", kMemoryDefinition, "\n");
  for (const DeviceMemory& d : m.devices) {
    absl::StrAppendFormat(&out, "  %s: peak allocated %s", DeviceName(d), MemorySize(d.peak));
    // The host's allocator reserves nothing apart (its totals say 0).
    if (d.peak_reserved > 0) absl::StrAppendFormat(&out, ", reserved %s", MemorySize(d.peak_reserved));
    absl::StrAppendFormat(&out, " (%lld allocations and frees%s)\n", d.events,
                          d.absolute ? ""
                                     : "; the trace records no totals: levels are relative to "
                                       "its start, by phase is the net growth to the peak");
    absl::StrAppendFormat(&out, "    %-22s %10s %8s %10s %10s %10s %10s %10s %10s %10s %10s\n",
                          "step (MiB)", "peak", "at ms", "start", "persistent", "earlier", "kept",
                          "forward", "backward", "update", "other");
    size_t biggest = 0;
    for (size_t i = 0; i < d.steps.size(); ++i) {
      const StepMemory& s = d.steps[i];
      if (s.peak > d.steps[biggest].peak) biggest = i;
      const double at_ms =
          i < steps.size() ? static_cast<double>(s.peak_ns - steps[i].start_ns) / 1e6 : 0.0;
      absl::StrAppendFormat(&out, "    %-22s %10.2f %8.3f %10.2f %s %s %s %s %s %s %s%s\n",
                            NameOf(step_names, i), MiB(s.peak), at_ms, MiB(s.start_level),
                            Cell(s.persistent, s.matched), Cell(s.from_earlier, s.matched),
                            Cell(s.kept, s.matched), Cell(Phase_(s, Phase::kForward), true),
                            Cell(Phase_(s, Phase::kBackward), true),
                            Cell(Phase_(s, Phase::kUpdate), true), Cell(OtherPhases(s), true),
                            i < steps.size() && !steps[i].counted ? "  (not counted)" : "");
    }
    if (!d.steps.empty() && !d.steps[biggest].top_layers.empty()) {
      absl::StrAppendFormat(&out, "    allocated in %s and live at its peak, by layer:",
                            NameOf(step_names, biggest));
      for (const auto& [layer, bytes] : d.steps[biggest].top_layers) {
        absl::StrAppendFormat(&out, " %s %s;", layer, MemorySize(bytes));
      }
      out.back() = '\n';
    }
  }
  if (m.devices_left_out > 0) {
    absl::StrAppendFormat(&out, "  (%lld more devices not shown)\n",
                          m.devices_left_out);
  }
  return out;
}

void WriteMemoryJson(JsonWriter& w, const depgraph::MemoryReport& m,
                     const std::vector<std::string>& step_names,
                     const std::vector<depgraph::StepTime>& steps) {
  w.BeginObject().Field("definition", kMemoryDefinition);
  w.Field("devices_left_out", m.devices_left_out);
  w.Key("devices").BeginArray();
  for (const DeviceMemory& d : m.devices) {
    w.BeginObject().Field("device", d.device).Field("kind", d.device < 0 ? "host" : "gpu");
    w.Field("levels", d.absolute ? "allocator totals" : "relative to the trace's start");
    w.Field("events", d.events).Field("peak_allocated_bytes", d.peak);
    w.Key("peak_reserved_bytes");
    if (d.peak_reserved >= 0) w.Int(d.peak_reserved); else w.Null();
    w.Key("steps").BeginArray();
    for (size_t i = 0; i < d.steps.size(); ++i) {
      const StepMemory& s = d.steps[i];
      w.BeginObject().Field("name", NameOf(step_names, i));
      w.Field("counted", i < steps.size() ? steps[i].counted : true);
      w.Field("events", s.events).Field("start_bytes", s.start_level).Field("peak_bytes", s.peak);
      w.Field("peak_at_us",
              i < steps.size() ? static_cast<double>(s.peak_ns - steps[i].start_ns) / 1e3 : 0.0);
      w.Key("peak_reserved_bytes");
      if (s.peak_reserved >= 0) w.Int(s.peak_reserved); else w.Null();
      w.Field("matched", s.matched);
      if (s.matched) {
        w.Field("persistent_bytes", s.persistent).Field("from_earlier_bytes", s.from_earlier);
        w.Field("kept_bytes", s.kept);
      }
      w.Key(s.matched ? "live_by_phase_bytes" : "net_by_phase_bytes").BeginObject();
      for (int p = 0; p < depgraph::kPhaseCount; ++p) {
        w.Field(depgraph::PhaseName(static_cast<Phase>(p)), s.by_phase[static_cast<size_t>(p)]);
      }
      w.EndObject();
      w.Key("top_layers").BeginArray();
      for (const auto& [layer, bytes] : s.top_layers) {
        w.BeginObject().Field("layer", layer).Field("bytes", bytes).EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
}

}  // namespace reverie::whatif
