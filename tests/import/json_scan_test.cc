// ScanJsonLayout: the pass that finds the event array and the cut points
// the parser feeds simdjson one chunk at a time, and the vector character
// classifiers under it.
#include "frameworks/kineto/json_scan.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace reverie::kineto {
namespace {

constexpr size_t kNone = JsonLayout::kNone;

TEST(JsonScan, EveryClassifierGivesThePortableMasks) {
  std::mt19937 rng(7);
  const std::string alphabet = "\"\\{}[]:, \n\t0aZ\x01\x80\xff";
  std::string text(64 * 37, ' ');
  for (char& c : text) c = rng() % 4 == 0 ? '\0' : alphabet[rng() % alphabet.size()];
  const std::vector<internal::ClassifyFn> fns = internal::AvailableClassifiers();
  ASSERT_GE(fns.size(), 1u);
  std::vector<internal::BlockMasks> want(37), got(37);
  fns[0](text.data(), 37, want.data());
  for (size_t i = 0; i < 64 * 37; ++i) {
    const uint64_t bit = uint64_t{1} << (i % 64);
    const internal::BlockMasks& m = want[i / 64];
    EXPECT_EQ((m.quote & bit) != 0, text[i] == '"') << i;
    EXPECT_EQ((m.open & bit) != 0, text[i] == '{' || text[i] == '[') << i;
    EXPECT_EQ((m.nul & bit) != 0, text[i] == '\0') << i;
  }
  for (size_t f = 1; f < fns.size(); ++f) {
    fns[f](text.data(), 37, got.data());
    for (size_t b = 0; b < 37; ++b) {
      SCOPED_TRACE(::testing::Message() << "classifier " << f << " block " << b);
      EXPECT_EQ(got[b].quote, want[b].quote);
      EXPECT_EQ(got[b].backslash, want[b].backslash);
      EXPECT_EQ(got[b].open, want[b].open);
      EXPECT_EQ(got[b].close, want[b].close);
      EXPECT_EQ(got[b].nul, want[b].nul);
    }
  }
}

TEST(JsonScan, BackslashRunsPairUpAcrossBlocks) {
  uint64_t carry = 0;
  // "\\\"": the first two pair up, the third escapes bit 3.
  EXPECT_EQ(internal::EscapedChars(0b0111, &carry), uint64_t{1} << 3);
  EXPECT_EQ(carry, 0u);
  // A run of three ending at bit 63 escapes the next block's first byte.
  EXPECT_EQ(internal::EscapedChars(uint64_t{7} << 61, &carry), 0u);
  EXPECT_EQ(carry, 1u);
  // That byte is a backslash: escaped, so the one after it starts a new run.
  EXPECT_EQ(internal::EscapedChars(0b011, &carry), uint64_t{1} | uint64_t{1} << 2);
  EXPECT_EQ(carry, 0u);
  // An even run escapes nothing.
  EXPECT_EQ(internal::EscapedChars(0b1100, &carry), 0u);
}

TEST(JsonScan, ObjectForm) {
  const std::string text =
      R"({"schemaVersion": 1, "a": {"traceEvents": [1]}, "traceEvents" : [{"ph": "X"},)"
      R"( {"name": "[{\"]"}], "z": "]"})"
      "\n";
  const JsonLayout l = ScanJsonLayout(text, 1);
  EXPECT_EQ(l.form, JsonLayout::Form::kObject);
  ASSERT_NE(l.events_open, kNone);
  EXPECT_EQ(text[l.events_open], '[');
  EXPECT_EQ(text.substr(l.events_open - 16, 13), "\"traceEvents\"") << "the depth-1 key only";
  ASSERT_NE(l.events_close, kNone);
  EXPECT_EQ(text.substr(l.events_close, 3), "], ");
  ASSERT_EQ(l.cuts.size(), 1u);
  EXPECT_EQ(text[l.cuts[0]], ',');
  EXPECT_EQ(l.elements, 2u);
  EXPECT_EQ(l.value_end, text.size() - 1);
  EXPECT_EQ(l.trailing, kNone);
  EXPECT_TRUE(l.splittable());
}

TEST(JsonScan, CutsAreAboutChunkBytesApart) {
  std::string text = "[";
  for (int i = 0; i < 100; ++i) text += std::string(i ? ",\n" : "") + R"({"ph": "X", "ts": 1})";
  text += "]";
  const JsonLayout l = ScanJsonLayout(text, 200);
  EXPECT_EQ(l.elements, 100u);
  ASSERT_GE(l.cuts.size(), 9u);
  size_t prev = l.events_open;
  for (size_t cut : l.cuts) {
    EXPECT_EQ(text[cut], ',');
    EXPECT_GE(cut - prev, 200u);
    prev = cut;
  }
}

TEST(JsonScan, UnclosedArrays) {
  const std::string whole = R"([{"ph": "X"}, {"ph": "B"})";
  JsonLayout l = ScanJsonLayout(whole, 1);
  EXPECT_EQ(l.form, JsonLayout::Form::kArray);
  EXPECT_EQ(l.events_close, kNone);
  EXPECT_EQ(l.complete_end, whole.size());
  EXPECT_FALSE(l.cut_element);
  EXPECT_TRUE(l.splittable());

  const std::string trailing_comma = whole + ",\n";
  l = ScanJsonLayout(trailing_comma, 1);
  EXPECT_EQ(l.complete_end, whole.size());
  EXPECT_FALSE(l.cut_element);
  for (size_t cut : l.cuts) EXPECT_LT(cut, l.complete_end);

  for (const std::string tail : {R"(, {"ph": "X", "na)", R"(, {"ph": "X", "args": {"a": [1, )",
                                 R"(, {"name": "a]}\"}, {)"}) {
    SCOPED_TRACE(tail);
    l = ScanJsonLayout(whole + tail, 1);
    EXPECT_EQ(l.complete_end, whole.size());
    EXPECT_TRUE(l.cut_element);
    EXPECT_EQ(l.elements, 2u);
  }
  l = ScanJsonLayout(R"([{"ph": "X", "ts)", 1);
  EXPECT_EQ(l.complete_end, 1u);
  EXPECT_TRUE(l.cut_element);
}

TEST(JsonScan, WhatFollowsTheValue) {
  JsonLayout l = ScanJsonLayout("{\"traceEvents\":[]}\n{\"traceEvents\":[]}", 1);
  EXPECT_EQ(l.trailing, 19u);
  l = ScanJsonLayout("[{\"ph\":\"X\"}] x", 1);
  EXPECT_EQ(l.trailing, 13u);
  l = ScanJsonLayout(std::string("{\"traceEvents\":[{\"ts\":2\0 0}]}", 29), 1);
  EXPECT_EQ(l.first_nul, 23u);
  EXPECT_FALSE(l.splittable());
  l = ScanJsonLayout(R"([{"a": [1}, "]"]})", 1);
  EXPECT_EQ(l.mismatched_bracket, 9u);
  EXPECT_FALSE(l.splittable());
  EXPECT_EQ(ScanJsonLayout(R"([{"a": [1, "}"]}])", 1).mismatched_bracket, kNone);
}

TEST(JsonScan, LayoutsTheParserMustNotSplit) {
  // Two event arrays, or a key that only looks like "traceEvents".
  EXPECT_TRUE(ScanJsonLayout(R"({"traceEvents": [], "traceEvents": []})", 1).inconsistent);
  EXPECT_TRUE(ScanJsonLayout(R"({"x\"traceEvents": []})", 1).inconsistent);
  EXPECT_TRUE(ScanJsonLayout("]", 1).form == JsonLayout::Form::kOther);
  EXPECT_TRUE(ScanJsonLayout("{}}", 1).trailing != kNone);
  // An object cut off, or without events, is parsed whole (for its error).
  EXPECT_FALSE(ScanJsonLayout(R"({"traceEvents": [{"ph": "X"})", 1).splittable());
  EXPECT_FALSE(ScanJsonLayout(R"({"nodes": []})", 1).splittable());
  EXPECT_FALSE(ScanJsonLayout("  42 ", 1).splittable());
}

}  // namespace
}  // namespace reverie::kineto
