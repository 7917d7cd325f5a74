// File: tests/collector/collector_test_util.h
//
// Helpers for the collector tests: a temporary trace file with the writer
// stack (ChunkWriter -> StepWindow -> TraceSink), reading it back with
// reverie's own ReadTrace, and looking records up by name.
#ifndef REVERIE_TESTS_COLLECTOR_COLLECTOR_TEST_UTIL_H_
#define REVERIE_TESTS_COLLECTOR_COLLECTOR_TEST_UTIL_H_

#include <unistd.h>

#include <memory>
#include <string>

#include "collector/chunk_writer.h"
#include "collector/step_window.h"
#include "collector/trace_sink.h"
#include "gtest/gtest.h"
#include "proto/trace.h"
#include "proto/trace_io.h"

namespace reverie::collector::testing {

inline std::string TempTracePath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "." + std::to_string(::getpid()) + ".pb";
}

// Removes a file when the test ends.
struct RemoveOnExit {
  std::string path;
  ~RemoveOnExit() { ::unlink(path.c_str()); }
};

inline std::string FakeThreadName(int64_t pid, int64_t tid) {
  return "thread-" + std::to_string(static_cast<long long>(pid)) + "-" +
         std::to_string(static_cast<long long>(tid));
}

// ChunkWriter + window + sink writing to a temp file.
struct SinkFixture {
  explicit SinkFixture(const std::string& name, int64_t warmup = 0, int64_t steps = 0,
                       size_t chunk_bytes = 1 << 20)
      : path(TempTracePath(name)), window(warmup, steps) {
    HeaderInfo header;
    header.producer = "test";
    ChunkWriter::Options options;
    options.chunk_bytes = chunk_bytes;
    std::string error;
    EXPECT_TRUE(writer.Open(path, header, options, &error)) << error;
    sink = std::make_unique<TraceSink>(&writer, &window, header, &FakeThreadName);
  }
  ~SinkFixture() { ::unlink(path.c_str()); }
  Trace CloseAndRead() {
    writer.Close();
    absl::StatusOr<Trace> t = ReadTrace(path);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(*t) : Trace();
  }

  std::string path;
  ChunkWriter writer;
  StepWindow window;
  std::unique_ptr<TraceSink> sink;
};

inline std::string Str(const Trace& t, uint32_t sid) { return std::string(t.String(sid)); }

}  // namespace reverie::collector::testing

#endif  // REVERIE_TESTS_COLLECTOR_COLLECTOR_TEST_UTIL_H_
