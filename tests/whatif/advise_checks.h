// File: tests/whatif/advise_checks.h
//
// What every answer of `reverie advise` must satisfy, whatever the trace
// (whatif/advise.h), checked by the tests on the example trace and on the
// shared traces:
// - candidates are ranked by predicted gain (the first two swapped only
//   where the order note says why) and every one changed the
//   graph; no script is both a candidate and one the trace already does
//   ("nothing to change");
// - each candidate's speedup is `reverie predict`'s with the same script
//   and the settings as a user types them (unqualified, one run);
// - each combination gains at least as much as the step before it (the
//   best single candidate, then the best pair) unless it says why, and
//   nothing follows a combination that says why;
// - the JSON has the documented keys, whatever the trace.
#ifndef REVERIE_TESTS_WHATIF_ADVISE_CHECKS_H_
#define REVERIE_TESTS_WHATIF_ADVISE_CHECKS_H_

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "whatif/advise.h"
#include "whatif/pipeline.h"

namespace reverie::testing {

inline void CheckRankedAndApplied(const whatif::Advice& a) {
  std::set<std::string> unchanged;
  for (const whatif::NotApplicable& n : a.not_applicable) {
    if (n.outcome == "unchanged") unchanged.insert(n.script);
    EXPECT_FALSE(n.reason.empty()) << n.script << " is not applicable without a reason";
  }
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const whatif::Candidate& c = a.candidates[i];
    EXPECT_EQ(c.result.outcome, whatif::TrialOutcome::kApplied) << c.label;
    EXPECT_EQ(unchanged.count(c.script), 0u)
        << c.label << " is a candidate, yet the trace already does it";
    EXPECT_GT(c.result.predicted.mean_ns, 0) << c.label;
    EXPECT_FALSE(c.confidence.empty()) << c.label;
    // The first two may be swapped, and the note then says why.
    const bool swapped = i == 1 && a.first_by_evidence;
    if (i > 0 && !swapped) {
      EXPECT_GE(a.candidates[i - 1].gain(), c.gain()) << "rank " << i + 1;
    }
  }
}

// The candidate predicted again as `reverie predict --script S --set K=V`.
inline void CheckSameAsPredict(const whatif::LoadedTrace& base, const whatif::Candidate& c,
                               const std::vector<std::pair<std::string, std::string>>& user) {
  whatif::ScriptSpec spec;
  spec.scripts = {c.script};
  for (const auto& [key, value] : c.trial.settings) {
    spec.settings.emplace_back(key.substr(key.find('.') + 1), value);  // as a user types it
  }
  for (const auto& kv : user) {
    if (c.result.used_settings.count(kv.first)) spec.settings.push_back(kv);
  }
  absl::StatusOr<whatif::Prediction> p = whatif::Predict(base, spec);
  ASSERT_TRUE(p.ok()) << c.label << ": " << p.status();
  const double base_ns = depgraph::MeanStepNs(base.baseline.steps);
  const double pred_ns = depgraph::MeanStepNs(p->sim.steps);
  EXPECT_NEAR(c.result.speedup, base_ns / pred_ns, 1e-3 * c.result.speedup) << c.label;
  EXPECT_NEAR(c.result.work_factor, p->work_factor, 1e-9) << c.label;
}

inline void CheckCombinations(const whatif::Advice& a) {
  if (a.candidates.empty()) {
    EXPECT_TRUE(a.combined.empty());
    return;
  }
  double before = a.candidates[0].gain();
  for (size_t i = 0; i < a.combined.size(); ++i) {
    const whatif::Combination& c = a.combined[i];
    EXPECT_EQ(c.labels.size(), i + 2);
    if (!c.note.empty()) {
      EXPECT_EQ(i + 1, a.combined.size()) << "a combination after one that says why: " << c.note;
      continue;
    }
    EXPECT_EQ(c.result.outcome, whatif::TrialOutcome::kApplied);
    EXPECT_GE(c.result.throughput_speedup, before)
        << "combination " << i + 1 << " gains less than the step before it without saying why";
    before = c.result.throughput_speedup;
  }
}

// The object's keys, in order.
inline std::vector<std::string> Keys(simdjson::dom::element e) {
  std::vector<std::string> out;
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return out;
  for (auto field : o) out.emplace_back(field.key);
  return out;
}

inline void CheckJsonSchema(const whatif::Advice& a) {
  const std::string text = whatif::AdviceJson(a, 1000);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text.substr(0, 400);
  using V = std::vector<std::string>;
  EXPECT_EQ(Keys(doc),
            (V{"trace", "facts", "diagnosis", "baseline_us", "baseline_noise", "candidates_total",
               "candidates", "order_note", "first_by_evidence", "combined", "combinations_tried",
               "not_applicable", "not_tried", "threads"}));
  EXPECT_EQ(Keys(doc["diagnosis"]), (V{"bound", "side", "gpu_busy_pct", "cpu_busy_pct",
                                       "unexplained_pct", "step", "limits", "lines", "warning"}));
  const V trial{"outcome",
                "reason",
                "baseline_us",
                "predicted_us",
                "speedup",
                "work_per_step",
                "throughput_speedup",
                "predicted_samples_per_s",
                "predicted_noise",
                "host_sensitivity_pct",
                "first_step_share"};
  V candidate{"rank", "script", "label", "settings"};
  candidate.insert(candidate.end(), trial.begin(), trial.end());
  candidate.insert(candidate.end(), {"gain", "confidence", "ignores", "did", "same_gain"});
  for (simdjson::dom::element c : doc["candidates"].get_array()) {
    EXPECT_EQ(Keys(c), candidate);
    EXPECT_EQ(Keys(c["confidence"]), (V{"text", "same_settings", "pairs"}));
  }
  V combined{"labels", "scripts", "settings"};
  combined.insert(combined.end(), trial.begin(), trial.end());
  combined.insert(combined.end(), {"gain", "product_of_parts", "note"});
  for (simdjson::dom::element c : doc["combined"].get_array()) EXPECT_EQ(Keys(c), combined);
  for (simdjson::dom::element n : doc["not_applicable"].get_array()) {
    EXPECT_EQ(Keys(n), (V{"script", "settings", "outcome", "reason"}));
  }
  for (simdjson::dom::element n : doc["not_tried"].get_array()) {
    EXPECT_EQ(Keys(n), (V{"script", "why"}));
  }
  int64_t total = 0;
  ASSERT_EQ(doc["candidates_total"].get_int64().get(total), simdjson::SUCCESS);
  EXPECT_EQ(total, static_cast<int64_t>(a.candidates.size()));
}

// Everything above, on one answer.
inline void CheckAdvice(const whatif::LoadedTrace& base, const whatif::Advice& a,
                        const std::vector<std::pair<std::string, std::string>>& user = {}) {
  CheckRankedAndApplied(a);
  for (const whatif::Candidate& c : a.candidates) CheckSameAsPredict(base, c, user);
  CheckCombinations(a);
  CheckJsonSchema(a);
}

}  // namespace reverie::testing

#endif  // REVERIE_TESTS_WHATIF_ADVISE_CHECKS_H_
