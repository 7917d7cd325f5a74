// File: python/module.cc
//
// reverie._reverie: the native half of the Python module (docs/PYTHON.md).
// It calls what the CLI calls (whatif/ and report/) and hands back the JSON
// text the CLI's --json prints, which the pure-Python package (reverie/)
// turns into result objects; so a field has one name, one unit (us) and one
// writer in both. Nothing is computed here that the CLI does not compute.
//
// Invariants: a Trace holds an immutable LoadedTrace (every prediction works
// on a copy of its graph), so Traces may be shared between Python threads;
// the GIL is released while a trace is imported, built and simulated and
// while scripts run; errors raise reverie.Error with the CLI's one-line
// message, and a Lua traceback, when there is one, in its `traceback`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/json_writer.h"
#include "base/printable.h"
#include "base/sv.h"
#include "depgraph/breakdown.h"
#include "depgraph/critical_path.h"
#include "depgraph/replay.h"
#include "frameworks/trace_summary.h"
#include "lua/lua_engine.h"
#include "lua/script_runner.h"
#include "report/sweep.h"
#include "whatif/advise.h"
#include "whatif/info.h"
#include "whatif/job.h"
#include "whatif/pipeline.h"
#include "whatif/prediction_report.h"
#include "whatif/replay.h"
#include "whatif/script_catalog.h"
#include "whatif/sweep.h"
#include "whatif/validate.h"

namespace py = pybind11;

namespace reverie::python {
namespace {

using NamedText = std::pair<std::string, std::string>;

// reverie.Error, made once at import (module-lifetime reference).
PyObject* g_error = nullptr;

// Raises reverie.Error(message); `traceback` is the Lua traceback or None.
[[noreturn]] void Raise(std::string_view message, const std::string& traceback = "") {
  py::object type = py::reinterpret_borrow<py::object>(g_error);
  // Text from a trace or script, escaped as the CLI's (issue 29, D31).
  py::object e = type(EscapeControl(message));
  e.attr("traceback") = traceback.empty() ? py::object(py::none())
                                          : py::object(py::str(EscapeControl(traceback, true)));
  PyErr_SetObject(g_error, e.ptr());
  throw py::error_already_set();
}
[[noreturn]] void Raise(const absl::Status& s, const std::string& traceback = "") {
  Raise(StdSv(s.message()), traceback);
}

// The outcome of work done without the GIL: JSON text or an error.
struct Outcome {
  std::string json;
  absl::Status status;
  std::string traceback;

  std::string Get() const {
    if (!status.ok()) Raise(status, traceback);
    return json;
  }
};

struct Trace {
  std::shared_ptr<const whatif::LoadedTrace> loaded;
  std::string cpu_model;  // "ops" or "gaps"
  const std::string& path() const { return loaded->path; }
};

Trace Load(const std::string& path, const std::string& cpu_model) {
  if (cpu_model != "ops" && cpu_model != "gaps") {
    Raise(absl::StrCat("cpu_model expects ops (op and framework time apart) or gaps, got '",
                       cpu_model, "'"));
  }
  whatif::LoadOptions options;
  options.build.cpu_ops = cpu_model == "ops";
  options.host_sensitivity = true;  // Prediction.to_dict() is `predict --json`
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> loaded;
  {
    py::gil_scoped_release release;
    loaded = whatif::LoadAndSimulate(path, options);
  }
  if (!loaded.ok()) Raise(loaded.status());
  return Trace{std::shared_ptr<const whatif::LoadedTrace>(std::move(*loaded)), cpu_model};
}

// The CLI's script flags as keyword arguments (cli/script_args.h).
whatif::ScriptSpec MakeSpec(std::vector<std::string> scripts, std::vector<NamedText> sources,
                            const std::vector<NamedText>& settings,
                            std::optional<int64_t> lua_budget,
                            std::optional<int64_t> lua_memory_mb, bool sandbox,
                            const std::vector<std::string>& script_dirs) {
  whatif::ScriptSpec spec;
  spec.scripts = std::move(scripts);
  spec.sources = std::move(sources);
  for (const auto& [key, value] : settings) {
    absl::StatusOr<NamedText> kv = lua::ParseSetting(absl::StrCat(key, "=", value));
    if (!kv.ok()) Raise(kv.status());
    spec.settings.push_back(std::move(*kv));
  }
  auto positive = [](const char* name, std::optional<int64_t> v) {
    if (v.has_value() && *v <= 0) {
      Raise(absl::StrCat(name, " expects a positive integer, got '", *v, "'"));
    }
  };
  positive("lua_budget", lua_budget);
  positive("lua_memory_mb", lua_memory_mb);
  if (lua_budget.has_value()) spec.limits.instruction_budget = *lua_budget;
  if (lua_memory_mb.has_value()) spec.limits.memory_limit_bytes = lua::MiBToBytes(*lua_memory_mb);
  spec.limits.sandbox = sandbox;
  spec.script_dirs.insert(spec.script_dirs.end(), script_dirs.begin(), script_dirs.end());
  return spec;
}

void NeedScripts(const whatif::ScriptSpec& spec, const char* what) {
  if (spec.scripts.empty()) Raise(absl::StrCat(what, ": give at least one script (e.g. 'amp.lua')"));
}

std::string Info(const Trace& t) {
  py::gil_scoped_release release;
  const whatif::LoadedTrace& l = *t.loaded;
  return whatif::InfoJson(l.trace, Summarize(l.trace), whatif::ViewOf(l.trace, l.graph, l.baseline, l.stats));
}

std::string Replay(const Trace& t, bool critical_path) {
  py::gil_scoped_release release;
  const whatif::LoadedTrace& l = *t.loaded;
  return whatif::ReplayJson(l, whatif::Replay(l), critical_path);
}

void NeedTop(int top) {
  if (top < 0) Raise(absl::StrCat("top expects a number of layers >= 0, got ", top));
}

std::string Predict(const Trace& t, const whatif::ScriptSpec& spec, int top) {
  NeedScripts(spec, "predict");
  NeedTop(top);
  Outcome out;
  {
    py::gil_scoped_release release;
    absl::StatusOr<whatif::Prediction> p = whatif::Predict(*t.loaded, spec, &out.traceback);
    if (p.ok()) {
      out.json = whatif::PredictionJson(whatif::SummarizePrediction(*t.loaded, *p, top));
    } else {
      out.status = p.status();
    }
  }
  return out.Get();
}

std::string Sweep(const Trace& t, const whatif::ScriptSpec& spec,
                  const std::vector<std::pair<std::string, std::vector<std::string>>>& grid) {
  NeedScripts(spec, "sweep");
  if (grid.empty()) Raise("sweep: give at least one parameter to vary");
  std::vector<report::SweepParam> params;
  for (const auto& [key, values] : grid) {
    if (values.empty()) Raise(absl::StrCat("sweep: parameter '", key, "' has no values"));
    params.push_back({key, values});
  }
  Outcome out;
  {
    py::gil_scoped_release release;
    absl::StatusOr<report::SweepResult> r = whatif::Sweep(*t.loaded, spec, params);
    if (r.ok()) {
      out.json = report::SweepJson(*r);
    } else {
      out.status = r.status();
    }
  }
  return out.Get();
}

std::string Validate(const Trace& before, const Trace& after, const whatif::ScriptSpec& spec,
                     int top) {
  NeedScripts(spec, "validate");
  NeedTop(top);
  Outcome out;
  {
    py::gil_scoped_release release;
    absl::StatusOr<whatif::Validation> v =
        whatif::ValidatePrediction(*before.loaded, *after.loaded, spec, top, &out.traceback);
    if (v.ok()) {
      out.json = whatif::ValidationJson(*v, before.path(), after.path(), before.cpu_model,
                                        spec.scripts);
    } else {
      out.status = v.status();
    }
  }
  return out.Get();
}

std::string Ranks(const std::vector<Trace>& traces, const whatif::ScriptSpec& spec) {
  if (traces.size() < 2) Raise("ranks: give the traces of at least two ranks of one job");
  Outcome out;
  {
    py::gil_scoped_release release;
    std::vector<const whatif::LoadedTrace*> ranks;
    for (const Trace& t : traces) ranks.push_back(t.loaded.get());
    absl::StatusOr<whatif::JobReport> job = whatif::SimulateJob(ranks, spec);
    if (job.ok()) {
      out.json = whatif::JobJson(*job);
    } else {
      out.status = job.status();
    }
  }
  return out.Get();
}

// `reverie advise --json`: the same whatif::Advise the CLI runs.
std::string Advise(const Trace& t, const whatif::ScriptSpec& spec, int top, int threads) {
  if (!spec.scripts.empty()) Raise("advise: takes no scripts (it tries the library's)");
  if (top < 1) Raise(absl::StrCat("advise: top expects a positive integer, got '", top, "'"));
  if (threads < 0) Raise(absl::StrCat("advise: threads expects 0 (every core) or more, got '",
                                      threads, "'"));
  Outcome out;
  {
    py::gil_scoped_release release;
    whatif::AdviseOptions options;
    options.spec = spec;
    options.threads = threads;
    absl::StatusOr<whatif::Advice> a = whatif::Advise(*t.loaded, options);
    if (a.ok()) {
      out.json = whatif::AdviceJson(*a, top);
    } else {
      out.status = a.status();
    }
  }
  return out.Get();
}

// `reverie scripts [NAME] [--trace T] --json`.
std::string Scripts(const std::string& name, const std::optional<Trace>& trace,
                    const whatif::ScriptSpec& spec) {
  Outcome out;
  {
    py::gil_scoped_release release;
    std::vector<whatif::ScriptInfo> scripts;
    if (name.empty()) {
      scripts = whatif::DescribeLibrary(spec);
    } else if (absl::StatusOr<whatif::ScriptInfo> one = whatif::DescribeScript(name, spec);
               one.ok()) {
      scripts.push_back(*std::move(one));
    } else {
      out.status = one.status();
    }
    if (out.status.ok()) {
      std::vector<whatif::TrialResult> tried;
      if (trace.has_value()) tried = whatif::TryEachScript(*trace->loaded, scripts, spec);
      out.json = whatif::ScriptsJson(scripts, trace.has_value() ? trace->path() : "", tried);
    }
  }
  return out.Get();
}

// The tasks on one step's critical path in the baseline simulation, in time
// order (depgraph/critical_path.h), with the path's own summary: what a
// reader follows to see what bounds the step. No CLI command lists them.
std::string CriticalPathTasks(const Trace& t, int step) {
  const depgraph::Graph& g = t.loaded->graph;
  const depgraph::SimResult& sim = t.loaded->baseline;
  std::vector<depgraph::CriticalPath> paths;
  {
    py::gil_scoped_release release;
    paths = depgraph::CriticalPaths(g, sim);
  }
  if (step < 0 || static_cast<size_t>(step) >= paths.size()) {
    Raise(absl::StrCat(t.path(), ": no step ", step, " (the trace has ", paths.size(), ")"));
  }
  const depgraph::CriticalPath& p = paths[step];
  const int64_t origin = sim.steps[step].start_ns;
  JsonWriter w(0);
  w.BeginObject().Field("step", p.name).Field("length_us", p.length_ns / 1e3);
  w.Field("verdict", depgraph::BoundName(p.verdict));
  w.Key("tasks").BeginArray();
  for (const depgraph::TaskId id : p.tasks) {
    const depgraph::LayerId layer = g.layer_of(id);
    w.BeginObject().Field("name", g.name(id)).Field("kind", depgraph::TaskKindName(g.kind(id)));
    w.Field("resource", g.resource(g.resource_of(id)).name);
    w.Field("phase", depgraph::PhaseName(g.phase(id)));
    w.Field("layer", layer.valid() ? std::string_view(g.layer(layer).path) : std::string_view());
    w.Field("start_us", (sim.start_ns[id.value()] - origin) / 1e3);
    w.Field("duration_us", (sim.end_ns[id.value()] - sim.start_ns[id.value()]) / 1e3);
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.str();
}

}  // namespace
}  // namespace reverie::python

PYBIND11_MODULE(_reverie, m) {
  using namespace reverie::python;  // NOLINT: the module's own functions
  namespace py = pybind11;
  m.doc() = "Native half of the reverie package; use `import reverie` (docs/PYTHON.md).";
  // One reference is kept for the life of the process.
  g_error = PyErr_NewExceptionWithDoc(
      "reverie.Error",
      "A trace, script or argument reverie cannot use, with the one-line message the CLI "
      "prints. `traceback` holds a failing Lua script's traceback, else None.",
      PyExc_Exception, nullptr);
  if (g_error == nullptr) throw py::error_already_set();
  py::handle(g_error).attr("traceback") = py::none();
  m.attr("Error") = py::handle(g_error);

  py::class_<reverie::whatif::ScriptSpec>(m, "ScriptSpec")
      .def(py::init(&MakeSpec), py::arg("scripts"), py::arg("sources"), py::arg("settings"),
           py::arg("lua_budget"), py::arg("lua_memory_mb"),
           // Only True or False: pybind11 would take None or 0 as False,
           // which opens the sandbox (issue 29, D26).
           py::arg("sandbox").noconvert(), py::arg("script_dirs"))
      .def_readonly("scripts", &reverie::whatif::ScriptSpec::scripts)
      .def_readonly("settings", &reverie::whatif::ScriptSpec::settings);

  py::class_<Trace>(m, "Trace")
      .def_property_readonly("path", &Trace::path)
      .def_readonly("cpu_model", &Trace::cpu_model)
      .def("info_json", &Info)
      .def("replay_json", &Replay, py::arg("critical_path"))
      .def("predict_json", &Predict, py::arg("spec"), py::arg("top"))
      .def("sweep_json", &Sweep, py::arg("spec"), py::arg("grid"))
      .def("validate_json", &Validate, py::arg("after"), py::arg("spec"), py::arg("top"))
      .def("critical_path_json", &CriticalPathTasks, py::arg("step"))
      .def("advise_json", &Advise, py::arg("spec"), py::arg("top"), py::arg("threads"));

  m.def("load", &Load, py::arg("path"), py::arg("cpu_model"));
  m.def("ranks_json", &Ranks, py::arg("traces"), py::arg("spec"));
  m.def("scripts_json", &Scripts, py::arg("name"), py::arg("trace"), py::arg("spec"));
}
