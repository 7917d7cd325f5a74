// What `reverie advise` shows outside its JSON (whatif/advise.h): the line
// for settings that do not apply, and the HTML report's section.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "whatif/advise.h"

namespace reverie::whatif {

std::string NotApplicableLine(const NotApplicable& n) {
  const std::string what = n.label.empty() ? n.script : absl::StrCat(n.script, " ", n.label);
  const char* verb = n.outcome == "unchanged" ? "nothing to change"
                                : n.outcome == "refused" ? "refuses"
                                : n.outcome == "failed"  ? "fails"
                                                         : "not tried here";
  return absl::StrCat(what, ": ", verb, ": ", n.reason);
}

report::AdviceSection AdviceSectionOf(const Advice& a, int top) {
  report::AdviceSection s;
  s.diagnosis = a.diagnosis.lines;
  if (!a.diagnosis.warning.empty()) s.diagnosis.push_back(a.diagnosis.warning);
  auto row = [](const std::string& label, const TrialResult& r) {
    report::AdviceRow out;
    out.label = label;
    if (r.outcome == TrialOutcome::kApplied) {
      out.predicted_ns = r.predicted.mean_ns;
      out.noise = r.predicted;
      out.speedup = r.speedup;
      out.throughput = r.throughput_speedup;
    }
    return out;
  };
  const size_t shown = std::min(a.candidates.size(), static_cast<size_t>(std::max(0, top)));
  for (size_t i = 0; i < shown; ++i) {
    const Candidate& c = a.candidates[i];
    report::AdviceRow r = row(c.label, c.result);
    r.confidence = c.confidence;
    r.note = c.ignores;
    if (!c.same_gain.empty()) {
      r.label += absl::StrCat(" (the same with ", absl::StrJoin(c.same_gain, "; "), ")");
    }
    s.candidates.push_back(std::move(r));
  }
  s.order_note = a.order_note;
  for (const Combination& c : a.combined) {
    report::AdviceRow r = row(absl::StrJoin(c.labels, " + "), c.result);
    r.note = c.note;
    s.combined.push_back(std::move(r));
  }
  for (const NotApplicable& n : a.not_applicable) s.not_applicable.push_back(NotApplicableLine(n));
  return s;
}

}  // namespace reverie::whatif
