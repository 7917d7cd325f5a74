#include "export/timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "depgraph/step_time.h"
#include "base/json_writer.h"

namespace reverie::exporter {
namespace {

using depgraph::Graph;
using depgraph::ResourceKind;
using depgraph::TaskId;
using depgraph::TaskKind;

// Communication channels get tids far above any stream or thread number so
// that they never share a row with them.
constexpr int64_t kChannelTidBase = 1'000'000'000;

void AppendTs(std::string& out, int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  out += buf;
}

const char* Category(TaskKind k) {
  switch (k) {
    case TaskKind::kCpuApi:
      return "cuda_runtime";
    case TaskKind::kCpuWork:
      return "cpu_op";
    case TaskKind::kKernel:
      return "kernel";
    case TaskKind::kMemcpy:
      return "gpu_memcpy";
    case TaskKind::kMemset:
      return "gpu_memset";
    case TaskKind::kComm:
      return "comm";
  }
  return "cpu_op";
}

// Writes one run; `next_correlation` keeps ids unique across runs.
class RunWriter {
 public:
  RunWriter(const TimelineRun& run, int64_t pid, uint64_t* next_correlation, std::string& out,
            TimelineStats& stats)
      : run_(run),
        g_(*run.graph),
        pid_(pid),
        next_corr_(next_correlation),
        out_(out),
        stats_(stats) {}

  void Write() {
    ComputeTimes();
    AssignTids();
    WriteMetadata();
    AssignCorrelations();
    WriteTasks();
    WriteFlows();
    WriteLayerRanges();
    WriteSteps();
  }

 private:
  bool Timed(TaskId t) const { return start_[t.value()] >= 0; }

  void ComputeTimes() {
    const size_t n = g_.task_count();
    start_.assign(n, -1);
    end_.assign(n, -1);
    origin_ = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < n; ++i) {
      const TaskId t(static_cast<uint32_t>(i));
      if (g_.removed(t)) continue;
      int64_t s, e;
      if (run_.sim != nullptr) {
        s = run_.sim->start_ns[i];
        e = run_.sim->end_ns[i];
      } else {
        s = g_.measured_start_ns(t);
        e = s + g_.duration_ns(t);
      }
      if (s < 0 || e < s) {
        ++stats_.skipped_untimed;
        continue;
      }
      start_[i] = s;
      end_[i] = e;
      origin_ = std::min(origin_, s);
    }
    if (origin_ == std::numeric_limits<int64_t>::max()) origin_ = 0;
  }

  void AssignTids() {
    absl::flat_hash_set<int64_t> used;
    tid_.resize(g_.resource_count());
    // Streams keep their number (the importer reads args.stream anyway);
    // threads keep theirs unless a stream already took it.
    for (int pass = 0; pass < 3; ++pass) {
      for (size_t r = 0; r < g_.resource_count(); ++r) {
        const depgraph::Resource& res = g_.resource(depgraph::ResourceId(static_cast<uint32_t>(r)));
        const int want_pass = res.kind == ResourceKind::kGpuStream   ? 0
                              : res.kind == ResourceKind::kCpuThread ? 1
                                                                     : 2;
        if (want_pass != pass) continue;
        int64_t tid = res.kind == ResourceKind::kCommChannel ? kChannelTidBase + res.native_id
                                                             : res.native_id;
        while (!used.insert(tid).second) tid += kChannelTidBase / 2;
        tid_[r] = tid;
      }
    }
  }

  void BeginEvent() {
    out_ += first_event_ ? "\n" : ",\n";
    first_event_ = false;
    ++stats_.events;
  }

  void WriteMetadata() {
    BeginEvent();
    absl::StrAppend(&out_, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":", pid_,
                    ",\"tid\":0,\"args\":{\"name\":");
    AppendJsonString(out_, run_.label);
    out_ += "}}";
    BeginEvent();
    absl::StrAppend(&out_, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":", pid_,
                    ",\"tid\":0,\"args\":{\"sort_index\":", pid_, "}}");
    for (size_t r = 0; r < g_.resource_count(); ++r) {
      const depgraph::Resource& res = g_.resource(depgraph::ResourceId(static_cast<uint32_t>(r)));
      BeginEvent();
      absl::StrAppend(&out_, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":", pid_,
                      ",\"tid\":", tid_[r], ",\"args\":{\"name\":");
      AppendJsonString(
          out_, res.name.empty() ? std::string(depgraph::ResourceKindName(res.kind)) : res.name);
      out_ += "}}";
      BeginEvent();
      // CPU threads first, then streams, then channels, as in Kineto views.
      absl::StrAppend(&out_, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":", pid_,
                      ",\"tid\":", tid_[r], ",\"args\":{\"sort_index\":",
                      static_cast<int>(res.kind) * 100000 + static_cast<int64_t>(r), "}}");
    }
  }

  void AssignCorrelations() {
    corr_.assign(g_.task_count(), 0);
    for (size_t i = 0; i < g_.task_count(); ++i) {
      const TaskId t(static_cast<uint32_t>(i));
      if (!g_.removed(t) && g_.kind(t) == TaskKind::kCpuApi) corr_[i] = (*next_corr_)++;
    }
    for (size_t e = 0; e < g_.edge_count(); ++e) {
      const depgraph::Edge& edge = g_.edge(depgraph::EdgeId(static_cast<uint32_t>(e)));
      if (edge.removed || edge.kind != depgraph::EdgeKind::kLaunch) continue;
      const uint32_t src = edge.src.value(), dst = edge.dst.value();
      if (corr_[src] == 0) corr_[src] = (*next_corr_)++;
      if (corr_[dst] == 0) {
        corr_[dst] = corr_[src];
        launches_.push_back(edge);
      }
    }
  }

  void WriteTasks() {
    for (size_t i = 0; i < g_.task_count(); ++i) {
      const TaskId t(static_cast<uint32_t>(i));
      if (g_.removed(t) || !Timed(t)) continue;
      const TaskKind kind = g_.kind(t);
      const depgraph::Resource& res = g_.resource(g_.resource_of(t));
      BeginEvent();
      ++stats_.tasks;
      absl::StrAppend(&out_, "{\"ph\":\"X\",\"cat\":\"", Category(kind), "\",\"name\":");
      AppendJsonString(out_, g_.name(t));
      absl::StrAppend(&out_, ",\"pid\":", pid_, ",\"tid\":", tid_[g_.resource_of(t).value()],
                      ",\"ts\":");
      AppendTs(out_, start_[i] - origin_);
      out_ += ",\"dur\":";
      AppendTs(out_, end_[i] - start_[i]);
      out_ += ",\"args\":{";
      if (corr_[i] != 0) absl::StrAppend(&out_, "\"correlation\":", corr_[i], ",");
      if (depgraph::IsGpuKind(kind)) {
        absl::StrAppend(&out_, "\"device\":", std::max(res.device, 0),
                        ",\"stream\":", res.native_id, ",");
      }
      if (g_.bytes(t) > 0) absl::StrAppend(&out_, "\"bytes\":", g_.bytes(t), ",");
      if (g_.layer_of(t).valid()) {
        out_ += "\"layer\":";
        AppendJsonString(out_, g_.layer(g_.layer_of(t)).path);
        out_ += ",";
      }
      absl::StrAppend(&out_, "\"phase\":\"", Sv(depgraph::PhaseName(g_.phase(t))),
                      "\",\"step\":", g_.step_of(t), ",\"task\":", i, "}}");
    }
  }

  void WriteFlows() {
    for (const depgraph::Edge& e : launches_) {
      const uint32_t s = e.src.value(), d = e.dst.value();
      if (!Timed(e.src) || !Timed(e.dst)) continue;
      ++stats_.flows;
      BeginEvent();
      absl::StrAppend(&out_, "{\"ph\":\"s\",\"id\":", corr_[d], ",\"pid\":", pid_,
                      ",\"tid\":", tid_[g_.resource_of(e.src).value()], ",\"ts\":");
      AppendTs(out_, start_[s] - origin_);
      out_ += ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}";
      BeginEvent();
      absl::StrAppend(&out_, "{\"ph\":\"f\",\"id\":", corr_[d], ",\"pid\":", pid_,
                      ",\"tid\":", tid_[g_.resource_of(e.dst).value()], ",\"ts\":");
      AppendTs(out_, start_[d] - origin_);
      out_ += ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}";
    }
  }

  // A layer's range is the span of the CPU tasks attributed to it or to its
  // descendants, per (step, phase), on the thread of its first task.
  void WriteLayerRanges() {
    struct Span {
      int64_t start = std::numeric_limits<int64_t>::max();
      int64_t end = std::numeric_limits<int64_t>::min();
      int64_t tid = 0;
    };
    struct Key {
      uint32_t layer;
      int32_t step;
      uint8_t phase;
    };
    // (layer, step, phase) packed in one key.
    auto pack = [](const Key& k) {
      return (static_cast<uint64_t>(k.layer) << 40) ^
             (static_cast<uint64_t>(static_cast<uint32_t>(k.step) & 0xffffffffu) << 8) ^
             k.phase;
    };
    absl::flat_hash_map<uint64_t, Span> spans;
    std::vector<Key> order;
    for (size_t i = 0; i < g_.task_count(); ++i) {
      const TaskId t(static_cast<uint32_t>(i));
      if (g_.removed(t) || !Timed(t) || !depgraph::IsCpuKind(g_.kind(t))) continue;
      for (depgraph::LayerId l = g_.layer_of(t); l.valid(); l = g_.layer(l).parent) {
        const Key key{l.value(), g_.step_of(t), static_cast<uint8_t>(g_.phase(t))};
        auto [it, inserted] = spans.try_emplace(pack(key));
        if (inserted) {
          it->second.tid = tid_[g_.resource_of(t).value()];
          order.push_back(key);
        }
        it->second.start = std::min(it->second.start, start_[i]);
        it->second.end = std::max(it->second.end, end_[i]);
      }
    }
    for (const Key& key : order) {
      const Span& s = spans.at(pack(key));
      const std::string& path = g_.layer(depgraph::LayerId(key.layer)).path;
      const auto phase = static_cast<depgraph::Phase>(key.phase);
      const bool forward = phase == depgraph::Phase::kForward;
      BeginEvent();
      ++stats_.layer_ranges;
      absl::StrAppend(&out_, "{\"ph\":\"X\",\"cat\":\"",
                      forward ? "python_function" : "user_annotation", "\",\"name\":");
      // The importer rebuilds a module path from the nesting of
      // "nn.Module: X" ranges, so a forward range names only its own step.
      std::string leaf = path;
      const depgraph::LayerId parent = g_.layer(depgraph::LayerId(key.layer)).parent;
      if (parent.valid()) {
        const std::string& pp = g_.layer(parent).path;
        if (path.size() > pp.size() + 1 && path.compare(0, pp.size(), pp) == 0 &&
            path[pp.size()] == '.') {
          leaf = path.substr(pp.size() + 1);
        }
      }
      AppendJsonString(out_, forward
                                 ? absl::StrCat("nn.Module: ", leaf)
                                 : absl::StrCat(path, " [", Sv(depgraph::PhaseName(phase)), "]"));
      absl::StrAppend(&out_, ",\"pid\":", pid_, ",\"tid\":", s.tid, ",\"ts\":");
      AppendTs(out_, s.start - origin_);
      out_ += ",\"dur\":";
      AppendTs(out_, s.end - s.start);
      out_ += ",\"args\":{\"Module Hierarchy\":";
      AppendJsonString(out_, path);
      absl::StrAppend(&out_, ",\"step\":", key.step, "}}");
    }
  }

  void WriteSteps() {
    // The thread with the most CPU tasks carries the ProfilerStep ranges.
    absl::flat_hash_map<uint32_t, int64_t> cpu_tasks;
    uint32_t main = 0;
    int64_t best = -1;
    for (size_t i = 0; i < g_.task_count(); ++i) {
      const TaskId t(static_cast<uint32_t>(i));
      if (g_.removed(t) || !depgraph::IsCpuKind(g_.kind(t))) continue;
      const int64_t c = ++cpu_tasks[g_.resource_of(t).value()];
      if (c > best) best = c, main = g_.resource_of(t).value();
    }
    if (best < 0) return;
    for (size_t it = 0; it < g_.step_count(); ++it) {
      int64_t s, e;
      if (run_.sim != nullptr) {
        const std::vector<depgraph::StepTime>& steps =
            run_.steps != nullptr ? *run_.steps : run_.sim->steps;
        if (it >= steps.size()) continue;
        s = steps[it].start_ns;
        e = steps[it].end_ns;
      } else {
        s = g_.step_info(static_cast<int32_t>(it)).measured_start_ns;
        e = g_.step_info(static_cast<int32_t>(it)).measured_end_ns;
      }
      if (e <= s || s < origin_) continue;
      std::string name = g_.step_info(static_cast<int32_t>(it)).name;
      if (name.empty()) name = absl::StrCat("ProfilerStep#", it);
      BeginEvent();
      ++stats_.step_ranges;
      out_ += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":";
      AppendJsonString(out_, name);
      absl::StrAppend(&out_, ",\"pid\":", pid_, ",\"tid\":", tid_[main], ",\"ts\":");
      AppendTs(out_, s - origin_);
      out_ += ",\"dur\":";
      AppendTs(out_, e - s);
      out_ += "}";
    }
  }

  const TimelineRun& run_;
  const Graph& g_;
  int64_t pid_;
  uint64_t* next_corr_;
  std::string& out_;
  TimelineStats& stats_;
  bool first_event_ = false;  // set by RenderTimeline through SetFirst
  int64_t origin_ = 0;
  std::vector<int64_t> start_, end_;
  std::vector<int64_t> tid_;
  std::vector<uint64_t> corr_;
  std::vector<depgraph::Edge> launches_;

 public:
  void SetFirst(bool first) { first_event_ = first; }
  bool first() const { return first_event_; }
};

}  // namespace

absl::Status ValidateRuns(const std::vector<TimelineRun>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const TimelineRun& r = runs[i];
    if (r.graph == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("timeline run ", i, " has no graph"));
    }
    if (r.sim != nullptr && (r.sim->start_ns.size() != r.graph->task_count() ||
                             r.sim->end_ns.size() != r.graph->task_count())) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeline run '", r.label, "': simulation has ", r.sim->start_ns.size(),
                       " task times for a graph of ", r.graph->task_count(), " tasks"));
    }
  }
  return absl::OkStatus();
}

// Each run's steps as reverie computed them (the step rule read on that run,
// a prediction in its baseline's frame), in a top-level object the Kineto
// importer keeps as header metadata ("reverieSteps.<pid>" = "label|dur_us,
// counted;..."), so `reverie compare` reports what `predict` did instead of
// re-deriving steps from the shifted, merged runs.
void AppendRecordedSteps(const std::vector<TimelineRun>& runs, std::string& out) {
  out += ",\n\"reverieSteps\":{";
  bool first = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].graph == nullptr) continue;
    const std::vector<depgraph::StepTime> steps =
        runs[i].steps != nullptr ? *runs[i].steps
        : runs[i].sim != nullptr ? runs[i].sim->steps
                                 : depgraph::MeasuredSteps(*runs[i].graph);
    std::string value = runs[i].label + "|";
    for (size_t k = 0; k < steps.size(); ++k) {
      absl::StrAppend(&value, k > 0 ? ";" : "", absl::StrFormat("%.3f", steps[k].duration_ns() / 1e3),
                      ",", steps[k].counted ? 1 : 0);
    }
    absl::StrAppend(&out, first ? "" : ",", "\"", i + 1, "\":");
    AppendJsonString(out, value);
    first = false;
  }
  out += "}";
}

std::string RenderTimeline(const std::vector<TimelineRun>& runs, TimelineStats* stats) {
  TimelineStats local;
  TimelineStats& st = stats != nullptr ? *stats : local;
  st = TimelineStats{};
  std::string out = "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",";
  out += "\"traceName\":\"reverie timeline\",\"traceEvents\":[";
  uint64_t next_corr = 1;
  bool first = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].graph == nullptr) continue;
    RunWriter w(runs[i], static_cast<int64_t>(i) + 1, &next_corr, out, st);
    w.SetFirst(first);
    w.Write();
    first = w.first();
  }
  out += "\n]";
  AppendRecordedSteps(runs, out);
  out += "}\n";
  return out;
}

absl::Status WriteTimeline(const std::string& path, const std::vector<TimelineRun>& runs,
                           TimelineStats* stats) {
  REVERIE_RETURN_IF_ERROR(ValidateRuns(runs));
  // Atomically: a failed write leaves no half file behind (base/atomic_file.h).
  return WriteFileAtomically(path, RenderTimeline(runs, stats));
}

absl::Status MaybeWriteTimeline(const std::string& path, const depgraph::Graph& graph,
                                const depgraph::SimResult& baseline,
                                const depgraph::Graph* predicted,
                                const depgraph::SimResult* predicted_sim) {
  if (path.empty()) return absl::OkStatus();
  std::vector<TimelineRun> runs = {{"measured", &graph, nullptr},
                                   {"baseline (simulated)", &graph, &baseline}};
  if (predicted != nullptr && predicted_sim != nullptr) {
    runs.push_back({"predicted (simulated)", predicted, predicted_sim});
  }
  TimelineStats stats;
  REVERIE_RETURN_IF_ERROR(WriteTimeline(path, runs, &stats));
  std::fprintf(stderr, "timeline: %s (%" PRId64 " events, %" PRId64 " tasks)\n", path.c_str(),
               stats.events, stats.tasks);
  return absl::OkStatus();
}

}  // namespace reverie::exporter
