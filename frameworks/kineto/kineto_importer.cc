#include "frameworks/kineto/kineto_importer.h"

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_parser.h"

namespace reverie {
namespace {

absl::StatusOr<Trace> ImportInput(kineto::JsonInput input, const std::string& path,
                                  const ImportOptions& options) {
  if (input.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": empty file (no JSON inside the gzip)"));
  }
  kineto::KinetoTraceBuilder builder(path);
  const absl::Status parsed =
      kineto::ParseKinetoJson(input, path, &builder, kineto::kDefaultChunkBytes, options.threads);
  // A mapped file truncated or written meanwhile: what was parsed (and any
  // error it gave) is not the file's.
  REVERIE_RETURN_IF_ERROR(input.Check(path));
  REVERIE_RETURN_IF_ERROR(parsed);
  // The text is no longer referenced: free it before the post-processing
  // allocates, which lowers the peak memory of large imports.
  input.Release();
  return builder.Finish(options.threads);
}

}  // namespace

absl::StatusOr<Trace> ImportKinetoJson(const std::string& path, const ImportOptions& options) {
  REVERIE_ASSIGN_OR_RETURN(kineto::JsonInput input, kineto::ReadJsonInput(path));
  return ImportInput(std::move(input), path, options);
}

}  // namespace reverie
