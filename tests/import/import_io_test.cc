// Number conversion, gzip input and the JSON writer used by --json output.
#include <zlib.h>

#include <limits>
#include <string>

#include "base/json_writer.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_importer.h"
#include "frameworks/kineto/kineto_numbers.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using kineto::ParseIntegerText;
using kineto::ParseMicrosToNanos;
using kineto::ParseTrailingInteger;

int64_t Ns(std::string_view text) {
  int64_t ns = -12345;
  EXPECT_TRUE(ParseMicrosToNanos(text, &ns)) << text;
  return ns;
}

TEST(KinetoNumbers, MicrosToNanos) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("17"), 17000);
  EXPECT_EQ(Ns("1.5"), 1500);
  EXPECT_EQ(Ns("4458676522690.655"), 4458676522690655);
  EXPECT_EQ(Ns("1712184698519123.457"), 1712184698519123457);
  EXPECT_EQ(Ns("2.0004"), 2000);
  EXPECT_EQ(Ns("2.0005"), 2001);  // half rounds away from zero
  EXPECT_EQ(Ns("-3.25"), -3250);
  EXPECT_EQ(Ns("1.5e-3"), 2);
  EXPECT_EQ(Ns("2E2"), 200000);
  EXPECT_EQ(Ns("12 \n"), 12000);
  int64_t ns = 0;
  EXPECT_FALSE(ParseMicrosToNanos("", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("abc", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1.", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1x", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("99999999999999999999999", &ns));
}

TEST(KinetoNumbers, Integers) {
  int64_t v = 0;
  EXPECT_TRUE(ParseIntegerText("24572", &v));
  EXPECT_EQ(v, 24572);
  EXPECT_TRUE(ParseIntegerText("-1", &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(ParseIntegerText("3.0", &v));
  EXPECT_EQ(v, 3);
  EXPECT_FALSE(ParseIntegerText("stream 7", &v));
  EXPECT_TRUE(ParseTrailingInteger("stream 7", &v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(ParseTrailingInteger("Spans", &v));
}

using testing::Gzip;

constexpr char kDoc[] =
    R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":2}]})J";

TEST(JsonInput, GzipIsDetectedByContentNotName) {
  const std::string path = testing::WriteTempFile(Gzip(kDoc), ".json");  // no .gz suffix
  absl::StatusOr<Trace> t = ImportKinetoJson(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events().ranges_size(), 1);
}

TEST(JsonInput, PlainJsonNamedGz) {
  const std::string path = testing::WriteTempFile(kDoc, ".json.gz");
  absl::StatusOr<Trace> t = ImportKinetoJson(path);
  ASSERT_TRUE(t.ok()) << t.status();
}

TEST(JsonInput, MultiMemberGzip) {
  const std::string doc = kDoc;
  const std::string two = Gzip(doc.substr(0, 40)) + Gzip(doc.substr(40));
  absl::StatusOr<kineto::JsonInput> in = kineto::InflateGzip(two, "two.gz");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->text(), doc);
  absl::StatusOr<Trace> t = ImportKinetoJson(testing::WriteTempFile(two, ".json.gz"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events().ranges_size(), 1);
}

TEST(JsonInput, TruncatedGzipIsDataLoss) {
  const std::string gz = Gzip(std::string(kDoc) + std::string(5000, ' '));
  for (size_t keep : {gz.size() - 3, gz.size() / 2, size_t{12}}) {
    absl::StatusOr<kineto::JsonInput> in = kineto::InflateGzip(gz.substr(0, keep), "cut.gz");
    ASSERT_FALSE(in.ok()) << keep;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kDataLoss) << in.status();
    EXPECT_NE(in.status().message().find("cut.gz"), absl::string_view::npos);
    EXPECT_NE(in.status().message().find("truncated"), absl::string_view::npos) << in.status();
  }
}

TEST(JsonInput, CorruptGzipIsDataLoss) {
  std::string gz = Gzip(std::string(kDoc) + std::string(5000, 'x'));
  for (size_t i = 12; i < 40; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  absl::StatusOr<kineto::JsonInput> in = kineto::InflateGzip(gz, "bad.gz");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kDataLoss) << in.status();
}

TEST(JsonInput, PaddingIsZeroed) {
  absl::StatusOr<kineto::JsonInput> in = kineto::InflateGzip(Gzip("{}"), "x.gz");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->size(), 2u);
  for (size_t i = 0; i < kineto::kJsonPadding; ++i) EXPECT_EQ(in->data()[2 + i], '\0');
}

TEST(JsonWriter, NestedValuesAndEscaping) {
  JsonWriter w(0);
  w.BeginObject();
  w.Field("s", std::string_view("a\"b\\c\n\t\x01\xc3\xa9"));
  w.Field("i", int64_t{-3});
  w.Field("d", 0.1);
  w.Field("inf", std::numeric_limits<double>::infinity());
  w.Field("b", true);
  w.Key("a").BeginArray().Int(1).String("x").BeginObject().EndObject().BeginArray().EndArray();
  w.EndArray();
  w.Key("n").Null();
  w.EndObject();
  EXPECT_EQ(w.str(),
            "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9\",\"i\":-3,\"d\":0.1,\"inf\":null,"
            "\"b\":true,\"a\":[1,\"x\",{},[]],\"n\":null}");
}

TEST(JsonWriter, Indented) {
  JsonWriter w(2);
  w.BeginObject().Field("a", 1).Key("b").BeginArray().Int(2).EndArray().EndObject();
  EXPECT_EQ(w.str(), "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}");
}

}  // namespace
}  // namespace reverie
