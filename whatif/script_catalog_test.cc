// The script header convention (whatif/script_catalog.h), the validation
// corpus behind advise's confidence column (whatif/validation_corpus.h) and
// the GPU generations advise tries (whatif/candidates.h).
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hardware/gpu_spec.h"
#include "whatif/candidates.h"
#include "whatif/script_catalog.h"
#include "whatif/validation_corpus.h"

namespace reverie::whatif {
namespace {

using ::testing::HasSubstr;

TEST(ScriptHeaderTest, ReadsSummaryPreconditionsAndIgnores) {
  const ScriptHeader h = ParseScriptHeader(
      "-- amp.lua: Automatic Mixed Precision\n"
      "--\n"
      "-- Model. Kernels run faster.\n"
      "-- Preconditions (graph:facts().precision): the kernels run in\n"
      "-- fp32 or tf32.\n"
      "-- Assumptions: none.\n"
      "-- What it ignores: casts of buffers;\n"
      "-- memory.\n"
      "--\n"
      "-- Ignores: not this one (the first label wins)\n"
      "local P = reverie.params{}\n"
      "-- Preconditions: past the header, not read\n");
  EXPECT_EQ(h.summary, "Automatic Mixed Precision");
  EXPECT_EQ(h.preconditions, "the kernels run in fp32 or tf32.");
  EXPECT_EQ(h.ignores, "casts of buffers; memory.");
}

TEST(ScriptHeaderTest, IgnoresSentenceInsideAParagraph) {
  const ScriptHeader h = ParseScriptHeader(
      "-- cg.lua: CUDA graphs\n"
      "-- Assumptions: the step is capturable. Ignores the one-time capture\n"
      "-- cost and the pool.\n"
      "--\n"
      "-- Preconditions: none\n");
  EXPECT_EQ(h.ignores, "the one-time capture cost and the pool.");
  EXPECT_EQ(h.preconditions, "none");
}

TEST(ScriptHeaderTest, ReadsAMemoryParagraph) {
  const ScriptHeader h = ParseScriptHeader(
      "-- b.lua: batch size\n"
      "-- Model. Kernels grow.\n"
      "-- Memory: activations grow\n"
      "-- with the batch.\n"
      "-- Preconditions: none\n");
  EXPECT_EQ(h.memory, "activations grow with the batch.");
  EXPECT_EQ(h.preconditions, "none");
}

TEST(ScriptHeaderTest, ShippedScriptsThatChangeMemorySayHow) {
  for (const char* name : {"batch_size", "amp", "activation_checkpointing", "vdnn", "gist", "fused_adam",
                           "pointwise_fusion", "cuda_graphs", "retarget_gpu"}) {
    const ScriptHeader h = ReadScriptHeader(name, {REVERIE_SOURCE_DIR "/scripts"});
    EXPECT_FALSE(h.summary.empty()) << name;
    EXPECT_FALSE(h.memory.empty()) << name << ".lua: its header says nothing of memory";
  }
}

TEST(ScriptHeaderTest, NoHeaderIsEmpty) {
  const ScriptHeader h = ParseScriptHeader("local x = 1\n");
  EXPECT_EQ(h.summary, "");
  EXPECT_EQ(h.preconditions, "");
  EXPECT_EQ(h.ignores, "");
}

TEST(ValidationCorpusTest, PairsWithTheSameSettingsBackACandidate) {
  // bench/accuracy: amp.lua models A1..A4b, bf16 ones and fp16 ones.
  const Backing bf16 = BackingOf("amp.lua", {{"dtype", "bf16"}});
  ASSERT_FALSE(bf16.pairs.empty());
  EXPECT_TRUE(bf16.exact);
  for (const ValidatedPair& p : bf16.pairs) EXPECT_EQ(p.settings, "dtype=bf16") << p.id;
  EXPECT_THAT(ConfidenceText(bf16), HasSubstr("A1"));
  EXPECT_LT(bf16.pairs.size(), PairsOf("amp.lua").size());
}

TEST(ValidationCorpusTest, OtherSettingsAreNamedAndNoPairIsNotValidated) {
  const Backing other = BackingOf("dataloader.lua", {{"num_workers", "3"}});
  ASSERT_FALSE(other.pairs.empty());  // D1, at num_workers=8
  EXPECT_FALSE(other.exact);
  EXPECT_THAT(ConfidenceText(other), HasSubstr("at num_workers=8"));
  EXPECT_EQ(ConfidenceText(BackingOf("no_such_script.lua", {})), "not validated");
  // A pair whose error is null (W1: its AFTER is outside the repository)
  // is left out.
  for (const ValidatedPair& p : PairsOf("dataloader.lua")) EXPECT_NE(p.id, "W1");
}

TEST(NextGenerationGpuTest, EveryStepIsANewerPartOfTheSameVendorInTheTable) {
  int steps = 0;
  for (const hardware::GpuSpec& g : hardware::GpuTable()) {
    const std::string next = NextGenerationGpu(g.key);
    if (next.empty()) continue;
    ++steps;
    const hardware::GpuSpec* n = hardware::FindGpu(next);
    ASSERT_NE(n, nullptr) << g.key << " -> " << next;
    EXPECT_EQ(n->vendor, g.vendor) << g.key;
    EXPECT_GE(std::pair(n->cc_major, n->cc_minor), std::pair(g.cc_major, g.cc_minor))
        << g.key << " -> " << next;
    EXPECT_NE(n->key, g.key);
  }
  EXPECT_GE(steps, 20);
  EXPECT_EQ(NextGenerationGpu("V100-SXM2"), "A100-SXM4-80GB");
  EXPECT_EQ(NextGenerationGpu("B200"), "");
}

}  // namespace
}  // namespace reverie::whatif
