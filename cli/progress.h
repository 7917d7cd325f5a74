// File: cli/progress.h
//
// Progress lines for long imports and sweeps, on stderr and only when stderr
// is a terminal: piped or redirected runs (and --json consumers of stdout)
// see nothing extra. A terminal's concern: only the CLI draws them (the
// libraries report progress through callbacks, whatif/sweep.h).
#ifndef REVERIE_CLI_PROGRESS_H_
#define REVERIE_CLI_PROGRESS_H_

#include <string>

namespace reverie::cli {

class Progress {
 public:
  // `total` <= 0: unknown, only the label and count are shown.
  Progress(std::string label, int total);
  ~Progress();  // finishes the line when something was shown
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Update(int done, const std::string& detail = "");
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  int total_;
  bool enabled_;
  bool shown_ = false;
};

// True when stderr is a terminal.
bool StderrIsTerminal();

}  // namespace reverie::cli

#endif  // REVERIE_CLI_PROGRESS_H_
