// `reverie validate`'s host attribution on GPUPuzzlers' S1 pair (blocking
// -> non-blocking device-to-host copies): the pageable host-to-device
// copies the script leaves alone took 1.8x as long in AFTER's process with
// nothing else on the GPU, host work no trace of BEFORE shows. The copy
// comparison finds it, the attribution scales those copies, never the
// pinned ones the script made, and the prediction itself is unchanged.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/pipeline.h"
#include "whatif/validate.h"

namespace reverie {
namespace {

constexpr char kBefore[] = "anupambhatnagar__GPUPuzzlers/streams/blocking/blocking_streams.json.gz";
constexpr char kAfter[] =
    "anupambhatnagar__GPUPuzzlers/streams/non_blocking/non_blocking_streams.json.gz";

TEST(ValidateRealTest, PageableCopiesOfAnotherHostAreAttributedNotPredicted) {
  REVERIE_REQUIRE_TRACE(before_path, kBefore);
  REVERIE_REQUIRE_TRACE(after_path, kAfter);
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> before =
      whatif::LoadAndSimulate(before_path);
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> after = whatif::LoadAndSimulate(after_path);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  whatif::ScriptSpec spec;
  spec.scripts = {"async_copy.lua"};
  absl::StatusOr<whatif::Validation> v = whatif::ValidatePrediction(**before, **after, spec, 5);
  ASSERT_TRUE(v.ok()) << v.status();
  const depgraph::SpeedRatio& c = v->host.pageable_copies;
  ASSERT_TRUE(c.known());
  // Only the host-to-device copies stay pageable in AFTER: 100 of 4 MiB.
  EXPECT_EQ(c.name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(c.bytes, 4 << 20);
  EXPECT_EQ(c.before_count, 100);
  EXPECT_EQ(c.after_count, 100);
  EXPECT_GT(c.ratio, 1.5);
  EXPECT_LT(c.ratio, 2.0);
  // Slower copies and a slower CPU can only lengthen the predicted run
  // (max-plus), and the attribution is beside the prediction, not in it.
  ASSERT_GT(v->at_after_host_us, 0);
  EXPECT_GT(v->at_after_host_us, v->predicted.mean_ns / 1e3);
  EXPECT_LT(v->at_after_host_us, v->measured.mean_ns / 1e3 * 1.25);
  EXPECT_NEAR(v->error_pct,
              (v->predicted.mean_ns - v->measured.mean_ns) / v->measured.mean_ns * 100, 1e-9);
  const std::string text = whatif::ValidationText(*v);
  EXPECT_NE(text.find("host: AFTER's pageable copies took 1."), std::string::npos) << text;
  EXPECT_NE(text.find("every pageable copy scaled by 1."), std::string::npos) << text;
}

}  // namespace
}  // namespace reverie
