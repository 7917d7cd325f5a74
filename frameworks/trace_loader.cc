#include "frameworks/trace_loader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>

#include "base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_importer.h"
#include "proto/trace_io.h"
#include "proto/trace_validate.h"

namespace reverie {
namespace {

// First bytes of the file, or an error naming it. Only regular files are
// opened for reading (a FIFO would block in open() or read()).
absl::StatusOr<std::string> Sniff(const std::string& path) {
  REVERIE_ASSIGN_OR_RETURN(int fd, kineto::OpenRegularFile(path));
  std::string head(64, '\0');
  ssize_t n;
  do {
    n = ::read(fd, head.data(), head.size());
  } while (n < 0 && errno == EINTR);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    return absl::DataLossError(absl::StrCat(path, ": read failed: ", std::strerror(read_errno)));
  }
  head.resize(static_cast<size_t>(n));
  return head;
}

// The trace in `path`, parsed by whichever reader its first bytes call for.
absl::StatusOr<Trace> LoadUnchecked(const std::string& path, const ImportOptions& options) {
  REVERIE_ASSIGN_OR_RETURN(std::string head, Sniff(path));
  if (head.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  if (LooksLikeReverieTrace(head)) return ReadTrace(path);
  if (kineto::LooksLikeGzip(head)) return ImportKinetoJson(path, options);
  // JSON starts with optional whitespace (or a UTF-8 byte-order mark).
  std::string_view text = head;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": starts with a UTF-8 byte-order mark, which JSON does not allow; "
                           "remove it (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//')"));
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    if (text.size() < 64) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file (only whitespace)"));
    return ImportKinetoJson(path, options);  // long leading whitespace: let the parser decide
  }
  const char c = text[first];
  if (c == '{' || c == '[') return ImportKinetoJson(path, options);
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unrecognised content (not a reverie .pb trace, not JSON, not gzip)"));
}

}  // namespace

absl::StatusOr<Trace> LoadTraceFile(const std::string& path, const ImportOptions& options) {
  // No exception leaves this module: a trace too large for the memory
  // available becomes an error that names the file.
  try {
    absl::StatusOr<Trace> trace = LoadUnchecked(path, options);
    // Every trace is held to the same rules, whoever wrote it (idempotent:
    // the .pb reader has checked already).
    if (trace.ok()) ValidateTrace(&*trace);
    return trace;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": out of memory while loading the trace (it is too large for the "
                           "memory available to reverie)"));
  }
}

}  // namespace reverie
