#include "report/svg.h"

#include <cmath>

#include "gtest/gtest.h"
#include "report/xml_check.h"

namespace reverie::report {
namespace {

TEST(SvgTest, EscapesText) {
  EXPECT_EQ(EscapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  Svg svg(100, 50);
  svg.Text(1, 2, "void k<float>(a&b)");
  svg.Rect(0, 0, 10, 10, "red", "tip <x>");
  const std::string s = svg.Str();
  EXPECT_EQ(testing::CheckWellFormed(s), "") << s;
  EXPECT_NE(s.find("void k&lt;float&gt;(a&amp;b)"), std::string::npos);
}

TEST(SvgTest, InlineHasNoUrl) {
  Svg svg(10, 10);
  EXPECT_NE(svg.Str().find("http://"), std::string::npos);  // standalone needs xmlns
  EXPECT_EQ(svg.StrInline().find("http"), std::string::npos);
}

TEST(SvgTest, NiceTicksCoverRange) {
  const std::vector<double> t = NiceTicks(0, 97, 5);
  ASSERT_GE(t.size(), 3u);
  EXPECT_LE(t.front(), 0);
  EXPECT_GE(t.back(), 97);
  const double step = t[1] - t[0];
  for (size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], step, 1e-9);
  // Steps are 1, 2, 2.5 or 5 times a power of ten.
  const double mant = step / std::pow(10, std::floor(std::log10(step)));
  EXPECT_TRUE(mant == 1 || mant == 2 || mant == 2.5 || mant == 5) << mant;
  EXPECT_GE(NiceTicks(3, 3).size(), 2u);
}

TEST(SvgTest, FormatsNumbers) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(2.5), "2.5");
  EXPECT_EQ(FormatNumber(1200), "1,200");
  EXPECT_EQ(FormatNumber(-1234567), "-1,234,567");
  EXPECT_EQ(FormatNumber(NAN), "n/a");
}

}  // namespace
}  // namespace reverie::report
