// File: report/timeline_view_json.cc
//
// RenderTimelineViewJson(): the document report/timeline_view.js reads.
//
//   {"version":1, "kinds":[TaskKindName...], "phases":[PhaseName...],
//    "names":[task names], "layers":["", layer paths...],
//    "runs":[{"label", "step_ns":[each step's span in that run]}],
//    "steps":[{"label", "counted", "views":[view index per run, -1 = none]}],
//    "open_step":S, "task_budget":N,
//    "views":[{"run", "step", "span", "lanes":[LANE...],
//              "path":[lane,index, ...], "launch":[call lane,index, gpu lane,index, ...]}]}
//   LANE = {"name", "kind", "s":[start deltas], "d":[durations], "n":[name ids],
//           "l":[layer ids, 0 = none], "k":[kind*8 + phase],
//           "levels":[{"r":resolution, "s":[start deltas], "w":[widths],
//                      "b":[busy], "k":[kind*8 + phase of the longest task]}]}
//
// All times are integer ns relative to the view's window; starts are
// written as differences from the previous start in the same array, which
// keeps the numbers short.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "report/json.h"
#include "report/timeline_view.h"

namespace reverie::report {
namespace {

using depgraph::Graph;

// The document sits in a <script> element: no '<' may end it early, and
// strings are the only place one can appear.
void AppendSafeString(std::string& out, std::string_view s) {
  const size_t from = out.size();
  AppendJsonString(out, s);
  if (out.find('<', from) == std::string::npos) return;
  std::string safe;
  for (size_t i = from; i < out.size(); ++i) {
    if (out[i] == '<') {
      safe += "\\u003c";
    } else {
      safe += out[i];
    }
  }
  out.resize(from);
  out += safe;
}

template <typename T>
void AppendArray(std::string& out, std::string_view key, const std::vector<T>& v,
                 bool delta = false) {
  absl::StrAppend(&out, "\"", Sv(key), "\":[");
  int64_t prev = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = static_cast<int64_t>(v[i]);
    absl::StrAppend(&out, i > 0 ? "," : "", delta ? x - prev : x);
    prev = x;
  }
  out += "]";
}

// The document's name and layer tables, shared by every view. Each graph
// has its own interned ids, mapped once per graph.
class Tables {
 public:
  int32_t Name(const Graph& g, uint32_t name_id) {
    std::vector<int32_t>& m = name_map_[&g];
    if (m.size() < g.name_count()) m.resize(g.name_count(), -1);
    if (m[name_id] < 0) m[name_id] = Intern(names_, name_index_, g.NameOf(name_id));
    return m[name_id];
  }
  int32_t Layer(const Graph& g, depgraph::LayerId l) {
    if (!l.valid()) return 0;
    std::vector<int32_t>& m = layer_map_[&g];
    if (m.size() < g.layer_count()) m.resize(g.layer_count(), -1);
    // Layer ids start at 1: 0 is "no layer".
    if (m[l.value()] < 0) m[l.value()] = 1 + Intern(layers_, layer_index_, g.layer(l).path);
    return m[l.value()];
  }
  void Append(std::string& out) const {
    out += "\"names\":[";
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) out += ',';
      AppendSafeString(out, names_[i]);
    }
    out += "],\"layers\":[\"\"";
    for (const std::string& l : layers_) {
      out += ',';
      AppendSafeString(out, l);
    }
    out += "]";
  }

 private:
  static int32_t Intern(std::vector<std::string>& table,
                        absl::flat_hash_map<std::string, int32_t>& index, std::string_view s) {
    auto [it, inserted] = index.try_emplace(std::string(s), static_cast<int32_t>(table.size()));
    if (inserted) table.emplace_back(s);
    return it->second;
  }

  std::vector<std::string> names_, layers_;
  absl::flat_hash_map<std::string, int32_t> name_index_, layer_index_;
  absl::flat_hash_map<const Graph*, std::vector<int32_t>> name_map_, layer_map_;
};

void AppendLane(const Graph& g, const TimelineLane& lane, Tables& tables, std::string& out) {
  out += "{\"name\":";
  AppendSafeString(out, lane.name);
  absl::StrAppend(&out, ",\"kind\":\"", Sv(depgraph::ResourceKindName(lane.kind)), "\",");
  AppendArray(out, "s", lane.start_ns, /*delta=*/true);
  out += ',';
  AppendArray(out, "d", lane.duration_ns);
  std::vector<int32_t> names, layers, kinds;
  for (depgraph::TaskId t : lane.tasks) {
    names.push_back(tables.Name(g, g.name_id(t)));
    layers.push_back(tables.Layer(g, g.layer_of(t)));
    kinds.push_back(static_cast<int32_t>(g.kind(t)) * 8 + static_cast<int32_t>(g.phase(t)));
  }
  std::vector<int32_t> box_kinds;
  out += ',';
  AppendArray(out, "n", names);
  out += ',';
  AppendArray(out, "l", layers);
  out += ',';
  AppendArray(out, "k", kinds);
  out += ",\"levels\":[";
  for (size_t i = 0; i < lane.levels.size(); ++i) {
    const TimelineLevel& lv = lane.levels[i];
    std::vector<int64_t> widths(lv.size());
    box_kinds.resize(lv.size());
    for (size_t j = 0; j < lv.size(); ++j) {
      widths[j] = lv.end_ns[j] - lv.start_ns[j];
      box_kinds[j] = kinds[lv.longest[j]];
    }
    absl::StrAppend(&out, i > 0 ? "," : "", "{\"r\":", lv.resolution_ns, ",");
    AppendArray(out, "s", lv.start_ns, /*delta=*/true);
    out += ',';
    AppendArray(out, "w", widths);
    out += ',';
    AppendArray(out, "b", lv.busy_ns);
    out += ',';
    AppendArray(out, "k", box_kinds);
    out += '}';
  }
  out += "]}";
}

void AppendView(const Graph& g, int run, const StepView& v, Tables& tables, std::string& out) {
  absl::StrAppend(&out, "{\"run\":", run, ",\"step\":", v.step, ",\"span\":", v.window_ns,
                  ",\"lanes\":[");
  for (size_t l = 0; l < v.lanes.size(); ++l) {
    if (l > 0) out += ",\n";
    AppendLane(g, v.lanes[l], tables, out);
  }
  std::vector<int32_t> path, launch;
  for (const LaneTask& t : v.critical_path) path.insert(path.end(), {t.lane, t.index});
  for (const TimelineLaunch& a : v.launches) {
    launch.insert(launch.end(), {a.call.lane, a.call.index, a.task.lane, a.task.index});
  }
  out += "],";
  AppendArray(out, "path", path);
  out += ',';
  AppendArray(out, "launch", launch);
  out += "}";
}

// The views of every embedded step, the opening step first, then the others
// in order while the document stays under the task budget.
struct Views {
  std::string json;
  std::vector<std::vector<int64_t>> of_step;  // [step][run]: view index, -1 = none
};

Views RenderViews(const std::vector<TimelineViewRun>& runs, int32_t open, int64_t budget,
                  Tables& tables) {
  std::vector<std::unique_ptr<TimelineIndex>> index;
  for (const TimelineViewRun& r : runs) {
    index.push_back(std::make_unique<TimelineIndex>(*r.graph, *r.sim));
  }
  const int32_t steps = static_cast<int32_t>(index[0]->step_count());
  std::vector<int32_t> order = {open};
  for (int32_t s = 0; s < steps; ++s) {
    if (s != open) order.push_back(s);
  }
  Views out;
  out.of_step.assign(steps, std::vector<int64_t>(runs.size(), -1));
  int64_t tasks = 0, count = 0;
  for (int32_t s : order) {
    std::vector<StepView> step_views(runs.size());
    int64_t step_tasks = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (s >= static_cast<int32_t>(index[r]->step_count())) continue;
      step_views[r] = index[r]->View(s);
      step_tasks += static_cast<int64_t>(step_views[r].task_count());
    }
    if (s != open && tasks + step_tasks > budget) continue;
    tasks += step_tasks;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (s >= static_cast<int32_t>(index[r]->step_count())) continue;
      if (count > 0) out.json += ",\n";
      AppendView(*runs[r].graph, static_cast<int>(r), step_views[r], tables, out.json);
      out.of_step[s][r] = count++;
    }
  }
  return out;
}

// Everything before the views: the tables, the runs and the steps.
void AppendHead(const std::vector<TimelineViewRun>& runs, const Tables& tables, const Views& views,
                std::string& out) {
  out += "{\"version\":1,\"kinds\":[";
  for (int k = 0; k < depgraph::kTaskKindCount; ++k) {
    absl::StrAppend(&out, k > 0 ? "," : "", "\"",
                    Sv(depgraph::TaskKindName(static_cast<depgraph::TaskKind>(k))), "\"");
  }
  out += "],\"phases\":[";
  for (int p = 0; p < depgraph::kPhaseCount; ++p) {
    absl::StrAppend(&out, p > 0 ? "," : "", "\"",
                    Sv(depgraph::PhaseName(static_cast<depgraph::Phase>(p))), "\"");
  }
  out += "],\n";
  tables.Append(out);
  out += ",\n\"runs\":[";
  for (size_t r = 0; r < runs.size(); ++r) {
    out += r > 0 ? ",{\"label\":" : "{\"label\":";
    AppendSafeString(out, runs[r].label);
    std::vector<int64_t> spans;
    for (const depgraph::StepTime& it : runs[r].sim->steps) {
      spans.push_back(it.duration_ns());
    }
    out += ',';
    AppendArray(out, "step_ns", spans);
    out += '}';
  }
  out += "],\n\"steps\":[";
  const Graph& g = *runs[0].graph;
  const depgraph::SimResult& base = *runs[0].sim;
  for (size_t s = 0; s < views.of_step.size(); ++s) {
    const int32_t step = static_cast<int32_t>(s);
    std::string label = s < g.step_count() ? g.step_info(step).name : "whole trace";
    if (label.empty()) label = absl::StrCat("step ", s);
    out += s > 0 ? ",{\"label\":" : "{\"label\":";
    AppendSafeString(out, label);
    absl::StrAppend(&out, ",\"counted\":", base.steps[s].counted ? "true" : "false", ",");
    AppendArray(out, "views", views.of_step[s]);
    out += '}';
  }
  out += "],\n";
}

}  // namespace

absl::StatusOr<std::string> RenderTimelineViewJson(const std::vector<TimelineViewRun>& runs,
                                                   const TimelineViewOptions& options) {
  if (runs.empty()) return absl::InvalidArgumentError("timeline: no run to show");
  for (const TimelineViewRun& r : runs) {
    if (r.graph == nullptr || r.sim == nullptr || r.sim->start_ns.size() != r.graph->task_count()) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeline: run '", r.label, "' has no simulation of its graph"));
    }
  }
  const int32_t steps = static_cast<int32_t>(runs[0].sim->steps.size());
  const int32_t open = options.step >= 0 ? options.step : DefaultTimelineStep(*runs[0].sim);
  if (open >= steps) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeline step ", open, " does not exist: the trace has ", steps, " step",
                     steps == 1 ? "" : "s", " (0-", steps - 1, ")"));
  }
  Tables tables;
  const Views views = RenderViews(runs, open, options.task_budget, tables);
  std::string out;
  out.reserve(views.json.size() + 4096);
  AppendHead(runs, tables, views, out);
  absl::StrAppend(&out, "\"open_step\":", open, ",\"task_budget\":", options.task_budget,
                  ",\n\"views\":[", views.json, "]}\n");
  return out;
}

}  // namespace reverie::report
