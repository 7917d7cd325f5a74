// File: cli/load.h
//
// The commands' way into the what-if pipeline (whatif/pipeline.h): loading
// with the terminal progress line on stderr.
#ifndef REVERIE_CLI_LOAD_H_
#define REVERIE_CLI_LOAD_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "depgraph/builder.h"
#include "cli/progress.h"
#include "whatif/pipeline.h"

namespace reverie::cli {

inline absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> LoadForCli(
    const std::string& path, const depgraph::BuildOptions& build = {}) {
  Progress progress("reverie", 3);
  whatif::LoadOptions o;
  o.build = build;
  o.progress = [&progress](int stage, std::string_view what) {
    progress.Update(stage, std::string(what));
  };
  return whatif::LoadAndSimulate(path, o);
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_LOAD_H_
