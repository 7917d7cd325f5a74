#include "lua/script_runner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDirForTest("runner_test");
    fs::create_directories(dir_ / "lib");
    Write("halve.lua",
          "local P = reverie.params{factor = {default = 0.5, doc = 'scale'}}\n"
          "graph:select{kind = 'kernel'}:scale(P.factor)\n");
    Write("check.lua",
          "local P = reverie.params{expect = {default = 50000, doc = 'gemm ns'}}\n"
          "local g = graph:select{name = 'volta_sgemm_64x64_nn'}[1]\n"
          "assert(g.duration_ns == P.expect, 'got ' .. g.duration_ns)\n"
          "graph:insert{kind = 'cpu_work', name = 'x', after = g:launcher(), duration_ns = 1}\n");
    Write("broken.lua", "graph:all():scale(3)\nlocal x = nil\nx.y = 1\n");
    Write("lib/helper.lua", "return {answer = 42}\n");
    Write("uses_lib.lua",
          "local h = reverie.include('lib/helper.lua')\n"
          "assert(h.answer == 42 and reverie.include('lib/helper.lua') == h)\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  RunnerOptions Options(std::vector<std::pair<std::string, std::string>> sets = {}) {
    RunnerOptions o;
    o.script_dirs = {dir_.string()};
    o.settings = std::move(sets);
    return o;
  }
  fs::path dir_;
  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
};

TEST_F(RunnerTest, ResolvesByNameAndByPath) {
  auto r = ResolveScript("halve", {dir_.string()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->display_name, "halve.lua");
  EXPECT_EQ(r->stem, "halve");
  r = ResolveScript("halve.lua", {"/nonexistent", dir_.string()});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, (dir_ / "halve.lua").string());
  r = ResolveScript((dir_ / "check.lua").string(), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, (dir_ / "check.lua").string());
  EXPECT_EQ(r->display_name, "check.lua");  // a long path is named by its file
  r = ResolveScript("nope.lua", {dir_.string()});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("REVERIE_SCRIPTS_DIR"));
}

TEST_F(RunnerTest, DefaultDirsHonourTheEnvironment) {
  ::setenv("REVERIE_SCRIPTS_DIR", "/a:/b", 1);
  const std::vector<std::string> d = DefaultScriptDirs();
  ::unsetenv("REVERIE_SCRIPTS_DIR");
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0], "/a");
  EXPECT_EQ(d[1], "/b");
}

TEST_F(RunnerTest, ParseSetting) {
  EXPECT_EQ(ParseSetting("workers=8")->second, "8");
  EXPECT_EQ(ParseSetting("ddp.mode=a=b")->first, "ddp.mode");
  EXPECT_EQ(ParseSetting("ddp.mode=a=b")->second, "a=b");
  EXPECT_FALSE(ParseSetting("workers").ok());
  EXPECT_FALSE(ParseSetting("=3").ok());
}

TEST_F(RunnerTest, ScriptsRunInOrderOnTheSameGraph) {
  ScriptRunner runner(Options({{"check.expect", "25000"}}));
  ASSERT_TRUE(runner.Run({"halve.lua", "check.lua"}, {}, &g_).ok());
  ASSERT_EQ(runner.reports().size(), 2u);
  EXPECT_EQ(runner.reports()[0].changes.modified, 18);
  EXPECT_EQ(runner.reports()[1].changes.added, 1);
  EXPECT_EQ(runner.total_changes().modified, 18);
  EXPECT_EQ(runner.total_changes().added, 1);
  EXPECT_EQ(runner.reports()[1].params[0].value_text, "25000");
}

// Run(input, result) reads its input in place and writes the result only
// when a script committed edits (whatif::Predict copies nothing for a
// script that finds nothing to change).
TEST_F(RunnerTest, AnInputReadInPlaceAndAResultOnlyWhenChanged) {
  const depgraph::Graph before = g_;
  depgraph::Graph result;
  Write("nothing.lua", "reverie.nothing_to_change('nothing here')\n");
  ScriptRunner unchanged(Options());
  ASSERT_TRUE(unchanged.Run({"nothing.lua"}, {}, g_, &result).ok());
  EXPECT_FALSE(unchanged.changed());
  EXPECT_EQ(result.task_count(), 0u);  // untouched
  ScriptRunner halved(Options());
  ASSERT_TRUE(halved.Run({"halve.lua"}, {}, g_, &result).ok());
  EXPECT_TRUE(halved.changed());
  EXPECT_TRUE(transforms::Diff(before, g_).empty());  // the input is only read
  EXPECT_EQ(transforms::Diff(g_, result).modified, 18);
  EXPECT_EQ(halved.total_changes().modified, 18);
}

TEST_F(RunnerTest, AFailingScriptLeavesTheGraphUntouched) {
  const depgraph::Graph before = g_;
  ScriptRunner runner(Options());
  const absl::Status s = runner.Run({"halve.lua", "broken.lua"}, {}, &g_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("broken.lua:3:"));
  EXPECT_TRUE(transforms::Diff(before, g_).empty());
}

TEST_F(RunnerTest, UnknownSettingsNameTheScripts) {
  ScriptRunner a(Options({{"factr", "2"}}));
  const depgraph::Graph before = g_;
  absl::Status s = a.Run({"halve.lua", "uses_lib.lua"}, {}, &g_);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("unknown parameter 'factr': not declared by halve.lua, uses_lib.lua"));
  EXPECT_TRUE(transforms::Diff(before, g_).empty());  // both scripts ran; nothing kept
  ScriptRunner b(Options({{"ddp.workers", "2"}}));
  s = b.Run({"halve.lua"}, {}, &g_);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no script 'ddp' in this run"));
  ScriptRunner c(Options({{"halve.factr", "2"}}));
  s = c.Run({"halve.lua", "check.lua"}, {}, &g_);
  EXPECT_THAT(std::string(s.message()), HasSubstr("halve.lua:1: unknown parameter 'factr'"));
  ScriptRunner d(Options({{"factr", "2"}}));
  s = d.Run({"halve.lua"}, {}, &g_);
  EXPECT_THAT(std::string(s.message()), HasSubstr("halve.lua:1: unknown parameter 'factr'"));
}

TEST_F(RunnerTest, IncludeLoadsFromTheLibraryOnce) {
  ScriptRunner runner(Options());
  const absl::Status s = runner.Run({"uses_lib"}, {}, &g_);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(RunnerTest, ScriptsGivenAsTextRunUnderTheirName) {
  RunnerOptions o = Options({{"mine.factor", "0.25"}});
  o.sources = {{"mine.lua",
                "local P = reverie.params{factor = {default = 1, doc = 'scale'}}\n"
                "graph:select{kind = 'kernel'}:scale(P.factor)\n"},
               {"bad.lua", "local x = nil\nx.y = 1\n"}};
  ScriptRunner runner(o);
  const absl::Status s = runner.Run({"mine.lua", "halve"}, {}, &g_);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(runner.reports().size(), 2u);
  EXPECT_EQ(runner.reports()[0].script.display_name, "mine.lua");
  EXPECT_EQ(runner.reports()[0].script.path, "");
  EXPECT_EQ(runner.reports()[0].params[0].value_text, "0.25");
  EXPECT_EQ(runner.reports()[0].changes.modified, 18);
  // Errors name the script by its given name and line.
  o.settings.clear();
  ScriptRunner failing(o);
  const depgraph::Graph before = g_;
  const absl::Status e = failing.Run({"bad.lua"}, {}, &g_);
  EXPECT_THAT(std::string(e.message()), HasSubstr("bad.lua:2:"));
  EXPECT_TRUE(transforms::Diff(before, g_).empty());
}

// Describe mode (`reverie scripts`): the declared parameters, their
// defaults, docs and bounds, without a trace; the run ends at
// reverie.params, so nothing after it runs.
TEST_F(RunnerTest, DescribeReadsTheParametersAndStopsThere) {
  Write("declare.lua",
        "local P = reverie.params{\n"
        "  workers = {default = 4, min = 1, max = 64, integer = true, doc = 'how many'},\n"
        "  fast = {default = false, doc = 'go fast'},\n"
        "  mode = {default = 'ring', doc = 'the algorithm'},\n"
        "  scale = {default = 0.5, min = 0, doc = 'a factor'}}\n"
        "error('describe mode must stop at reverie.params')\n");
  absl::StatusOr<ScriptDescription> d = DescribeScript("declare", {}, {dir_.string()});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->described);
  EXPECT_EQ(d->script.display_name, "declare.lua");
  EXPECT_THAT(d->text, HasSubstr("reverie.params"));
  ASSERT_EQ(d->params.size(), 4u);  // sorted by name
  const ParamValue& fast = d->params[0];
  EXPECT_EQ(fast.name, "fast");
  EXPECT_EQ(fast.type, "boolean");
  EXPECT_EQ(fast.default_text, "false");
  EXPECT_FALSE(fast.min.has_value());
  const ParamValue& mode = d->params[1];
  EXPECT_EQ(mode.type, "string");
  EXPECT_EQ(mode.default_text, "ring");
  EXPECT_EQ(mode.doc, "the algorithm");
  const ParamValue& scale = d->params[2];
  EXPECT_EQ(scale.min, 0.0);
  EXPECT_FALSE(scale.max.has_value());
  EXPECT_FALSE(scale.integer);
  const ParamValue& workers = d->params[3];
  EXPECT_EQ(workers.type, "number");
  EXPECT_EQ(workers.default_text, "4");
  EXPECT_EQ(workers.min, 1.0);
  EXPECT_EQ(workers.max, 64.0);
  EXPECT_TRUE(workers.integer);
  EXPECT_FALSE(workers.overridden);
}

TEST_F(RunnerTest, DescribeRunsGraphWorkBeforeParamsOnAnEmptyGraph) {
  // Graph work before the declaration sees no tasks and must not fail.
  Write("early.lua",
        "local training = not graph:select{kind = 'kernel', phase = 'backward'}:empty()\n"
        "local n = #graph:all() + graph:task_count() + #graph:resources('stream')\n"
        "local f = graph:facts()\n"
        "local tl = graph:simulate()\n"
        "local P = reverie.params{cast = {default = training, doc = 'depends on the trace'},\n"
        "                         n = {default = n, doc = 'tasks'}}\n");
  absl::StatusOr<ScriptDescription> d = DescribeScript("early.lua", {}, {dir_.string()});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->params.size(), 2u);
  EXPECT_EQ(d->params[0].default_text, "false");
  EXPECT_EQ(d->params[1].default_text, "0");
  // A script without parameters runs to its end; one that fails before its
  // declaration reports the script's own error.
  absl::StatusOr<ScriptDescription> none = DescribeScript("uses_lib.lua", {}, {dir_.string()});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->described);
  EXPECT_TRUE(none->params.empty());
  absl::StatusOr<ScriptDescription> broken = DescribeScript("broken", {}, {dir_.string()});
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr("broken.lua:3:"));
  EXPECT_EQ(DescribeScript("missing", {}, {dir_.string()}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(RunnerTest, DescribeEveryLibraryScriptDeclaresDocumentedParameters) {
  // The shipped library, as `reverie scripts` reads it.
  const std::vector<std::string> dirs = {REVERIE_SOURCE_DIR "/scripts"};
  for (const auto& entry : fs::directory_iterator(dirs[0])) {
    if (entry.path().extension() != ".lua") continue;
    const std::string name = entry.path().filename().string();
    absl::StatusOr<ScriptDescription> d = DescribeScript(name, {}, dirs);
    ASSERT_TRUE(d.ok()) << name << ": " << d.status();
    if (name == "identity.lua") continue;
    EXPECT_TRUE(d->described) << name;
    EXPECT_FALSE(d->params.empty()) << name;
    for (const ParamValue& p : d->params) EXPECT_FALSE(p.doc.empty()) << name << " " << p.name;
  }
}

TEST_F(RunnerTest, MissingScriptIsReportedBeforeAnythingRuns) {
  ScriptRunner runner(Options());
  const absl::Status s = runner.Run({"halve.lua", "missing.lua"}, {}, &g_);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(runner.reports().empty());
}

}  // namespace
}  // namespace reverie::lua
