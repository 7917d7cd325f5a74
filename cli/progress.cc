#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace reverie::cli {

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, int total)
    : label_(std::move(label)), total_(total), enabled_(StderrIsTerminal()) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\n");
}

void Progress::Update(int done, const std::string& detail) {
  if (!enabled_) return;
  shown_ = true;
  // \r + clear-to-end-of-line rewrites one status line in place.
  if (total_ > 0) {
    std::fprintf(stderr, "\r\033[K%s %d/%d %s", label_.c_str(), done, total_, detail.c_str());
  } else {
    std::fprintf(stderr, "\r\033[K%s %d %s", label_.c_str(), done, detail.c_str());
  }
  std::fflush(stderr);
}

}  // namespace reverie::cli
