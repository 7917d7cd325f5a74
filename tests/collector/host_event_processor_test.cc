// HostEventProcessor: nested ranges written parents-first with global parent
// indexes, per-thread stacks, NVTX start/end ranges, steps and the
// window, parameters and DDP buckets; anomalies counted, never fatal.
#include "collector/host_event_processor.h"

#include <string>

#include "collector_test_util.h"
#include "gtest/gtest.h"

namespace reverie::collector {
namespace {

using testing::SinkFixture;
using testing::Str;

HostEvent Push(int64_t tid, int64_t t, const std::string& name, uint64_t ext,
               PhaseValue phase = PhaseValue::kForward, RangeKind kind = RangeKind::kLayer) {
  HostEvent e;
  e.type = HostEventType::kPush;
  e.kind = kind;
  e.phase = phase;
  e.pid = 1;
  e.tid = tid;
  e.time_ns = t;
  e.id = ext;
  e.name = name;
  return e;
}

HostEvent Simple(HostEventType type, int64_t tid, int64_t t, uint64_t id = 0) {
  HostEvent e;
  e.type = type;
  e.pid = 1;
  e.tid = tid;
  e.time_ns = t;
  e.id = id;
  return e;
}

const proto::Range* FindRange(const Trace& t, const std::string& name) {
  for (const proto::Range& r : t.events().ranges()) {
    if (t.String(r.name_sid()) == name) return &r;
  }
  return nullptr;
}

TEST(HostEventProcessorTest, NestedRangesParentsFirstAcrossThreads) {
  SinkFixture f("nested");
  HostEventProcessor p(f.sink.get());
  p.Process(Push(10, 100, "model", 1));
  p.Process(Push(20, 105, "other_thread", 9, PhaseValue::kBackward));
  p.Process(Push(10, 110, "model.layer1", 2));
  p.Process(Push(10, 120, "model.layer1.conv", 3));
  p.Process(Simple(HostEventType::kPop, 10, 130));
  p.Process(Simple(HostEventType::kPop, 10, 140));
  p.Process(Push(10, 150, "model.layer2", 4));
  p.Process(Simple(HostEventType::kPop, 10, 160));
  EXPECT_EQ(p.pending_ranges(), 5u);  // nothing written while "model" is open
  p.Process(Simple(HostEventType::kPop, 20, 170));
  p.Process(Simple(HostEventType::kPop, 10, 200));
  EXPECT_EQ(p.pending_ranges(), 0u);
  Trace t = f.CloseAndRead();

  ASSERT_EQ(t.events().ranges_size(), 5);
  const proto::Range* model = FindRange(t, "model");
  const proto::Range* layer1 = FindRange(t, "model.layer1");
  const proto::Range* conv = FindRange(t, "model.layer1.conv");
  const proto::Range* layer2 = FindRange(t, "model.layer2");
  const proto::Range* other = FindRange(t, "other_thread");
  ASSERT_TRUE(model && layer1 && conv && layer2 && other);
  auto index_of = [&](const proto::Range* r) {
    for (int i = 0; i < t.events().ranges_size(); ++i) {
      if (&t.events().ranges(i) == r) return static_cast<uint32_t>(i) + 1;
    }
    return 0u;
  };
  EXPECT_EQ(model->parent(), 0u);
  EXPECT_EQ(model->depth(), 0u);
  EXPECT_EQ(layer1->parent(), index_of(model));
  EXPECT_EQ(layer1->depth(), 1u);
  EXPECT_EQ(conv->parent(), index_of(layer1));
  EXPECT_EQ(conv->depth(), 2u);
  EXPECT_EQ(layer2->parent(), index_of(model));
  EXPECT_LT(index_of(model), index_of(layer1));
  EXPECT_EQ(other->parent(), 0u);
  EXPECT_EQ(other->tid(), 20);
  EXPECT_EQ(other->phase(), proto::BACKWARD);

  EXPECT_EQ(model->kind(), proto::Range::LAYER);
  EXPECT_EQ(Str(t, conv->module_path_sid()), "model.layer1.conv");
  EXPECT_EQ(conv->start_ns(), 120);
  EXPECT_EQ(conv->end_ns(), 130);
  EXPECT_EQ(conv->external_id(), 3u);
  EXPECT_EQ(conv->phase(), proto::FORWARD);
  EXPECT_EQ(model->end_ns(), 200);
  EXPECT_EQ(conv->pid(), 1);
  EXPECT_EQ(conv->tid(), 10);
}

TEST(HostEventProcessorTest, AnomaliesAreCounted) {
  SinkFixture f("anomalies");
  HostEventProcessor p(f.sink.get());
  p.Process(Simple(HostEventType::kPop, 10, 5));  // nothing open
  p.Process(Push(10, 10, "open_forever", 1));
  p.Process(Push(10, 20, "inner", 2));
  HostEvent start = Push(11, 30, "nvtx_start", 0, PhaseValue::kUnknown, RangeKind::kUserAnnotation);
  start.type = HostEventType::kStart;
  start.id = 77;
  p.Process(start);
  p.Process(Simple(HostEventType::kEnd, 11, 40, 78));  // unknown id
  p.Finish(100);
  Trace t = f.CloseAndRead();
  EXPECT_EQ(t.GetCounter(TraceCounter::range_unbalanced_pop), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::range_unbalanced_end), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::range_unclosed), 3);
  ASSERT_EQ(t.events().ranges_size(), 3);
  const proto::Range* inner = FindRange(t, "inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->end_ns(), 100);
  EXPECT_EQ(inner->parent(), 1u);
  const proto::Range* nvtx = FindRange(t, "nvtx_start");
  ASSERT_NE(nvtx, nullptr);
  EXPECT_EQ(nvtx->kind(), proto::Range::USER_ANNOTATION);
  EXPECT_EQ(nvtx->external_id(), 0u);
}

TEST(HostEventProcessorTest, StartEndRangesAreTopLevel) {
  SinkFixture f("startend");
  HostEventProcessor p(f.sink.get());
  p.Process(Push(10, 10, "layer", 1));
  HostEvent start = Push(10, 15, "epoch", 0, PhaseValue::kUnknown, RangeKind::kUserAnnotation);
  start.type = HostEventType::kStart;
  start.id = 5;
  p.Process(start);
  p.Process(Simple(HostEventType::kPop, 10, 20));
  p.Process(Simple(HostEventType::kEnd, 12, 30, 5));  // may end on another thread
  Trace t = f.CloseAndRead();
  const proto::Range* epoch = FindRange(t, "epoch");
  ASSERT_NE(epoch, nullptr);
  EXPECT_EQ(epoch->parent(), 0u);
  EXPECT_EQ(epoch->depth(), 0u);
  EXPECT_EQ(epoch->start_ns(), 15);
  EXPECT_EQ(epoch->end_ns(), 30);
}

// A range that never closes must not hold every other range forever.
TEST(HostEventProcessorTest, LongOpenRangeDoesNotHoldEverything) {
  SinkFixture f("longopen");
  HostEventProcessor p(f.sink.get());
  p.Process(Push(10, 0, "training", 1));
  const size_t n = HostEventProcessor::kMaxPendingPerThread + 10;
  for (size_t i = 0; i < n; ++i) {
    p.Process(Push(10, static_cast<int64_t>(2 * i + 1), "step", 2 + i));
    p.Process(Simple(HostEventType::kPop, 10, static_cast<int64_t>(2 * i + 2)));
  }
  EXPECT_LT(p.pending_ranges(), 20u);
  p.Finish(1 << 30);
  Trace t = f.CloseAndRead();
  EXPECT_EQ(t.events().ranges_size(), static_cast<int>(n + 1));
  EXPECT_GT(t.GetCounter(TraceCounter::range_parent_unknown), 0);
}

TEST(HostEventProcessorTest, StepsAndWindow) {
  SinkFixture f("steps", /*warmup=*/1, /*steps=*/2);
  HostEventProcessor p(f.sink.get());
  for (int i = 0; i < 4; ++i) {
    const int64_t base = 1000 * i;
    p.Process(Simple(HostEventType::kStepBegin, 10, base, i));
    p.Process(Push(10, base + 10, "layer", static_cast<uint64_t>(i + 1)));
    p.Process(Simple(HostEventType::kPop, 10, base + 20));
    p.Process(Simple(HostEventType::kStepEnd, 10, base + 900, i));
  }
  p.Process(Simple(HostEventType::kStepEnd, 10, 9000, 99));
  EXPECT_TRUE(f.window.closed());
  Trace t = f.CloseAndRead();
  ASSERT_EQ(t.events().steps_size(), 2);
  EXPECT_EQ(t.events().steps(0).index(), 1);
  EXPECT_EQ(Str(t, t.events().steps(0).name_sid()), "Step#1");
  EXPECT_EQ(t.events().steps(0).start_ns(), 1000);
  EXPECT_EQ(t.events().steps(0).end_ns(), 1900);
  EXPECT_EQ(t.events().steps(1).index(), 2);
  ASSERT_EQ(t.events().ranges_size(), 2);
  EXPECT_EQ(t.events().ranges(0).start_ns(), 1010);
  EXPECT_EQ(t.events().ranges(1).start_ns(), 2010);
  EXPECT_EQ(t.GetCounter(TraceCounter::records_outside_window), 2);
  EXPECT_EQ(t.GetCounter(TraceCounter::step_end_without_begin), 1);
}

TEST(HostEventProcessorTest, ParametersAndBucketsWithLayers) {
  SinkFixture f("buckets");
  HostEventProcessor p(f.sink.get());
  auto param = [&](const std::string& name, const std::string& layer, int64_t bytes) {
    HostEvent e;
    e.type = HostEventType::kParameter;
    e.name = name;
    e.layer = layer;
    e.dtype = "Float";
    e.bytes = bytes;
    p.Process(e);
  };
  param("fc1.weight", "fc1", 4000);
  param("fc1.bias", "fc1", 40);
  param("fc2.weight", "fc2", 400);
  HostEvent b;
  b.type = HostEventType::kBucket;
  b.index = 0;
  b.bytes = 4440;
  b.names = {"fc2.weight", "fc1.bias", "fc1.weight", "ghost.weight"};
  p.Process(b);
  HostEvent m;
  m.type = HostEventType::kMetadata;
  m.name = "framework";
  m.layer = "pytorch 2.4.0";
  p.Process(m);
  Trace t = f.CloseAndRead();
  ASSERT_EQ(t.events().parameters_size(), 3);
  const proto::Parameter& w1 = t.events().parameters(0);
  EXPECT_EQ(Str(t, w1.name_sid()), "fc1.weight");
  EXPECT_EQ(Str(t, w1.layer_sid()), "fc1");
  EXPECT_EQ(w1.bytes(), 4000);
  EXPECT_EQ(Str(t, w1.dtype_sid()), "Float");
  ASSERT_EQ(t.events().gradient_buckets_size(), 1);
  const proto::GradientBucket& g = t.events().gradient_buckets(0);
  EXPECT_EQ(g.index(), 0);
  EXPECT_EQ(g.bytes(), 4440);
  ASSERT_EQ(g.parameter_sids_size(), 4);
  EXPECT_EQ(Str(t, g.parameter_sids(0)), "fc2.weight");
  ASSERT_EQ(g.layer_sids_size(), 2);
  EXPECT_EQ(Str(t, g.layer_sids(0)), "fc2");
  EXPECT_EQ(Str(t, g.layer_sids(1)), "fc1");
  EXPECT_EQ(t.GetCounter(TraceCounter::bucket_parameter_unknown), 1);
  EXPECT_EQ(t.header().framework(), "pytorch 2.4.0");
}

}  // namespace
}  // namespace reverie::collector
