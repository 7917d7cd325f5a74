// File: tests/import/import_test_util.h
//
// Helpers for the importer tests: write a small Kineto JSON document to the
// test's temp folder and import it.
#ifndef REVERIE_TESTS_IMPORT_IMPORT_TEST_UTIL_H_
#define REVERIE_TESTS_IMPORT_IMPORT_TEST_UTIL_H_

#include <zlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_importer.h"
#include "frameworks/kineto/kineto_parser.h"
#include "gtest/gtest.h"
#include "proto/trace.h"

namespace reverie::testing {

// A file in the test temp dir named after the running test, holding `text`.
inline std::string WriteTempFile(std::string_view text, std::string_view suffix = ".json") {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = ::testing::TempDir() + "/reverie_import_" + info->test_suite_name() + "_" +
                     info->name() + std::string(suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return path;
}

// {"schemaVersion": 1, <top>, "traceEvents": [<events>]}
inline std::string KinetoDoc(std::string_view events, std::string_view top = "") {
  std::string doc = "{\"schemaVersion\": 1, ";
  if (!top.empty()) doc += std::string(top) + ", ";
  doc += "\"traceEvents\": [" + std::string(events) + "]}";
  return doc;
}

// Imports `events` (a comma-separated list of event objects) through a file.
inline Trace ImportEvents(std::string_view events, std::string_view top = "") {
  absl::StatusOr<Trace> t = ImportKinetoJson(WriteTempFile(KinetoDoc(events, top)));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string Str(const Trace& t, uint32_t sid) { return std::string(t.String(sid)); }

// Everything the importer produced except the file name it came from.
inline std::string Content(const Trace& t) {
  proto::TraceHeader header = t.header();
  header.clear_source_path();
  return DeterministicBytes(header, t.events());
}

// `input` through ParseKinetoJson and Finish with a chunk size and a thread count: the
// Trace's Content, or "error: " and the message.
inline std::string ParsedContent(absl::StatusOr<kineto::JsonInput> input, size_t chunk_bytes,
                                 int threads = 1) {
  if (!input.ok()) return "error: " + std::string(input.status().message());
  kineto::KinetoTraceBuilder builder("doc.json");
  const absl::Status s =
      kineto::ParseKinetoJson(*input, "doc.json", &builder, chunk_bytes, threads);
  if (!s.ok()) return "error: " + std::string(s.message());
  return Content(builder.Finish(threads));
}

// One gzip member holding `text` (zlib level 6 unless told).
inline std::string Gzip(std::string_view text, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace reverie::testing

#endif  // REVERIE_TESTS_IMPORT_IMPORT_TEST_UTIL_H_
