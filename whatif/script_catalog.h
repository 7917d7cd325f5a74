// File: whatif/script_catalog.h
//
// The script library as users read it (`reverie scripts`, Python's
// reverie.scripts(), advise's "ignores" column): each script's one-line
// summary, preconditions and what it ignores, from its header comment, and
// its parameters with docs, defaults and bounds, read in the Lua engine's
// describe mode (lua::DescribeScript: no trace, nothing run past
// reverie.params). With a trace, each script run alone with its defaults
// (whatif/trials.h): whether it applies, and why not.
//
// The header convention (docs/LUA_API.md, "The script library"): the first
// line is "-- name.lua: summary"; a paragraph starting "-- Preconditions:"
// (or "-- Preconditions (graph:facts().precision):": a parenthesis may
// come before the colon) says what the trace must (not) already do; one
// starting "-- Ignores:" or "-- What it ignores:" (or a sentence
// "Ignores ..." inside one) says what the model leaves out. A paragraph ends at a bare "--" line, at the next
// such label, or where the header ends (the first line that is not a
// comment).
#ifndef REVERIE_WHATIF_SCRIPT_CATALOG_H_
#define REVERIE_WHATIF_SCRIPT_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/json_writer.h"
#include "lua/lua_engine.h"
#include "whatif/pipeline.h"
#include "whatif/trials.h"

namespace reverie::whatif {

struct ScriptHeader {
  std::string summary;        // "Automatic Mixed Precision, ..." ("" when absent)
  std::string preconditions;  // the paragraph without its label, one line
  std::string ignores;        // likewise ("" when the header says nothing)
  std::string memory;         // what it does to memory ("Memory:"), likewise
};
ScriptHeader ParseScriptHeader(std::string_view text);
// The header of a script found by name or path in `dirs`; empty when it
// cannot be found or read.
ScriptHeader ReadScriptHeader(const std::string& name, const std::vector<std::string>& dirs);

struct ScriptInfo {
  std::string name;  // "amp.lua"
  std::string path;
  ScriptHeader header;
  std::vector<lua::ParamValue> params;  // sorted by name
  // Non-empty when the parameters could not be read (the script's error).
  std::string describe_error;
};

// The library's scripts by file name (the top-level *.lua of each folder in
// `dirs`, the first folder holding a name wins; lib/ holds helpers), sorted.
std::vector<std::string> LibraryScriptNames(const std::vector<std::string>& dirs);

// One script (a path or a library name), described. kNotFound when it does
// not exist; a script whose parameters cannot be read is described with
// describe_error set.
absl::StatusOr<ScriptInfo> DescribeScript(const std::string& name, const ScriptSpec& spec);

// Every library script (LibraryScriptNames(spec.script_dirs)).
std::vector<ScriptInfo> DescribeLibrary(const ScriptSpec& spec);

// Each script run alone with its defaults (and spec.settings where a script
// declares them) on `base`, on all cores; in the order of `scripts`.
std::vector<TrialResult> TryEachScript(const LoadedTrace& base,
                                       const std::vector<ScriptInfo>& scripts,
                                       const ScriptSpec& spec, int threads = 0);

// "applies: 1.497x (177.6 -> 118.6 ms per step)", "nothing to change: ...",
// "refused: ...", "fails: ...".
std::string TrialVerdict(const TrialResult& r);

// `reverie scripts --json`: {"trace": ... (with a trace), "scripts": [...]};
// `tried` is empty or one result per script.
std::string ScriptsJson(const std::vector<ScriptInfo>& scripts, const std::string& trace_path,
                        const std::vector<TrialResult>& tried);

// A parameter's bounds in words: "integer >= 1", "in [0, 1]", "".
std::string BoundsText(const lua::ParamValue& p);

// The result's fields under an open JSON object (shared with advise):
// the same keys whatever the outcome, null where a run that failed or
// refused has no figure.
void WriteTrialFields(JsonWriter& w, const TrialResult& r);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_SCRIPT_CATALOG_H_
