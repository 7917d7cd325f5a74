// File: cli/load.h
//
// The commands' way into the what-if pipeline (whatif/pipeline.h): loading
// with the terminal progress line on stderr.
#ifndef REVERIE_CLI_LOAD_H_
#define REVERIE_CLI_LOAD_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/builder.h"
#include "cli/progress.h"
#include "whatif/pipeline.h"

namespace reverie::cli {

// `o`, reporting each stage on `progress`.
inline whatif::LoadOptions ShowingProgress(Progress* progress, whatif::LoadOptions o) {
  o.progress = [progress](int stage, std::string_view what) {
    progress->Update(stage, std::string(what));
  };
  return o;
}

inline whatif::LoadOptions Building(const depgraph::BuildOptions& build) {
  whatif::LoadOptions o;
  o.build = build;
  return o;
}

inline absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> LoadForCli(
    const std::string& path, const whatif::LoadOptions& options) {
  Progress progress("reverie", 3);
  return whatif::LoadAndSimulate(path, ShowingProgress(&progress, options));
}

inline absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> LoadForCli(
    const std::string& path, const depgraph::BuildOptions& build = {}) {
  return LoadForCli(path, Building(build));
}

// Several traces loaded at once (the ranks of a job, BEFORE and AFTER), in
// the order given, with one progress line.
inline absl::StatusOr<std::vector<std::unique_ptr<whatif::LoadedTrace>>> LoadAllForCli(
    const std::vector<std::string>& paths, const depgraph::BuildOptions& build = {}) {
  Progress progress("reverie", 3);
  return whatif::LoadAndSimulateAll(paths, ShowingProgress(&progress, Building(build)));
}

// Pointers to what LoadAllForCli loaded, for the job functions.
inline std::vector<const whatif::LoadedTrace*> Pointers(
    const std::vector<std::unique_ptr<whatif::LoadedTrace>>& loaded) {
  std::vector<const whatif::LoadedTrace*> out;
  for (const auto& l : loaded) out.push_back(l.get());
  return out;
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_LOAD_H_
