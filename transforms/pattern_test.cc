#include "transforms/pattern.h"

#include "gtest/gtest.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

TEST(PatternTest, GlobWholeText) {
  EXPECT_TRUE(GlobMatch("*gemm*", "volta_sgemm_64x64_nn", false));
  EXPECT_TRUE(GlobMatch("volta_*_nn", "volta_sgemm_64x64_nn", false));
  EXPECT_FALSE(GlobMatch("volta_*_nt", "volta_sgemm_64x64_nn", false));
  EXPECT_TRUE(GlobMatch("a?c", "abc", false));
  EXPECT_FALSE(GlobMatch("a?c", "ac", false));
  EXPECT_TRUE(GlobMatch("*", "", false));
  EXPECT_TRUE(GlobMatch("*A*", "xay", true));
  EXPECT_FALSE(GlobMatch("*A*", "xay", false));
  EXPECT_TRUE(GlobMatch("*a*b*c", "xxaxxbxxbc", false));  // needs backtracking
}

TEST(PatternTest, KeywordIsCaseInsensitiveSubstring) {
  EXPECT_TRUE(NameMatches("sgemm", "volta_sgemm_64x64_nn"));
  EXPECT_TRUE(NameMatches("WGRAD", "void cudnn::winogradWgradData4x4"));
  EXPECT_FALSE(NameMatches("relu", "volta_sgemm_64x64_nn"));
  EXPECT_TRUE(NameMatches("*sgemm*nn", "volta_sgemm_64x64_nn"));
  EXPECT_FALSE(NameMatches("sgemm*", "volta_sgemm_64x64_nn"));  // glob: whole name
}

TEST(PatternTest, PathGlobStarStaysInOneComponent) {
  EXPECT_TRUE(PathGlobMatch("layer1.*.conv*", "layer1.0.conv1"));
  EXPECT_FALSE(PathGlobMatch("layer1.*.conv*", "layer1.0.downsample.0"));
  EXPECT_FALSE(PathGlobMatch("layer1.*", "layer1.0.conv1"));  // by itself; ancestors below
  EXPECT_TRUE(PathGlobMatch("layer1.**", "layer1.0.conv1"));
  EXPECT_TRUE(PathGlobMatch("**.conv1", "layer1.0.conv1"));
  EXPECT_TRUE(PathGlobMatch("fc", "fc"));
  EXPECT_FALSE(PathGlobMatch("fc", "fc2"));
  EXPECT_TRUE(PathGlobMatch("layer?.0", "layer1.0"));
  EXPECT_FALSE(PathGlobMatch("layer1?0", "layer1.0"));
}

TEST(PatternTest, LayersIncludeSubLayers) {
  const depgraph::Graph g = testing::MakeTrainingGraph(1);
  const std::vector<bool> m = MatchLayers(g, {"layer1.*"});
  EXPECT_FALSE(m[g.FindLayer("layer1").value()]);
  EXPECT_TRUE(m[g.FindLayer("layer1.0").value()]);
  EXPECT_TRUE(m[g.FindLayer("layer1.0.conv1").value()]);  // sub-layer of a match
  EXPECT_FALSE(m[g.FindLayer("fc").value()]);
  const std::vector<bool> conv = MatchLayers(g, {"layer1.*.conv*", "fc"});
  EXPECT_TRUE(conv[g.FindLayer("layer1.0.conv1").value()]);
  EXPECT_FALSE(conv[g.FindLayer("layer1.0.bn1").value()]);
  EXPECT_TRUE(conv[g.FindLayer("fc").value()]);
}

TEST(PatternTest, NameTableRegexAndErrors) {
  const depgraph::Graph g = testing::MakeTrainingGraph(1);
  absl::StatusOr<std::vector<bool>> m = MatchNameTable(g, {}, "sgemm_64x64_n[nt]$");
  ASSERT_TRUE(m.ok());
  int hits = 0;
  for (bool b : *m) hits += b;
  EXPECT_EQ(hits, 2);
  EXPECT_EQ(MatchNameTable(g, {}, "([unclosed").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace reverie::transforms
