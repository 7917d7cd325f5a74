// File: report/testing/devtools.h
//
// Drives headless Chromium (Debian package `chromium`) through the DevTools
// protocol for browser tests and benchmarks of the HTML report: open a page,
// evaluate JavaScript in it, send real mouse and wheel input.
//
// Transport: --remote-debugging-pipe, the protocol on file descriptors 3
// (commands to the browser) and 4 (replies and events), one JSON message per
// NUL-terminated chunk; no port, no WebSocket, nothing but the browser. The
// browser runs with a fresh profile and no network-facing services.
//
// Not thread-safe; one page at a time (the one OpenPage attached to).
#ifndef REVERIE_REPORT_TESTING_DEVTOOLS_H_
#define REVERIE_REPORT_TESTING_DEVTOOLS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "report/json.h"
#include "simdjson.h"

namespace reverie::testing {

class DevTools {
 public:
  // Starts `chromium`; its profile and log go under `scratch` (created).
  static absl::StatusOr<std::unique_ptr<DevTools>> Launch(const std::string& chromium,
                                                          const std::string& scratch) {
    std::filesystem::create_directories(scratch + "/profile");
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
      return absl::InternalError("pipe failed");
    }
    signal(SIGPIPE, SIG_IGN);  // a browser that died must fail a call, not kill the test
    const std::string profile = "--user-data-dir=" + scratch + "/profile";
    const std::string log = scratch + "/chromium.log";
    std::vector<std::string> args = {chromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--disable-dev-shm-usage",
                                     "--disable-background-networking",
                                     "--disable-component-update",
                                     "--disable-sync",
                                     "--disable-quic",
                                     "--no-first-run",
                                     "--hide-scrollbars",
                                     "--remote-debugging-pipe",
                                     "--window-size=1280,900",
                                     profile,
                                     "about:blank"};
    const pid_t pid = fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      // fds 3 and 4 may be the pipe ends themselves: move them out first.
      const int in = fcntl(to[0], F_DUPFD_CLOEXEC, 10), out = fcntl(from[1], F_DUPFD_CLOEXEC, 10);
      const int null = open("/dev/null", O_RDONLY);
      const int logfd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || null < 0 || logfd < 0 || dup2(null, 0) < 0 || dup2(logfd, 1) < 0 ||
          dup2(logfd, 2) < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0) {
        _exit(126);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(chromium.c_str(), argv.data());
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    return std::unique_ptr<DevTools>(new DevTools(pid, to[1], from[0], log));
  }

  ~DevTools() {
    (void)Call("Browser.close", "{}", /*to_page=*/false, /*timeout_ms=*/3000);
    close(write_fd_);
    close(read_fd_);
    for (int i = 0; i < 100; ++i) {  // up to 5 s to exit on its own
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  const std::string& log_path() const { return log_; }

  // Sends `method` with `params` (a JSON object) to the browser or to the
  // attached page; returns the reply's "result" as JSON text.
  absl::StatusOr<std::string> Call(const std::string& method, const std::string& params,
                                   bool to_page = true, int timeout_ms = 30000) {
    const int64_t id = ++last_id_;
    std::string msg =
        absl::StrCat("{\"id\":", id, ",\"method\":\"", method, "\",\"params\":", params);
    if (to_page && !session_.empty()) absl::StrAppend(&msg, ",\"sessionId\":\"", session_, "\"");
    msg += "}";
    msg.push_back('\0');
    for (size_t done = 0; done < msg.size();) {
      const ssize_t n = write(write_fd_, msg.data() + done, msg.size() - done);
      if (n <= 0) return absl::UnavailableError(absl::StrCat(method, ": browser pipe closed"));
      done += static_cast<size_t>(n);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      absl::StatusOr<std::string> m = ReadMessage(deadline);
      if (!m.ok())
        return absl::Status(m.status().code(), absl::StrCat(method, ": ", m.status().message()));
      simdjson::dom::element reply;
      if (parser_.parse(*m).get(reply) != simdjson::SUCCESS) continue;
      int64_t got = 0;
      if (reply["id"].get_int64().get(got) != simdjson::SUCCESS || got != id) continue;  // an event
      simdjson::dom::element error;
      if (reply["error"].get(error) == simdjson::SUCCESS) {
        return absl::InternalError(absl::StrCat(method, ": ", simdjson::minify(error)));
      }
      return std::string(simdjson::minify(reply["result"]));
    }
  }

  // Opens `url` in a new page of `width` x `height` CSS pixels, attaches to
  // it and waits until it has loaded.
  absl::Status OpenPage(const std::string& url, int width, int height) {
    absl::StatusOr<std::string> target =
        Call("Target.createTarget", "{\"url\":\"about:blank\"}", false);
    if (!target.ok()) return target.status();
    REVERIE_ASSIGN_OR_RETURN(std::string id, StringField(*target, "targetId"));
    absl::StatusOr<std::string> attached =
        Call("Target.attachToTarget", absl::StrCat("{\"targetId\":\"", id, "\",\"flatten\":true}"),
             false);
    if (!attached.ok()) return attached.status();
    REVERIE_ASSIGN_OR_RETURN(std::string session, StringField(*attached, "sessionId"));
    session_ = session;
    if (absl::StatusOr<std::string> r =
            Call("Emulation.setDeviceMetricsOverride",
                 absl::StrCat("{\"width\":", width, ",\"height\":", height,
                              ",\"deviceScaleFactor\":1,\"mobile\":false}"));
        !r.ok()) {
      return r.status();
    }
    if (absl::StatusOr<std::string> r =
            Call("Page.navigate", absl::StrCat("{\"url\":", report::JsonString(url), "}"));
        !r.ok()) {
      return r.status();
    }
    for (int i = 0; i < 400; ++i) {
      absl::StatusOr<std::string> state = Evaluate("document.readyState");
      if (state.ok() && *state == "\"complete\"") return absl::OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return absl::DeadlineExceededError(absl::StrCat(url, " did not finish loading in 20 s"));
  }

  // Evaluates `expression` in the page (awaiting it when it is a promise)
  // and returns its value as JSON text; a thrown exception is an error.
  absl::StatusOr<std::string> Evaluate(const std::string& expression, int timeout_ms = 30000) {
    const std::string wrapped =
        absl::StrCat("Promise.resolve(", expression, ").then((v) => JSON.stringify(v))");
    absl::StatusOr<std::string> r =
        Call("Runtime.evaluate",
             absl::StrCat("{\"expression\":", report::JsonString(wrapped),
                          ",\"awaitPromise\":true,\"returnByValue\":true}"),
             true, timeout_ms);
    if (!r.ok()) return r.status();
    simdjson::dom::element e;
    if (parser_.parse(*r).get(e) != simdjson::SUCCESS) return absl::InternalError("bad reply");
    simdjson::dom::element ex;
    if (e["exceptionDetails"].get(ex) == simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("exception in `", expression, "`: ", simdjson::minify(ex)));
    }
    std::string_view value;
    if (e["result"]["value"].get_string().get(value) != simdjson::SUCCESS)
      return std::string("null");
    return std::string(value);
  }

  // Writes a PNG of the page's viewport to `path`.
  absl::Status Screenshot(const std::string& path) {
    absl::StatusOr<std::string> r = Call("Page.captureScreenshot", "{\"format\":\"png\"}");
    if (!r.ok()) return r.status();
    REVERIE_ASSIGN_OR_RETURN(std::string data, StringField(*r, "data"));
    std::string png;
    if (!absl::Base64Unescape(data, &png)) return absl::InternalError("bad base64 screenshot");
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << png;
    return f ? absl::OkStatus() : absl::PermissionDeniedError(path + ": cannot write");
  }

  // One mouse event (Input.dispatchMouseEvent) at page coordinates; `extra`
  // adds fields, e.g. "\"button\":\"left\",\"buttons\":1".
  absl::Status Mouse(const std::string& type, double x, double y, const std::string& extra = "") {
    absl::StatusOr<std::string> r = Call(
        "Input.dispatchMouseEvent", absl::StrCat("{\"type\":\"", type, "\",\"x\":", x, ",\"y\":", y,
                                                 extra.empty() ? "" : ",", extra, "}"));
    return r.ok() ? absl::OkStatus() : r.status();
  }

 private:
  DevTools(pid_t pid, int write_fd, int read_fd, std::string log)
      : pid_(pid), write_fd_(write_fd), read_fd_(read_fd), log_(std::move(log)) {}

  absl::StatusOr<std::string> ReadMessage(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (const size_t nul = buffer_.find('\0'); nul != std::string::npos) {
        std::string m = buffer_.substr(0, nul);
        buffer_.erase(0, nul + 1);
        return m;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return absl::DeadlineExceededError("no reply from the browser");
      pollfd p{read_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[65536];
      const ssize_t n = read(read_fd_, chunk, sizeof(chunk));
      if (n <= 0) return absl::UnavailableError("the browser closed its pipe (see its log)");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  absl::StatusOr<std::string> StringField(const std::string& json, const char* key) {
    simdjson::dom::element e;
    std::string_view v;
    if (parser_.parse(json).get(e) != simdjson::SUCCESS ||
        e[key].get_string().get(v) != simdjson::SUCCESS) {
      return absl::InternalError(absl::StrCat("no ", key, " in ", json));
    }
    return std::string(v);
  }

  pid_t pid_;
  int write_fd_, read_fd_;
  std::string log_;
  std::string buffer_;
  std::string session_;
  int64_t last_id_ = 0;
  simdjson::dom::parser parser_;
};

}  // namespace reverie::testing

#endif  // REVERIE_REPORT_TESTING_DEVTOOLS_H_
