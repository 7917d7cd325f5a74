// whatif/memory_fit.h: how a predicted peak that is an estimate, or not
// predicted at all, reads in `predict`'s line and its JSON.
#include "whatif/memory_fit.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::whatif {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

MemoryFit Fit() {
  MemoryFit f;
  f.device = 1;
  f.base_peak = int64_t{6} << 30;
  f.pred_peak = int64_t{9} << 30;
  f.capacity = int64_t{32} << 30;
  f.gpu = "Tesla V100-SXM2-32GB";
  f.capacity_from = "deviceProperties";
  return f;
}

std::string Json(const MemoryFit& f) {
  JsonWriter w(0);
  WriteMemoryFitJson(w, {f});
  return w.str();
}

TEST(MemoryFitTest, AnEstimateSaysSoInTheLineAndTheJson) {
  MemoryFit f = Fit();
  f.estimate = "an estimate, likely high: no shapes";
  EXPECT_THAT(MemoryFitLine(f), HasSubstr("fits on Tesla V100-SXM2-32GB"));
  EXPECT_THAT(MemoryFitLine(f), HasSubstr("; an estimate, likely high: no shapes"));
  EXPECT_THAT(Json(f), HasSubstr("\"estimate\":\"an estimate, likely high: no shapes\""));
  EXPECT_THAT(Json(f), HasSubstr("\"fits\":true"));
}

// A peak no script could size is not judged: no "fits", no predicted bytes
// (they would be the baseline's).
TEST(MemoryFitTest, AnUnknownPeakIsNotJudged) {
  MemoryFit f = Fit();
  f.pred_peak = f.base_peak;
  f.unknown = "nothing tells the batch's tensors";
  EXPECT_EQ(MemoryFitLine(f),
            "peak memory on GPU 1 not predicted (baseline 6.00 GiB): nothing tells the batch's "
            "tensors");
  EXPECT_THAT(Json(f), HasSubstr("\"not_predicted\":\"nothing tells the batch's tensors\""));
  EXPECT_THAT(Json(f), Not(HasSubstr("fits")));
  EXPECT_THAT(Json(f), Not(HasSubstr("predicted_peak_bytes")));
}

}  // namespace
}  // namespace reverie::whatif
