// `reverie scripts [NAME] [--trace TRACE] [--json] [--lua-budget N]
// [--lua-memory-mb N] [--no-sandbox]`: the optimization scripts of the
// library (or NAME: one of them, or a script file), each with its one-line
// summary, its preconditions (what the trace must not already do), what its
// model ignores, and its parameters with docs, defaults and bounds, read
// without running it on a trace (whatif/script_catalog.h). With --trace,
// each script also runs alone with its defaults on TRACE (one loaded
// baseline, every run on its own copy, on all cores): whether it applies
// (its predicted speedup), finds nothing to change or refuses (and why), or
// fails (its one-line error).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/script_args.h"
#include "whatif/script_catalog.h"

namespace reverie::cli {
namespace {

struct Options {
  std::string name;
  std::string trace;
  bool json = false;
  ScriptArgs spec;
};

// `text` wrapped so that no line passes column `width`, the first line
// starting at column `first`, every other one indented by `indent` spaces.
std::string Wrap(const std::string& text, size_t first, size_t indent, size_t width) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t start = out.empty() ? first : indent;
    if (!line.empty() && start + line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, out.empty() ? "" : "\n" + std::string(indent, ' '), line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  absl::StrAppend(&out, out.empty() ? "" : "\n" + std::string(indent, ' '), line);
  return out;
}

void PrintScript(const whatif::ScriptInfo& s, const whatif::TrialResult* tried) {
  std::printf("%s: %s\n", s.name.c_str(),
              s.header.summary.empty() ? "(no summary line)" : s.header.summary.c_str());
  std::printf("  preconditions: %s\n",
              Wrap(s.header.preconditions.empty() ? "(not stated in its header)"
                                                  : s.header.preconditions,
                   17, 4, 100).c_str());
  if (!s.header.ignores.empty()) {
    std::printf("  ignores: %s\n", Wrap(s.header.ignores, 11, 4, 100).c_str());
  }
  if (!s.header.memory.empty()) {
    std::printf("  memory: %s\n", Wrap(s.header.memory, 10, 4, 100).c_str());
  }
  if (!s.describe_error.empty()) {
    std::printf("  parameters: cannot be read: %s\n", s.describe_error.c_str());
  } else if (s.params.empty()) {
    std::printf("  parameters: none\n");
  } else {
    std::printf("  parameters:\n");
    for (const lua::ParamValue& p : s.params) {
      const std::string value =
          p.type == "string" ? absl::StrCat("\"", p.default_text, "\"") : p.default_text;
      const std::string bounds = whatif::BoundsText(p);
      std::printf("    %-22s = %-10s %s\n", p.name.c_str(), value.c_str(),
                  Wrap(bounds.empty() ? p.doc : absl::StrCat("(", bounds, ") ", p.doc), 40, 40,
                       100)
                      .c_str());
    }
  }
  if (tried != nullptr) std::printf("  on this trace: %s\n", whatif::TrialVerdict(*tried).c_str());
}

absl::Status RunScripts(const Options& o) {
  std::vector<whatif::ScriptInfo> scripts;
  if (o.name.empty()) {
    scripts = whatif::DescribeLibrary(o.spec);
    if (scripts.empty()) {
      return absl::NotFoundError(absl::StrCat("no scripts found in ",
                                              absl::StrJoin(o.spec.script_dirs, ", ")));
    }
  } else {
    REVERIE_ASSIGN_OR_RETURN(whatif::ScriptInfo one, whatif::DescribeScript(o.name, o.spec));
    scripts.push_back(std::move(one));
  }
  std::vector<whatif::TrialResult> tried;
  if (!o.trace.empty()) {
    REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> loaded, LoadForCli(o.trace));
    tried = whatif::TryEachScript(*loaded, scripts, o.spec);
  }
  if (o.json) {
    std::printf("%s\n", whatif::ScriptsJson(scripts, o.trace, tried).c_str());
    return absl::OkStatus();
  }
  if (!o.trace.empty()) {
    std::printf("trace: %s (each script alone, with its defaults)\n\n", o.trace.c_str());
  }
  for (size_t i = 0; i < scripts.size(); ++i) {
    if (i > 0) std::printf("\n");
    PrintScript(scripts[i], i < tried.size() ? &tried[i] : nullptr);
  }
  return absl::OkStatus();
}

RunFn SetupScripts(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("NAME", o->name, "one script (a library name or a path); default: all")
      ->type_name("");
  AddPath(app, "--trace", &o->trace, "also run each script with its defaults on TRACE", "TRACE",
          "a trace");
  app.add_flag("--json", o->json, "machine-readable output");
  AddLuaLimitFlags(app, &o->spec);
  return [o] { return RunScripts(*o); };
}

}  // namespace

REVERIE_COMMAND(scripts, "scripts",
                "the optimization scripts: what each models, its preconditions and parameters",
                SetupScripts);

}  // namespace reverie::cli
