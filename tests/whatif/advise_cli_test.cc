// `reverie advise` and `reverie scripts` from the command line, on the
// example trace: each advise candidate's speedup is what `reverie predict`
// prints for the same script and settings; the text has its sections; bad
// input is one line naming the problem with exit status 2; `scripts`
// lists the library with its parameters, and with --trace whether each
// script applies.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class AdviseCliTest : public ::testing::Test {
 protected:
  CliResult Run(const std::vector<std::string>& args) {
    return RunCli(kCli, args, TempDir("advise_cli"));
  }
};

TEST_F(AdviseCliTest, EachCandidateIsWhatPredictSays) {
  const CliResult r = Run({"advise", kExampleTrace, "--json", "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  int checked = 0;
  for (simdjson::dom::element c : doc["candidates"].get_array()) {
    std::vector<std::string> args{"predict", kExampleTrace, "--json", "--script",
                                  std::string(c["script"].get_string().value())};
    for (auto field : c["settings"].get_object()) {
      const std::string key(field.key);
      args.push_back("--set");
      args.push_back(key.substr(key.find('.') + 1) + "=" +
                     std::string(field.value.get_string().value()));
    }
    const CliResult p = Run(args);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    simdjson::dom::parser pp;
    simdjson::dom::element pred;
    ASSERT_EQ(pp.parse(p.out).get(pred), simdjson::SUCCESS);
    const double advised = c["speedup"].get_double().value();
    EXPECT_NEAR(advised, pred["speedup"].get_double().value(), 1e-3 * advised)
        << c["label"].get_string().value();
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST_F(AdviseCliTest, TextHasEverySection) {
  const CliResult r = Run({"advise", kExampleTrace, "--top", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* section : {"diagnosis\n", "candidates, ranked by predicted gain (2 of ",
                              "\ncombined", "\nnot tried\n", "confidence"}) {
    EXPECT_THAT(r.out, HasSubstr(section));
  }
  EXPECT_THAT(r.out, HasSubstr("   1  "));
  EXPECT_THAT(r.out, HasSubstr("   2  "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("   3  ")));
}

TEST_F(AdviseCliTest, BadInputIsOneLine) {
  CliResult r = Run({"advise", kExampleTrace, "--set", "no_such_key=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("reverie: "));
  EXPECT_THAT(r.err, HasSubstr("no_such_key"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = Run({"advise", "/nonexistent/trace.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/trace.json"));
  r = Run({"advise", kExampleTrace, "--top", "0"});
  EXPECT_EQ(r.exit_code, 2);
}

// report --advise puts advise first, with the same candidates in the same
// order; it needs no --script.
TEST_F(AdviseCliTest, ReportOpensWithTheAdvice) {
  const std::string dir = TempDir("advise_report");
  const CliResult r =
      RunCli(kCli, {"report", kExampleTrace, "--advise", "-o", dir + "/r.html"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = ReadFile(dir + "/r.html");
  const size_t advice = html.find("<h2>What to try first</h2>");
  ASSERT_NE(advice, std::string::npos);
  EXPECT_LT(advice, html.find("<h2>Summary</h2>"));
  const CliResult a = Run({"advise", kExampleTrace, "--json", "--top", "15"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(a.out).get(doc), simdjson::SUCCESS);
  size_t at = advice;
  for (simdjson::dom::element c : doc["candidates"].get_array()) {
    const std::string label(c["label"].get_string().value());
    const size_t found = html.find(label, at);
    EXPECT_NE(found, std::string::npos) << label;
    if (found != std::string::npos) at = found;  // in advise's order
  }
  EXPECT_THAT(html, HasSubstr("Not applicable"));
}

TEST_F(AdviseCliTest, ScriptsListsTheLibraryWithParameters) {
  const CliResult r = Run({"scripts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"amp.lua: ", "dataloader.lua: ", "retarget_gpu.lua: ", "  preconditions: ",
                        "num_workers"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("\ncommon.lua: ")));  // lib/ holds helpers
  // Every shipped script's parameters are read (describe mode).
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("cannot be read")));
}

TEST_F(AdviseCliTest, ScriptsOnATraceSaysWhetherEachApplies) {
  const CliResult r = Run({"scripts", "amp.lua", "--trace", kExampleTrace, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array scripts = doc["scripts"].get_array();
  ASSERT_EQ(scripts.size(), 1u);
  simdjson::dom::element amp = scripts.at(0);
  EXPECT_EQ(std::string(amp["name"].get_string().value()), "amp.lua");
  bool has_dtype = false;
  for (simdjson::dom::element p : amp["params"].get_array()) {
    has_dtype |= std::string(p["name"].get_string().value()) == "dtype";
  }
  EXPECT_TRUE(has_dtype);
  EXPECT_THAT(std::string(amp["on_trace"]["verdict"].get_string().value()),
              ::testing::AnyOf(StartsWith("applies: "), StartsWith("nothing to change: ")));
  const CliResult missing = Run({"scripts", "no_such_script.lua"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("no_such_script"));
}

}  // namespace
}  // namespace reverie::testing
