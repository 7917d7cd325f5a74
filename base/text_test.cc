#include "base/text.h"

#include <string>

#include "gtest/gtest.h"

namespace reverie {
namespace {

TEST(AbbreviateTest, KeepsShortTextAndBothEndsOfLongText) {
  EXPECT_EQ(Abbreviate("short", 10), "short");
  const std::string name(3000, 'k');
  const std::string msg = "dependency 12 (" + name + ") -> 14 would create a cycle";
  const std::string cut = Abbreviate(msg, 200);
  EXPECT_LT(cut.size(), 260u);
  EXPECT_EQ(cut.rfind("dependency 12 (", 0), 0u);
  EXPECT_NE(cut.find("would create a cycle"), std::string::npos);
  EXPECT_NE(cut.find("bytes) ..."), std::string::npos);
}

TEST(AbbreviateTest, NeverSplitsAUtf8Character) {
  std::string s;
  for (int i = 0; i < 200; ++i) s += "\xc3\xa9";  // é
  const std::string cut = Abbreviate(s, 51);
  for (size_t i = 0; i + 1 < cut.size(); ++i) {
    if (static_cast<unsigned char>(cut[i]) == 0xc3) {
      EXPECT_EQ(static_cast<unsigned char>(cut[i + 1]), 0xa9);
    }
  }
  EXPECT_NE(static_cast<unsigned char>(cut[0]), 0xa9);
}

// Bytes that are not UTF-8 (a run of continuation bytes) are cut where they
// fall: the result stays about `max` bytes (fuzz_lua_script: a refusal of
// 1 MiB of 0x80 bytes printed all of it).
TEST(AbbreviateTest, TextThatIsNotUtf8IsStillCut) {
  const std::string s(1 << 20, '\x80');
  const std::string cut = Abbreviate(s, 300);
  EXPECT_LT(cut.size(), 360u);
  EXPECT_NE(cut.find("bytes) ..."), std::string::npos);
}

}  // namespace
}  // namespace reverie
