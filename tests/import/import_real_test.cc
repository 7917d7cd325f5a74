// The importer on real Kineto traces from ../shared/traces (skipped when
// absent). Counts against an independent parser are checked by
// check_counts.py; this checks what needs the importer's semantics.
#include <string>

#include "absl/strings/match.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_parser.h"
#include "frameworks/trace_loader.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/trace_io.h"
#include "tests/common/real_traces.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using testing::Str;

constexpr char kHta[] = "facebookresearch__HolisticTraceAnalysis/tests/data/";

TEST(ImportReal, DdpTraceWithPhaseMarkers) {
  REVERIE_REQUIRE_TRACE(path, std::string(kHta) + "nccl_parser_config/nccl_data.json.gz");
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events().steps_size(), 3);
  EXPECT_EQ(t->events().steps(0).index(), 4);
  EXPECT_EQ(t->header().distributed().world_size(), 2);
  EXPECT_EQ(t->events().flows_size(), 543);
  int forward = 0, backward = 0, update = 0;
  for (const proto::Range& r : t->events().ranges()) {
    forward += r.phase() == proto::FORWARD;
    backward += r.phase() == proto::BACKWARD;
    update += r.phase() == proto::UPDATE;
  }
  EXPECT_GT(forward, 1000);
  EXPECT_GT(backward, 1000);
  EXPECT_GT(update, 100);
  int sized = 0;
  for (const proto::Collective& c : t->events().collectives()) sized += c.bytes() > 0;
  EXPECT_GT(sized, 0) << "record_param_comms args give collective sizes";
  // 27 record_param_comms calls; the nccl:* annotations inside them are the same calls.
  EXPECT_EQ(t->events().collectives_size(), 27);
}

TEST(ImportReal, BackwardOpsAttributedToLayers) {
  REVERIE_REQUIRE_TRACE(path, "AMD-AGI__TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz");
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  int nodes = 0, attributed = 0;
  for (const proto::Range& r : t->events().ranges()) {
    if (!absl::StartsWith(Str(*t, r.name_sid()), "autograd::engine::evaluate_function")) continue;
    ++nodes;
    attributed += r.module_path_sid() != 0;
    EXPECT_EQ(r.phase(), proto::BACKWARD);
  }
  EXPECT_GT(nodes, 500);
  // Only the loss's backward (outside every nn.Module) stays unattributed.
  EXPECT_EQ(nodes - attributed, t->GetCounter(TraceCounter::backward_op_without_forward_layer));
  EXPECT_LE(nodes - attributed, 5);
  for (const proto::Device& d : t->header().devices()) EXPECT_EQ(d.vendor(), "amd");
}

TEST(ImportReal, LargeDdpTraceCollectivesFromAnnotations) {
  REVERIE_REQUIRE_TRACE(path, std::string(kHta) + "df_index_resolver/df_index_resolver.json.gz");
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events().steps_size(), 5);
  ASSERT_EQ(t->events().collectives_size(), 2020);
  for (const proto::Collective& c : t->events().collectives()) {
    ASSERT_EQ(Str(*t, c.name_sid()), "all_reduce");
  }
  EXPECT_EQ(t->GetCounter(TraceCounter::unmatched_correlation), 0);
}

TEST(ImportReal, PbRoundTrip) {
  REVERIE_REQUIRE_TRACE(path, std::string(kHta) + "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string pb = ::testing::TempDir() + "/reverie_real_roundtrip.pb";
  ASSERT_TRUE(WriteTrace(*t, pb).ok());
  absl::StatusOr<Trace> back = LoadTraceFile(pb);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back->events(), t->events()));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back->header(), t->header()));
}

TEST(ImportReal, Schema2021Trace) {
  REVERIE_REQUIRE_TRACE(path, testing::kResnetSampleTrace);
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events().steps_size(), 6);
  EXPECT_EQ(t->GetCounter(TraceCounter::unmatched_correlation), 0);
  int backward = 0;
  for (const proto::Range& r : t->events().ranges()) backward += r.phase() == proto::BACKWARD;
  EXPECT_GT(backward, 1000);
}

TEST(ImportReal, ExecutionTraceRefused) {
  REVERIE_REQUIRE_TRACE(path, "facebookresearch__param/et_replay/tests/inputs/resnet_et.json.gz");
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(t.status().message(), "execution trace")) << t.status();
}

// Decoding on several threads (kineto_parser.cc) gives the one-thread Trace
// byte for byte on every shared trace.
class ParallelImportReal : public ::testing::TestWithParam<std::string> {};

TEST_P(ParallelImportReal, EveryThreadCountGivesOneThreadsTrace) {
  if (GetParam().empty()) GTEST_SKIP() << "no Kineto traces under " << testing::TracesDir();
  const std::string path = testing::TracesDir() + "/" + GetParam();
  // Chunks of 64 KiB, so that even small traces are cut into parts.
  const std::string one = testing::ParsedContent(kineto::ReadJsonInput(path), size_t{64} << 10, 1);
  ASSERT_EQ(one.rfind("error: ", 0), std::string::npos) << one;
  EXPECT_EQ(testing::ParsedContent(kineto::ReadJsonInput(path), size_t{64} << 10, 3), one);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, ParallelImportReal,
                         ::testing::ValuesIn(testing::AllKinetoTraces()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::TraceTestName(info.index, info.param);
                         });

}  // namespace
}  // namespace reverie
