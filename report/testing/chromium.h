// File: report/testing/chromium.h
//
// Renders an HTML file to a PNG with headless Chromium (Debian package
// `chromium`), or says why it cannot.
#ifndef REVERIE_REPORT_TESTING_CHROMIUM_H_
#define REVERIE_REPORT_TESTING_CHROMIUM_H_

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/testing/cli_runner.h"

namespace reverie::testing {

// Path of a Chromium binary, "" when none is installed.
inline std::string FindChromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome",
                        "/usr/bin/google-chrome-stable"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

// Screenshots `html_path` into `png_path`; returns the exit status.
inline int RenderWithChromium(const std::string& chromium, const std::string& html_path,
                              const std::string& png_path, const std::string& scratch) {
  const std::string profile = scratch + "/chromium-profile";
  std::filesystem::create_directories(profile);
  const std::string cmd =
      ShellQuote(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --user-data-dir=" +
      ShellQuote(profile) + " --screenshot=" + ShellQuote(png_path) + " --window-size=1280,2000 " +
      ShellQuote("file://" + html_path) + " >" + ShellQuote(scratch + "/chromium.log") +
      " 2>&1 </dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace reverie::testing

#endif  // REVERIE_REPORT_TESTING_CHROMIUM_H_
