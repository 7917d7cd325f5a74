// The Chrome Trace Event Format's JSON Array form ([event, ...], closing ']'
// optional), and chunked parsing giving the same Trace whatever the chunk.
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_importer.h"
#include "frameworks/kineto/kineto_parser.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

const std::string kData = std::string(REVERIE_SOURCE_DIR) + "/tests/import/data/";

using testing::ReadFile;

Trace Import(const std::string& text, std::string_view suffix = ".json") {
  absl::StatusOr<Trace> t = ImportKinetoJson(testing::WriteTempFile(text, suffix));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace();
}

TEST(ArrayForm, ClosedUnclosedGzippedAndObjectFormAgree) {
  const std::string closed = ReadFile(kData + "array_closed.json");
  const Trace a = Import(closed);
  EXPECT_EQ(a.events().api_calls_size(), 3);
  EXPECT_EQ(a.events().gpu_activities_size(), 3);
  ASSERT_EQ(a.events().steps_size(), 2);
  EXPECT_EQ(testing::Str(a, a.events().steps(1).name_sid()), "ProfilerStep#5");
  ASSERT_EQ(a.events().threads_size(), 1);
  EXPECT_EQ(a.events().threads(0).name(), "main thread");
  EXPECT_EQ(a.events().counters_size(), 0) << "a closed array is not an anomaly";

  EXPECT_EQ(testing::Content(Import(ReadFile(kData + "array_unclosed.json"))), testing::Content(a));
  EXPECT_EQ(testing::Content(Import(testing::Gzip(closed), ".json.gz")), testing::Content(a));
  const std::string events = closed.substr(closed.find('[') + 1, closed.rfind(']') - closed.find('[') - 1);
  // The object form adds "schemaVersion" to the header's metadata only.
  EXPECT_EQ(testing::ImportEvents(events).events().SerializeAsString(),
            a.events().SerializeAsString());
  // No ']', no trailing comma, no newline: the text ends with the last event.
  const std::string bare = closed.substr(0, closed.rfind('}') + 1);
  EXPECT_EQ(testing::Content(Import(bare)), testing::Content(a));
}

TEST(ArrayForm, CutInsideAnEventKeepsEveryCompleteOne) {
  const Trace full = Import(ReadFile(kData + "array_closed.json"));
  const Trace cut = Import(ReadFile(kData + "array_cut.json"));
  EXPECT_EQ(cut.GetCounter(TraceCounter::truncated_event), 1);
  EXPECT_EQ(cut.events().api_calls_size(), full.events().api_calls_size());
  EXPECT_EQ(cut.events().gpu_activities_size(), full.events().gpu_activities_size() - 1);
  EXPECT_EQ(cut.events().ranges_size(), full.events().ranges_size());
  EXPECT_EQ(cut.GetCounter(TraceCounter::launch_without_kernel), 1) << "its launch lost its kernel";
  // Cut inside a string, an escape, a nested array: the same.
  const std::string head = R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},)";
  for (const std::string tail : {R"( {"ph": "X", "name": "b\")", R"( {"args": {"x": [1, [2)", R"( {)",
                                 R"( {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1)"}) {
    SCOPED_TRACE(tail);
    const Trace t = Import(head + tail);
    EXPECT_EQ(t.events().ranges_size(), 1);
    EXPECT_EQ(t.GetCounter(TraceCounter::truncated_event), 1);
  }
}

TEST(ArrayForm, Schema2021WithoutProfilerSteps) {
  const Trace t = Import(ReadFile(kData + "array_2021.json"));
  EXPECT_EQ(t.events().steps_size(), 0);
  EXPECT_EQ(t.events().api_calls_size(), 4);
  int kernels = 0, memcpys = 0;
  for (const proto::GpuActivity& g : t.events().gpu_activities()) {
    kernels += g.kind() == proto::GpuActivity::KERNEL;
    memcpys += g.kind() == proto::GpuActivity::MEMCPY;
    EXPECT_EQ(g.stream(), 7);
  }
  EXPECT_EQ(kernels, 3);
  EXPECT_EQ(memcpys, 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::unmatched_correlation), 0);
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_profiler_span), 1);
  ASSERT_EQ(t.events().ranges_size(), 4);
  for (const proto::Range& r : t.events().ranges()) EXPECT_EQ(r.kind(), proto::Range::CPU_OP);
}

TEST(ArrayForm, ArraysWithoutTraceEventsAreRefused) {
  for (const std::string text : {"[1, 2, 3]", "[]", "[\n", R"([{"name": "aten::mm", "id": 3, "inputs": []}])",
                                 R"([{"ph": "X", "ts)", R"(["X", {"cat": "cpu_op"}])"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<Trace> t = ImportKinetoJson(testing::WriteTempFile(text));
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("holding no trace events"), std::string::npos) << t.status();
  }
}

// The document in `text` through ParseKinetoJson with a given chunk size.
std::string ParseText(std::string_view text, size_t chunk_bytes) {
  return testing::ParsedContent(kineto::CopyJsonText(text, "doc.json"), chunk_bytes);
}

std::string ParsedWithChunks(const std::string& path, size_t chunk_bytes) {
  const std::string out = ParseText(ReadFile(path), chunk_bytes);
  EXPECT_EQ(out.rfind("error: ", 0), std::string::npos) << out;
  return out;
}

TEST(Chunking, TheTraceDoesNotDependOnTheChunkSize) {
  for (const std::string& path :
       {kData + "mini_training.json", kData + "array_2021.json", kData + "array_cut.json",
        std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json"}) {
    SCOPED_TRACE(path);
    const std::string one_chunk = ParsedWithChunks(path, size_t{1} << 40);
    ASSERT_FALSE(one_chunk.empty());
    for (size_t chunk : {size_t{1}, size_t{100}, size_t{4096}, kineto::kDefaultChunkBytes}) {
      EXPECT_EQ(ParsedWithChunks(path, chunk), one_chunk) << "chunk " << chunk;
    }
  }
}

TEST(Chunking, MutatedDocumentsGiveTheSameAnswerInAnyChunkSize) {
  // Differential check of the cut points: byte-level mutations of the
  // hand-written traces, each parsed in one chunk and with a cut after
  // every event. Both must accept with the same Trace, or both refuse.
  std::mt19937 rng(1234);
  const std::string alphabet = "{}[]\",:\\ 0aX\n";
  int accepted = 0, refused = 0;
  for (const std::string name : {"array_closed.json", "array_cut.json", "mini_training.json",
                                 "array_2021.json"}) {
    const std::string original = ReadFile(kData + name);
    for (int i = 0; i < 1000; ++i) {
      std::string doc = original;
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
        const size_t at = rng() % doc.size();
        switch (rng() % 3) {
          case 0: doc[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: doc.erase(at, 1 + rng() % 8); break;
          default: doc.resize(at); break;
        }
        if (doc.empty()) doc.push_back('[');
      }
      const std::string whole = ParseText(doc, size_t{1} << 40);
      const std::string cut = ParseText(doc, 1);
      const bool whole_refused = whole.rfind("error: doc.json: ", 0) == 0;
      if (whole_refused) {
        // Both refuse (simdjson may place the error a few bytes apart).
        ASSERT_EQ(cut.rfind("error: doc.json: ", 0), 0u) << name << " mutation " << i << ":\n" << doc;
      } else {
        ASSERT_EQ(cut, whole) << name << " mutation " << i << ":\n" << doc;
      }
      ++(whole_refused ? refused : accepted);
    }
  }
  EXPECT_GT(accepted, 400);
  EXPECT_GT(refused, 400);
}

TEST(Chunking, BeginEndPairsSpanChunksWithEscapedNames) {
  // The "B" event's name is unescaped into simdjson's buffer, which the next
  // chunk reuses: the builder must keep its own copy until the "E".
  std::string events = R"({"ph": "B", "cat": "user_annotation", "name": "step \"one\"", "pid": 1, "tid": 1, "ts": 1},)";
  for (int i = 0; i < 50; ++i) {
    events += R"({"ph": "X", "cat": "cpu_op", "name": "op \"q\")" + std::to_string(i) +
              R"(", "pid": 1, "tid": 1, "ts": 2, "dur": 1},)";
  }
  events += R"({"ph": "E", "pid": 1, "tid": 1, "ts": 90})";
  const std::string path = testing::WriteTempFile(testing::KinetoDoc(events));
  absl::StatusOr<kineto::JsonInput> input = kineto::ReadJsonInput(path);
  ASSERT_TRUE(input.ok());
  kineto::KinetoTraceBuilder builder(path);
  ASSERT_TRUE(kineto::ParseKinetoJson(*input, path, &builder, 1).ok());
  const Trace t = builder.Finish();
  ASSERT_EQ(t.events().ranges_size(), 51);
  EXPECT_EQ(testing::Str(t, t.events().ranges(0).name_sid()), "step \"one\"");
  EXPECT_EQ(t.events().ranges(0).end_ns(), 90000);
  EXPECT_EQ(t.GetCounter(TraceCounter::unbalanced_annotation), 0);
}

}  // namespace
}  // namespace reverie
