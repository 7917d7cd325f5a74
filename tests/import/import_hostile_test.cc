// Hostile inputs at the importer's door: decompression bombs, content after
// the JSON value, NUL bytes and malformed numbers, bytes after the gzip
// stream (issue 17: D8, D13). Each is refused with one line naming the file;
// none is silently accepted. Non-regular files (D15) are in import_cli_test.
#include <algorithm>
#include <cstring>
#include <string>

#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_importer.h"
#include "gtest/gtest.h"
#include "proto/trace_validate.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

constexpr char kHostileDoc[] =
    R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":2}]})J";

// kHostileDoc with `dur` written as `number`.
std::string WithDuration(const std::string& number) {
  const std::string doc = kHostileDoc;
  const size_t at = doc.find("\"dur\":2") + 6;
  return doc.substr(0, at) + number + doc.substr(at + 1);
}

// Imports `bytes` from a file and expects a refusal with `code` whose one
// line names the file and contains `what`.
void ExpectRefused(const std::string& bytes, absl::StatusCode code, const std::string& what,
                   std::string_view suffix = ".json") {
  const std::string path = testing::WriteTempFile(bytes, suffix);
  absl::StatusOr<Trace> t = ImportKinetoJson(path);
  ASSERT_FALSE(t.ok()) << "accepted: " << what;
  EXPECT_EQ(t.status().code(), code) << t.status();
  const std::string message(t.status().message());
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(Hostile, ContentAfterTheTopLevelValue) {
  const absl::StatusCode bad = absl::StatusCode::kInvalidArgument;
  ExpectRefused(std::string("{\"traceEvents\":[]}\n") + kHostileDoc, bad, "content after the top-level value, at byte 19");
  ExpectRefused(std::string(kHostileDoc) + " x", bad, "content after the top-level value");
  ExpectRefused(R"([{"ph": "X", "name": "a", "ts": 1, "dur": 1}] [])", bad, "content after the top-level value");
  ExpectRefused(std::string(kHostileDoc) + "}", bad, "content after the top-level value");
  // Whitespace after the value is fine.
  EXPECT_TRUE(ImportKinetoJson(testing::WriteTempFile(std::string(kHostileDoc) + " \n\t\r\n")).ok());
}

TEST(Hostile, NulBytesAndMalformedNumbers) {
  const absl::StatusCode bad = absl::StatusCode::kInvalidArgument;
  ExpectRefused(WithDuration(std::string("2\0" "0", 3)), bad, "a NUL byte");
  ExpectRefused(std::string("{\0", 2) + (kHostileDoc + 1), bad, "invalid JSON at byte 1: a NUL byte");
  for (const std::string number : {"12abc", "1.2.3", "--4", "1e", "0x10"}) {
    SCOPED_TRACE(number);
    ExpectRefused(WithDuration(number), bad, "malformed number");
  }
  // Valid JSON numbers out of int64 range are data anomalies, not errors.
  absl::StatusOr<Trace> t = ImportKinetoJson(testing::WriteTempFile(WithDuration("1e300")));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->GetCounter(TraceCounter::missing_field), 1);
}

TEST(Hostile, InvalidJsonInsideAnEventIsAnErrorNotAnEarlyEnd) {
  // On-Demand abandons the document at a structural error; a reader that
  // ignored it (say, in a kernel's "grid") saw the event array end there and
  // kept the events before it, silently dropping the rest.
  const std::string good = R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})";
  for (const std::string bad :
       {R"({"ph": "X", "cat": "kernel", "name": "k", "args": {"grid": [1, 2, ]}})",
        R"({"ph": "X", "cat": "kernel", "name": "k", "args": {"grid": [1 2]}})",
        R"({"ph": "X", "cat": "cpu_op", "name": "a\q", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
        R"({"ph": "X", "args": {"x": 1,, "y": 2}})", R"({"ph": "X", "args": [1}})"}) {
    SCOPED_TRACE(bad);
    for (const std::string& doc :
         {testing::KinetoDoc(good + "," + bad + "," + good), "[" + good + "," + bad + "," + good + "]"}) {
      ExpectRefused(doc, absl::StatusCode::kInvalidArgument, "invalid JSON");
    }
  }
  ExpectRefused(R"({"deviceProperties": [{"id": 0, "name": "A\q"}], "traceEvents": []})",
                absl::StatusCode::kInvalidArgument, "invalid JSON");
  // Brackets closed by the wrong kind, even in values nothing reads.
  ExpectRefused(testing::KinetoDoc(R"({"ph": "X", "args": {"Input Dims": [[1, 2}]}})"),
                absl::StatusCode::kInvalidArgument,
                "a closing bracket that does not match its opening one");
}

TEST(Hostile, BytesAfterTheGzipStream) {
  const std::string gz = testing::Gzip(kHostileDoc);
  ExpectRefused(gz + "GARBAGE", absl::StatusCode::kDataLoss, "are not gzip", ".json.gz");
  // A second member holding a second document: gzip(1) concatenates
  // members, and the second document is content after the first.
  ExpectRefused(gz + gz, absl::StatusCode::kInvalidArgument,
                "content after the top-level value, at byte " + std::to_string(sizeof(kHostileDoc) - 1) +
                    " of the decompressed text",
                ".json.gz");
  // Members that together hold one document, and zero padding, are fine.
  const std::string doc = kHostileDoc;
  const std::string split = testing::Gzip(doc.substr(0, 30)) + testing::Gzip(doc.substr(30));
  EXPECT_TRUE(ImportKinetoJson(testing::WriteTempFile(split, ".json.gz")).ok());
  EXPECT_TRUE(ImportKinetoJson(testing::WriteTempFile(gz + std::string(512, '\0'), ".json.gz")).ok());
}

TEST(Hostile, GzipBombIsRefusedBeforeItFillsMemory) {
  // Unit level: 4 MiB of spaces (~4 KiB compressed) against a 1 MiB limit.
  const std::string bomb = testing::Gzip("{\"traceEvents\":[" + std::string(4 << 20, ' ') + "]}", 9);
  absl::StatusOr<kineto::JsonInput> in = kineto::InflateGzip(bomb, "bomb.json.gz", 1 << 20);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(in.status().message().find("bomb.json.gz: refused as a likely gzip bomb"),
            std::string::npos) << in.status();
  ASSERT_TRUE(kineto::InflateGzip(bomb, "bomb.json.gz", 8 << 20).ok()) << "under the limit";
  // The default limit: past kMinInflateLimit, more than kMaxInflateRatio x.
  const std::string big = testing::Gzip(
      "{\"traceEvents\":[" + std::string(kineto::kMinInflateLimit + (8 << 20), ' ') + "]}", 1);
  ASSERT_LT(big.size() * kineto::kMaxInflateRatio, kineto::kMinInflateLimit);
  ExpectRefused(big, absl::StatusCode::kInvalidArgument, "refused as a likely gzip bomb",
                ".json.gz");
}

// Issue 29, D22: an nn.Module name of 100,000 dots, or 10,000 nested
// modules, took memory with the square of the depth (every level's whole
// path interned, then every ancestor made a layer). Paths are cut to their
// outer kMaxModulePathDepth levels on import, and counted.
TEST(Hostile, DeepModulePathsAreCutOnImport) {
  std::string dots = "nn.Module: ";
  for (int i = 0; i < 100000; ++i) dots += "a.";
  dots += "b";
  std::string doc = R"({"traceEvents":[{"ph":"X","cat":"python_function","name":")" + dots +
                    R"(","pid":1,"tid":1,"ts":1,"dur":50,"args":{"Python id":1,"Python parent id":0}},)";
  // 2,000 nested modules of one level each.
  for (int i = 0; i < 2000; ++i) {
    doc += R"({"ph":"X","cat":"python_function","name":"nn.Module: m","pid":1,"tid":2,"ts":)" +
           std::to_string(100 + i) + R"(,"dur":)" + std::to_string(10000 - 2 * i) +
           R"(,"args":{"Python id":)" + std::to_string(10 + i) + R"(,"Python parent id":)" +
           std::to_string(i == 0 ? 0 : 9 + i) + "}},";
  }
  doc += R"({"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":2,"dur":20}]})";
  absl::StatusOr<Trace> t = ImportKinetoJson(testing::WriteTempFile(doc));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GE(t->GetCounter(TraceCounter::module_path_out_of_range), 1 + 2000 - kMaxModulePathDepth);
  size_t bytes = 0;
  for (const proto::Range& r : t->events().ranges()) {
    if (r.module_path_sid() == 0) continue;
    const std::string_view p = t->String(r.module_path_sid());
    EXPECT_LE(p.size(), kMaxModulePathBytes);
    EXPECT_LT(std::count(p.begin(), p.end(), '.'), kMaxModulePathDepth);
    bytes += p.size();
  }
  EXPECT_LT(bytes, size_t{4} << 20);
}

}  // namespace
}  // namespace reverie
