#include "whatif/several.h"

#include <exception>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/parallel.h"
#include "base/status_macros.h"
#include "base/text.h"

namespace reverie::whatif {

absl::StatusOr<std::vector<NamedPrediction>> PredictEachAndAll(const LoadedTrace& base,
                                                               const ScriptSpec& spec,
                                                               int threads) {
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
  // The runs share the loaded trace read-only (pipeline.h), each on its own
  // copy of the graph, one per core; the first failure in run order is the
  // error, as a loop would give it.
  std::vector<absl::Status> status(out.size());
  ParallelFor(out.size(), threads, [&](size_t i) {
    ScriptSpec one = spec;
    one.scripts = out[i].scripts;
    one.settings_for_several_runs = true;
    try {
      absl::StatusOr<Prediction> p = Predict(base, one);
      if (p.ok()) {
        out[i].prediction = *std::move(p);
      } else {
        status[i] = p.status();
      }
    } catch (const std::exception& e) {  // must not leave the worker thread
      status[i] = absl::InternalError(FirstLine(std::string("internal error: ") + e.what()));
    }
  });
  std::set<std::string> used;
  for (size_t i = 0; i < out.size(); ++i) {
    REVERIE_RETURN_IF_ERROR(status[i]);
    used.insert(out[i].prediction.used_settings.begin(), out[i].prediction.used_settings.end());
  }
  for (const auto& [key, value] : spec.settings) {
    if (used.count(key)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown parameter '", key, "': not declared by ", absl::StrJoin(names, ", ")));
  }
  return out;
}

}  // namespace reverie::whatif
