#include "whatif/several.h"

#include <filesystem>
#include <set>
#include <utility>

#include "base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reverie::whatif {

absl::StatusOr<std::vector<NamedPrediction>> PredictEachAndAll(const LoadedTrace& base,
                                                               const ScriptSpec& spec) {
  // Scripts are shown by file name: paths make unreadable labels.
  std::vector<std::string> names;
  std::set<std::string> stems;
  std::vector<NamedPrediction> out;
  for (const std::string& s : spec.scripts) {
    names.push_back(std::filesystem::path(s).filename().string());
    stems.insert(std::filesystem::path(s).stem().string());
    out.push_back({names.back(), {s}, {}});
  }
  if (spec.scripts.size() > 1) out.push_back({absl::StrJoin(names, " + "), spec.scripts, {}});
  for (const auto& [key, value] : spec.settings) {
    const size_t dot = key.find('.');
    if (dot != std::string::npos && !stems.count(key.substr(0, dot))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set ", key, ": no script '", key.substr(0, dot), "' in this run"));
    }
  }
  std::set<std::string> used;
  for (NamedPrediction& run : out) {
    ScriptSpec one = spec;
    one.scripts = run.scripts;
    one.settings_for_several_runs = true;
    REVERIE_ASSIGN_OR_RETURN(Prediction p, Predict(base, one));
    used.insert(p.used_settings.begin(), p.used_settings.end());
    run.prediction = std::move(p);
  }
  for (const auto& [key, value] : spec.settings) {
    if (used.count(key)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown parameter '", key, "': not declared by ", absl::StrJoin(names, ", ")));
  }
  return out;
}

}  // namespace reverie::whatif
