// Decoding a trace's event array on several threads (kineto_parser.cc's
// ParseParts, KinetoTraceBuilder::Absorb) gives the Trace one thread gives,
// byte for byte, and the same first error: on hand-written documents cut at
// every event, on generated ones that put what spans parts (strings, flows,
// metadata, counters, op inputs, layers) on both sides of every cut, on
// and on mutated ones (import_real_test.cc: on every shared trace).
#include <random>
#include <string>

#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_parser.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

const std::string kData = std::string(REVERIE_SOURCE_DIR) + "/tests/import/data/";

std::string ParseText(const std::string& text, size_t chunk_bytes, int threads) {
  return testing::ParsedContent(kineto::CopyJsonText(text, "doc.json"), chunk_bytes, threads);
}

// A training-like document in which every kind of state that lives across
// events recurs at random places: names reused and new, process names (to
// "" too), labels and thread names set and set again, fwdbwd flows whose
// two ends are far apart, layers with Python ids, ops with input shapes,
// ranges on one interval (ordered by the file), collectives, [memory]
// events and anomalies that are counted.
std::string GeneratedDoc(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<uint32_t>(k)); };
  std::string ev;
  for (int i = 0; i < n; ++i) {
    const std::string ts = std::to_string(10 * i);
    const std::string tid = std::to_string(1 + pick(3));
    const std::string name = "op" + std::to_string(pick(i / 4 + 2));
    if (!ev.empty()) ev += ",\n";
    switch (pick(14)) {
      case 0:
        ev += R"({"ph": "M", "name": "process_name", "pid": )" + std::to_string(pick(2)) +
              R"(, "tid": 0, "args": {"name": ")" + (pick(3) == 0 ? "" : name) + R"("}})";
        break;
      case 1:
        ev += R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": )" + tid +
              R"(, "args": {"name": "thread )" + name + R"("}})";
        break;
      case 2:
        ev += R"({"ph": ")" + std::string(pick(2) == 0 ? "s" : "f") +
              R"(", "cat": "fwdbwd", "id": )" + std::to_string(pick(20)) +
              R"(, "pid": 1, "tid": )" + tid + R"(, "ts": )" + ts + "}";
        break;
      case 3:
        ev += R"({"ph": "X", "cat": "python_function", "name": "nn.Module: )" + name +
              R"(", "pid": 1, "tid": 1, "ts": )" + ts + R"(, "dur": 5, "args": {"Python id": )" +
              std::to_string(pick(50)) + "}}";
        break;
      case 4:
        ev += R"({"ph": "X", "cat": "cpu_op", "name": "aten::)" + name + R"(", "pid": 1, "tid": )" +
              tid + R"(, "ts": )" + ts + R"(, "dur": 3, "args": {"Input Dims": [[)" +
              std::to_string(1 + pick(64)) +
              R"(, 8], []], "Input type": ["float", "Scalar"], "Concrete Inputs": ["", ")" +
              std::to_string(pick(4)) + R"("], "Sequence number": )" + std::to_string(i) + "}}";
        break;
      case 5:
        ev +=
            R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": )" +
            ts +
            R"(, "dur": 4, "args": {"Collective name": "allreduce", "In msg nelems": 100, )"
            R"("Out msg nelems": 100, "Group size": 2, "dtype": ")" +
            (pick(2) == 0 ? "Float" : "BFloat16") + R"(", "Process Group Name": "pg)" +
            std::to_string(pick(2)) + R"("}})";
        break;
      case 6:
        ev +=
            R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" +
            ts + R"(, "dur": 2, "args": {"correlation": )" + std::to_string(i) + "}}";
        break;
      case 7:
        ev += R"({"ph": "X", "cat": "kernel", "name": "k_)" + name +
              R"(", "pid": 0, "tid": 7, "ts": )" + ts + R"(, "dur": 4, "args": {"correlation": )" +
              std::to_string(i - 1) + R"(, "stream": 7, "device": 0, "grid": [1, 2, 3]}})";
        break;
      case 8:
        ev +=
            R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
            ts + R"(, "args": {"Addr": )" + std::to_string(pick(8)) +
            R"(, "Bytes": 512, "Total Allocated": 512, "Device Type": 1, "Device Id": 0}})";
        break;
      case 9:
        ev += pick(2) == 0
                  ? std::string("42")
                  : R"({"ph": "X", "cat": "cpu_op", "name": "neg", "pid": 1, "tid": 1, "ts": )" +
                        ts + R"(, "dur": -1})";
        break;
      case 10:
        ev += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" +
              std::to_string(i / 40) + R"(", "pid": 1, "tid": 1, "ts": )" + ts + R"(, "dur": 400})";
        break;
      case 11:
        ev += R"({"ph": "M", "name": "process_labels", "pid": )" + std::to_string(pick(2)) +
              R"(, "tid": 0, "args": {"labels": "label )" + name + R"("}})";
        break;
      case 12:  // the same interval again: ranges tie-break on file order
        ev += R"({"ph": "X", "cat": "cpu_op", "name": "aten::same_)" + name +
              R"(", "pid": 1, "tid": 2, "ts": 7, "dur": 3})";
        break;
      default:
        ev += R"({"ph": "X", "cat": "mystery", "name": ")" + name +
              R"(", "pid": 1, "tid": 1, "ts": )" + ts + R"(, "dur": 1})";
        break;
    }
  }
  return testing::KinetoDoc(ev);
}

TEST(ParallelImport, HandWrittenDocumentsGiveOneThreadsTrace) {
  for (const std::string name :
       {"mini_training.json", "array_2021.json", "array_cut.json", "array_closed.json"}) {
    SCOPED_TRACE(name);
    const std::string text = testing::ReadFile(kData + name);
    for (size_t chunk : {size_t{1}, size_t{100}, size_t{4096}}) {
      const std::string one = ParseText(text, chunk, 1);
      ASSERT_EQ(one.rfind("error: ", 0), std::string::npos) << one;
      for (int threads : {2, 3, 8}) {
        EXPECT_EQ(ParseText(text, chunk, threads), one) << "chunk " << chunk << ", " << threads;
      }
    }
  }
}

TEST(ParallelImport, WhatSpansPartsIsJoinedAsOneThreadJoinsIt) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const std::string doc = GeneratedDoc(seed, 300);
    const std::string one = ParseText(doc, 1, 1);
    ASSERT_EQ(one.rfind("error: ", 0), std::string::npos) << one;
    for (int threads : {2, 3, 7}) {
      ASSERT_EQ(ParseText(doc, 1, threads), one) << "seed " << seed << ", " << threads << ":\n"
                                                 << doc;
    }
  }
}

TEST(ParallelImport, BeginEndPairsAcrossPartsAreParsedAgainInOrder) {
  // A "B" in one part and its "E" in another: the part that saw them is
  // decoded again by the first part's builder, which pairs them.
  std::string events =
      R"({"ph": "B", "cat": "user_annotation", "name": "outer", "pid": 1, "tid": 1, "ts": 1},)";
  for (int i = 0; i < 60; ++i) {
    events += R"({"ph": "X", "cat": "cpu_op", "name": "op)" + std::to_string(i % 7) +
              R"(", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"Sequence number": 12345}},)";
    if (i == 30)
      events +=
          R"({"ph": "B", "cat": "user_annotation", "name": "inner", "pid": 1, "tid": 1, "ts": 3},)";
    if (i == 50) events += R"({"ph": "E", "pid": 1, "tid": 1, "ts": 80},)";
  }
  events += R"({"ph": "E", "pid": 1, "tid": 1, "ts": 90})";
  const std::string doc = testing::KinetoDoc(events);
  const std::string one = ParseText(doc, 1, 1);
  ASSERT_EQ(one.rfind("error: ", 0), std::string::npos) << one;
  for (int threads : {2, 4}) EXPECT_EQ(ParseText(doc, 1, threads), one) << threads;
  absl::StatusOr<kineto::JsonInput> input = kineto::CopyJsonText(doc, "doc.json");
  ASSERT_TRUE(input.ok());
  kineto::KinetoTraceBuilder builder("doc.json");
  ASSERT_TRUE(kineto::ParseKinetoJson(*input, "doc.json", &builder, 1, 4).ok());
  const Trace t = builder.Finish();
  EXPECT_EQ(t.events().ranges_size(), 62);
  EXPECT_EQ(t.GetCounter(TraceCounter::unbalanced_annotation), 0);
}

TEST(ParallelImport, MutatedDocumentsGiveTheSameAnswerAndTheSameFirstError) {
  // An error in any part is reported as one thread reports it: the first in
  // file order, at the same byte.
  std::mt19937 rng(99);
  const std::string alphabet = "{}[]\",:\\ 0aX\n-e.";
  int accepted = 0, refused = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const std::string original = GeneratedDoc(seed, 120);
    for (int i = 0; i < 250; ++i) {
      std::string doc = original;
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
        const size_t at = rng() % doc.size();
        if (rng() % 2 == 0) {
          doc[at] = alphabet[rng() % alphabet.size()];
        } else {
          doc.erase(at, 1 + rng() % 8);
        }
      }
      const std::string one = ParseText(doc, 1, 1);
      ASSERT_EQ(ParseText(doc, 1, 3), one) << "seed " << seed << " mutation " << i << ":\n" << doc;
      ++(one.rfind("error: ", 0) == 0 ? refused : accepted);
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace reverie
