#include "whatif/advise.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "whatif/candidates.h"
#include "whatif/script_catalog.h"
#include "whatif/validation_corpus.h"

namespace reverie::whatif {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

std::string Stem(const std::string& script) {
  return std::filesystem::path(script).stem().string();
}

bool UserSets(const Settings& user, const std::string& stem, const std::string& key) {
  for (const auto& [k, v] : user) {
    if (k == key || k == absl::StrCat(stem, ".", key)) return true;
  }
  return false;
}

// A plan as a trial: its settings qualified with the script's stem (so
// they reach it alone when several scripts run together), except those the
// user's --set overrides.
Trial MakeTrial(const CandidatePlan& p, const Settings& user) {
  Trial t{{p.script}, {}};
  const std::string stem = Stem(p.script);
  for (const auto& [k, v] : p.settings) {
    if (!UserSets(user, stem, k)) t.settings.emplace_back(absl::StrCat(stem, ".", k), v);
  }
  return t;
}

// "num_workers=8": the parameters a run changed from their defaults (the
// table's settings and the user's), else the planned ones.
std::string SettingsText(const TrialResult& r, const Trial& t) {
  std::vector<std::string> parts;
  for (const lua::ScriptReport& s : r.reports) {
    for (const lua::ParamValue& p : s.params) {
      if (p.overridden) parts.push_back(absl::StrCat(p.name, "=", p.value_text));
    }
  }
  if (r.reports.empty()) {
    for (const auto& [k, v] : t.settings) {
      parts.push_back(absl::StrCat(k.substr(k.find('.') + 1), "=", v));
    }
  }
  return absl::StrJoin(parts, ", ");
}

std::string Label(const std::string& script, const std::string& settings) {
  return settings.empty() ? script : absl::StrCat(script, " ", settings);
}

// Every user setting served a tried script; one that did not is refused,
// as predict refuses it.
absl::Status CheckUserSettings(const Settings& user, const std::vector<TrialResult>& results,
                               const std::vector<CandidatePlan>& plans) {
  std::set<std::string> used, stems, skipped;
  for (const TrialResult& r : results) used.insert(r.used_settings.begin(), r.used_settings.end());
  for (const CandidatePlan& p : plans) (p.skip.empty() ? stems : skipped).insert(Stem(p.script));
  for (const auto& [key, value] : user) {
    if (used.count(key)) continue;
    const size_t dot = key.find('.');
    const std::string stem = dot == std::string::npos ? "" : key.substr(0, dot);
    if (!stem.empty() && skipped.count(stem) && !stems.count(stem)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set ", key, ": ", stem, ".lua is not tried on this trace"));
    }
    if (!stem.empty() && !stems.count(stem)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set ", key, ": no script '", stem, "' among advise's candidates"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown parameter '", key, "': not declared by any script advise tried"));
  }
  return absl::OkStatus();
}

// One line per script, outcome and reason, naming the settings sharing it.
void AddNotApplicable(const std::string& script, const std::string& settings,
                      const std::string& outcome, const std::string& reason,
                      std::vector<NotApplicable>* out) {
  for (NotApplicable& n : *out) {
    if (n.script == script && n.outcome == outcome && n.reason == reason) {
      if (!settings.empty()) n.label = n.label.empty() ? settings : n.label + "; " + settings;
      return;
    }
  }
  out->push_back({script, settings, outcome, reason});
}

// The best two and three candidates of different scripts that gain,
// composed in the table's order.
std::vector<Combination> PlanCombinations(const std::vector<Candidate>& ranked) {
  std::vector<const Candidate*> best;
  std::set<std::string> scripts;
  for (const Candidate& c : ranked) {
    if (best.size() == 3 || c.gain() <= 1) break;
    if (scripts.insert(c.script).second) best.push_back(&c);
  }
  std::vector<Combination> out;
  for (size_t n = 2; n <= best.size(); ++n) {
    std::vector<const Candidate*> parts(best.begin(), best.begin() + n);
    std::stable_sort(parts.begin(), parts.end(),
                     [](const Candidate* a, const Candidate* b) { return a->order < b->order; });
    Combination c;
    for (const Candidate* p : parts) {
      c.labels.push_back(p->label);
      c.trial.scripts.push_back(p->script);
      c.trial.settings.insert(c.trial.settings.end(), p->trial.settings.begin(),
                              p->trial.settings.end());
      c.product *= p->gain();
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

absl::StatusOr<Advice> Advise(const LoadedTrace& base, const AdviseOptions& options) {
  Advice a;
  a.trace_path = base.path;
  a.facts = base.model.facts;
  // Before the trials share `base`: the critical paths fill its caches.
  a.diagnosis = Diagnose(base);
  const Settings& user = options.spec.settings;
  const std::vector<CandidatePlan> plans = PlanCandidates(base, a.diagnosis);
  std::vector<Trial> trials;
  std::vector<const CandidatePlan*> owner;
  for (const CandidatePlan& p : plans) {
    if (!p.skip.empty()) {
      AddNotApplicable(p.script, "", "skipped", p.skip, &a.not_applicable);
      continue;
    }
    Trial t = MakeTrial(p, user);
    const bool seen = std::any_of(trials.begin(), trials.end(), [&t](const Trial& o) {
      return o.scripts == t.scripts && o.settings == t.settings;
    });
    if (seen) continue;  // the user's --set made two settings the same
    trials.push_back(std::move(t));
    owner.push_back(&p);
  }
  a.threads = TrialThreads(options.threads, trials.size());
  const std::vector<TrialResult> results = RunTrials(base, trials, options.spec, options.threads);
  if (absl::Status s = CheckUserSettings(user, results, plans); !s.ok()) return s;
  std::map<std::string, ScriptHeader> headers;
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::string& script = owner[i]->script;
    const std::string settings = SettingsText(results[i], trials[i]);
    if (results[i].outcome != TrialOutcome::kApplied) {
      AddNotApplicable(script, settings, std::string(TrialOutcomeName(results[i].outcome)),
                       results[i].reason, &a.not_applicable);
      continue;
    }
    if (!headers.count(script)) {
      headers[script] = ReadScriptHeader(script, options.spec.script_dirs);
    }
    a.candidates.push_back({script, Label(script, settings), trials[i], results[i],
                            owner[i]->order, ConfidenceText(script), headers[script].ignores});
  }
  std::stable_sort(a.candidates.begin(), a.candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.gain() > y.gain(); });
  a.combined = PlanCombinations(a.candidates);
  std::vector<Trial> combos;
  for (const Combination& c : a.combined) combos.push_back(c.trial);
  const std::vector<TrialResult> combined = RunTrials(base, combos, options.spec, options.threads);
  for (size_t i = 0; i < combined.size(); ++i) a.combined[i].result = combined[i];
  for (const std::string& name : LibraryScriptNames(options.spec.script_dirs)) {
    if (!IsCandidateScript(name)) a.not_tried.push_back({name, WhyNotTried(name)});
  }
  return a;
}

}  // namespace reverie::whatif
