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

// The RE2 translation keeps GlobMatch / NameMatches / PathGlobMatch's
// meaning, including bytes a regex would treat specially.
TEST(PatternTest, NameTableAgreesWithTheReferenceMatchers) {
  depgraph::Graph g;
  const std::vector<std::string> names = {
      "volta_sgemm_64x64_nn", "void cudnn::winogradWgradData4x4", "a.b+c(d)[e]{f}|g^h$i\\j",
      "ABC", "abc\ndef", std::string("nul\0byte", 8), "\xC3\xA9t\xC3\xA9", ""};
  for (const std::string& n : names) g.InternName(n);
  const std::vector<std::string> patterns = {
      "sgemm", "WGRAD", "*4x4", "a.b+c(d)*", "*[e]{f}|g^h$i\\j", "a?c", "*\n*",
      "nul", "\xC3\xA9*", "*", "?", "b*"};
  for (const std::string& p : patterns) {
    absl::StatusOr<std::vector<bool>> m = MatchNameTable(g, {p}, "");
    ASSERT_TRUE(m.ok()) << p;
    for (uint32_t id = 0; id < g.name_count(); ++id) {
      EXPECT_EQ((*m)[id], NameMatches(p, g.NameOf(id))) << "pattern " << p << " name " << g.NameOf(id);
    }
  }
  const std::vector<std::string> paths = {"layer1.0.conv1", "a+b.c", "x", "layer1", "l.(1).m"};
  for (const char* p : {"layer1.*", "layer1.**", "**.conv1", "a+b.?", "l.(1).*", "*"}) {
    for (const std::string& path : paths) {
      depgraph::Graph lg;
      lg.AddLayer(path, depgraph::LayerId());
      EXPECT_EQ(MatchLayers(lg, {p})[0], PathGlobMatch(p, path)) << p << " on " << path;
    }
  }
}

// A name far longer than any stack frame budget and a pattern that makes a
// backtracking engine exponential are both one linear pass (issue 17, D3).
TEST(PatternTest, LongNamesAndPathologicalPatternsAreLinear) {
  depgraph::Graph g;
  std::string ab;
  for (int i = 0; i < 200000; ++i) ab += "ab";
  g.InternName(ab);
  g.InternName(std::string(40, 'a') + "!");
  g.InternName(std::string(41, 'a'));
  absl::StatusOr<std::vector<bool>> m = MatchNameTable(g, {}, "(ab|c)*d");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)[1]);
  m = MatchNameTable(g, {}, "^(a|a)*$");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)[2]);
  EXPECT_TRUE((*m)[3]);
  m = MatchNameTable(g, {"*a*a*a*a*a*a*a*a*a*a*b"}, "");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)[2]);
}

TEST(PatternTest, RegexErrorsAreOneLineAndShort) {
  depgraph::Graph g;
  const std::string huge(10000, '(');
  absl::StatusOr<std::vector<bool>> m = MatchNameTable(g, {}, huge);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(m.status().message().size(), 300u);
  EXPECT_EQ(std::string(m.status().message()).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace reverie::transforms
