#include "lua/script_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/sv.h"

namespace reverie::lua {
namespace fs = std::filesystem;

std::vector<std::string> DefaultScriptDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("REVERIE_SCRIPTS_DIR"); env != nullptr && *env != '\0') {
    for (absl::string_view d : absl::StrSplit(env, ':', absl::SkipEmpty())) dirs.emplace_back(d);
  }
#ifdef REVERIE_SCRIPTS_SOURCE_DIR
  dirs.emplace_back(REVERIE_SCRIPTS_SOURCE_DIR);
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/reverie/scripts").string());
  return dirs;
}

absl::StatusOr<ResolvedScript> ResolveScript(const std::string& name,
                                             const std::vector<std::string>& dirs) {
  if (name.empty()) return absl::InvalidArgumentError("empty script name");
  ResolvedScript r;
  std::error_code ec;
  auto stem_of = [](const std::string& p) { return fs::path(p).stem().string(); };
  if (fs::is_regular_file(name, ec)) {
    // Lua cuts chunk names longer than LUA_IDSIZE from the left ("...dir/x.lua"):
    // name a long path by its file name instead.
    r.display_name = name.size() <= 50 ? name : fs::path(name).filename().string();
    r.path = name;
    r.stem = stem_of(name);
    return r;
  }
  std::vector<std::string> looked{name};
  if (name.find('/') == std::string::npos) {
    const std::string file = fs::path(name).has_extension() ? name : name + ".lua";
    for (const std::string& d : dirs) {
      const fs::path p = fs::path(d) / file;
      looked.push_back(p.string());
      if (fs::is_regular_file(p, ec)) {
        r.display_name = file;
        r.path = p.string();
        r.stem = stem_of(file);
        return r;
      }
    }
  }
  return absl::NotFoundError(
      absl::StrCat("script '", name, "' not found (looked at ", absl::StrJoin(looked, ", "),
                   "; set REVERIE_SCRIPTS_DIR to add a folder)"));
}

absl::StatusOr<std::pair<std::string, std::string>> ParseSetting(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set expects key=value (or script.key=value), got '", text, "'"));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

namespace {

absl::StatusOr<std::string> ReadText(const ResolvedScript& s) {
  if (s.source.has_value()) return *s.source;
  std::ifstream in(s.path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(s.display_name, ": cannot read ", s.path));
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(s.display_name, ": read error"));
  return os.str();
}

}  // namespace

absl::StatusOr<ScriptDescription> DescribeScript(const std::string& name_or_path,
                                                 const EngineLimits& limits,
                                                 const std::vector<std::string>& dirs) {
  ScriptDescription d;
  REVERIE_ASSIGN_OR_RETURN(d.script, ResolveScript(name_or_path, dirs));
  REVERIE_ASSIGN_OR_RETURN(d.text, ReadText(d.script));
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<LuaEngine> engine, LuaEngine::Create(limits));
  const depgraph::Graph empty;
  const depgraph::ModelInfo no_model;
  ScriptContext ctx;
  ctx.display_name = d.script.display_name;
  ctx.stem = d.script.stem;
  ctx.model = &no_model;
  ctx.include_dirs = dirs;
  ctx.describe = true;
  transforms::EditSession session(empty);
  REVERIE_RETURN_IF_ERROR(engine->Run(d.text, ctx, &session));
  d.params = engine->params();
  d.described = engine->described();
  return d;
}

ScriptRunner::ScriptRunner(RunnerOptions options) : options_(std::move(options)) {}

// Policies refer into the engines: drop them first.
ScriptRunner::~ScriptRunner() { schedule_ = {}; }

absl::Status ScriptRunner::Run(const std::vector<std::string>& scripts,
                               const depgraph::ModelInfo& model, depgraph::Graph* graph) {
  return Run(scripts, model, *graph, graph);
}

absl::Status ScriptRunner::Run(const std::vector<std::string>& scripts,
                               const depgraph::ModelInfo& model, const depgraph::Graph& input,
                               depgraph::Graph* result) {
  changed_ = false;
  std::map<std::string, std::string> overrides;
  for (const auto& [k, v] : options_.settings) overrides[k] = v;
  std::vector<ResolvedScript> resolved;
  for (const std::string& s : scripts) {
    auto given = std::find_if(options_.sources.begin(), options_.sources.end(),
                              [&s](const auto& named) { return named.first == s; });
    if (given != options_.sources.end()) {
      resolved.push_back({s, "", fs::path(s).stem().string(), given->second});
      continue;
    }
    REVERIE_ASSIGN_OR_RETURN(ResolvedScript r, ResolveScript(s, options_.script_dirs));
    resolved.push_back(std::move(r));
  }
  // Qualified keys must name a script of this run.
  std::set<std::string> stems;
  for (const ResolvedScript& r : resolved) stems.insert(r.stem);
  for (const auto& [key, value] : overrides) {
    const size_t dot = key.find('.');
    if (dot != std::string::npos && !stems.count(key.substr(0, dot)) &&
        !options_.settings_for_several_runs) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--set ", key, ": no script '", key.substr(0, dot), "' in this run"));
    }
  }

  // Each script edits a copy of the previous result (EditSession); the
  // caller's graph is only read until everything succeeded.
  depgraph::Graph working;
  const depgraph::Graph* current = &input;
  transforms::ScheduleChoice schedule = schedule_;
  std::vector<ScriptReport> reports;
  std::set<std::string> used;
  std::vector<std::unique_ptr<LuaEngine>> engines;
  for (const ResolvedScript& script : resolved) {
    REVERIE_ASSIGN_OR_RETURN(std::string text, ReadText(script));
    REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<LuaEngine> engine, LuaEngine::Create(options_.limits));
    ScriptContext ctx;
    ctx.display_name = script.display_name;
    ctx.stem = script.stem;
    ctx.overrides = &overrides;
    ctx.only_script = resolved.size() == 1 && !options_.settings_for_several_runs;
    ctx.model = &model;
    ctx.measured = options_.measured != nullptr ? options_.measured : &input;
    ctx.step_frame = options_.step_frame;
    for (const std::string& d : options_.script_dirs) ctx.include_dirs.push_back(d);
    if (options_.log_sink) {
      ctx.log_sink = [this, name = script.display_name](std::string_view line) {
        options_.log_sink(absl::StrCat("[", name, "] ", Sv(line)));
      };
    }
    transforms::EditSession session(*current, schedule);
    REVERIE_RETURN_IF_ERROR(engine->Run(text, ctx, &session));
    ScriptReport report;
    report.script = script;
    report.outcome = engine->outcome();
    report.outcome_reason = engine->outcome_reason();
    // Nothing to change: whatever it edited before saying so is dropped.
    if (report.outcome != ScriptOutcome::kUnchanged) {
      if (absl::Status s = session.Commit(&working, &report.changes); !s.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat(script.display_name, ": the transformed graph is invalid: ", s.message()));
      }
      current = &working;
      schedule = session.schedule();
    }
    report.params = engine->params();
    report.log = engine->log();
    report.work_factor = engine->work_factor();
    report.runs_on = engine->runs_on();
    report.samples_per_step = engine->samples_per_step();
    report.policy = schedule.description;
    for (const std::string& k : engine->used_override_keys()) used.insert(k);
    reports.push_back(std::move(report));
    engines.push_back(std::move(engine));
  }
  for (const auto& [key, value] : overrides) {
    if (used.count(key) || options_.settings_for_several_runs) continue;
    std::vector<std::string> names;
    for (const ResolvedScript& r : resolved) names.push_back(r.display_name);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown parameter '", key, "': not declared by ", absl::StrJoin(names, ", ")));
  }
  used_settings_ = std::move(used);
  for (auto& e : engines) engines_.push_back(std::move(e));
  for (auto& r : reports) reports_.push_back(std::move(r));
  // No script, or none changed anything (nothing to change).
  if (current == &input) return absl::OkStatus();
  total_ = transforms::Diff(input, working);
  *result = std::move(working);
  changed_ = true;
  schedule_ = std::move(schedule);
  return absl::OkStatus();
}

absl::Status ScriptRunner::policy_status() const {
  for (const auto& e : engines_) {
    REVERIE_RETURN_IF_ERROR(e->policy_status());
  }
  return absl::OkStatus();
}

}  // namespace reverie::lua
