#include "whatif/advise.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "depgraph/step_time.h"
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

// The parameters a run changed from their defaults (the table's settings
// and the user's), unqualified; else, when the run stopped before it
// reported them (a refusal), the plan's with the user's in their place.
Settings EffectiveSettings(const TrialResult& r, const CandidatePlan& plan, const Settings& user) {
  Settings out;
  for (const lua::ScriptReport& s : r.reports) {
    for (const lua::ParamValue& p : s.params) {
      if (p.overridden) out.emplace_back(p.name, p.value_text);
    }
  }
  if (!r.reports.empty()) return out;
  const std::string stem = Stem(plan.script);
  for (const auto& [k, v] : plan.settings) {
    std::string value = v;
    for (const auto& [uk, uv] : user) {
      if (uk == k || uk == absl::StrCat(stem, ".", k)) value = uv;
    }
    out.emplace_back(k, value);
  }
  return out;
}

// "num_workers=8, pin_memory=true".
std::string SettingsText(const Settings& s) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : s) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ", ");
}

std::string Label(const std::string& script, const std::string& settings) {
  return settings.empty() ? script : absl::StrCat(script, " ", settings);
}

// Every user setting names a parameter that a script advise tries
// declares (read in describe mode, so a script that then refuses this
// trace still counts); one that does not is refused before anything runs,
// as predict refuses it.
absl::Status CheckUserSettings(const Settings& user, const std::vector<CandidatePlan>& plans,
                               const ScriptSpec& spec) {
  if (user.empty()) return absl::OkStatus();
  std::map<std::string, std::set<std::string>> declared;  // stem -> keys, tried scripts
  std::set<std::string> skipped;
  for (const CandidatePlan& p : plans) {
    if (!p.skip.empty()) {
      skipped.insert(Stem(p.script));
      continue;
    }
    if (declared.count(Stem(p.script))) continue;
    std::set<std::string>& keys = declared[Stem(p.script)];
    if (absl::StatusOr<ScriptInfo> info = DescribeScript(p.script, spec); info.ok()) {
      for (const lua::ParamValue& v : info->params) keys.insert(v.name);
    }
  }
  for (const auto& [key, value] : user) {
    const size_t dot = key.find('.');
    if (dot != std::string::npos) {
      const std::string stem = key.substr(0, dot), name = key.substr(dot + 1);
      auto it = declared.find(stem);
      if (it == declared.end()) {
        return absl::InvalidArgumentError(
            skipped.count(stem)
                ? absl::StrCat("--set ", key, ": ", stem, ".lua is not tried on this trace")
                : absl::StrCat("--set ", key, ": no script '", stem,
                               "' among advise's candidates"));
      }
      if (!it->second.count(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--set ", key, ": ", stem, ".lua declares no parameter '", name, "'"));
      }
      continue;
    }
    // A named copy: clang 14 cannot capture a structured binding.
    const std::string& wanted = key;
    const bool any = std::any_of(declared.begin(), declared.end(),
                                 [&wanted](const auto& d) { return d.second.count(wanted) > 0; });
    if (!any) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown parameter '", key, "': not declared by any script advise tries"));
    }
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

// Candidates of one script whose gains agree within 0.1% are one answer:
// the first in table order (the cheapest setting: fewer workers) stays and
// names the others. `c` is in table order.
std::vector<Candidate> FoldSameGain(std::vector<Candidate> c) {
  std::vector<Candidate> out;
  for (Candidate& x : c) {
    auto same = std::find_if(out.begin(), out.end(), [&x](const Candidate& k) {
      return k.script == x.script && std::abs(x.gain() / k.gain() - 1) < 1e-3;
    });
    if (same == out.end()) {
      out.push_back(std::move(x));
    } else {
      // The settings part of the label ("num_workers=4"), or the defaults.
      same->same_gain.push_back(x.label.size() > x.script.size() + 1
                                    ? x.label.substr(x.script.size() + 1)
                                    : "the defaults");
    }
  }
  return out;
}

// Candidates in the order they run together (the table's).
std::vector<const Candidate*> InRunOrder(std::vector<const Candidate*> parts) {
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Candidate* a, const Candidate* b) { return a->order < b->order; });
  return parts;
}

// `parts` as one trial, composed in the table's order. The candidates'
// settings name their scripts (STEM.KEY, MakeTrial), so none reads
// another's, and a combination's first scripts can be predicted alone
// (SharePrefixes).
Combination Compose(const std::vector<const Candidate*>& parts) {
  Combination c;
  for (const Candidate* p : InRunOrder(parts)) {
    c.labels.push_back(p->label);
    c.trial.scripts.push_back(p->script);
    c.trial.settings.insert(c.trial.settings.end(), p->trial.settings.begin(),
                            p->trial.settings.end());
    c.product *= p->gain();
  }
  return c;
}

// The combinations of one level that share their first scripts (all but
// the last in run order) continue one prediction of those scripts
// (PredictAfter) instead of each running them again: at level 2 every pair
// that runs after the first candidate's script shares it.
void SharePrefixes(const LoadedTrace& base, const std::vector<std::vector<const Candidate*>>& sets,
                   const AdviseOptions& options, std::vector<Trial>* trials) {
  // The first scripts' trial (its scripts and settings) -> the sets it begins.
  std::map<std::pair<std::vector<std::string>, Settings>, std::vector<size_t>> by_prefix;
  for (size_t i = 0; i < sets.size(); ++i) {
    std::vector<const Candidate*> first = InRunOrder(sets[i]);
    first.pop_back();
    Trial t = Compose(first).trial;
    by_prefix[{std::move(t.scripts), std::move(t.settings)}].push_back(i);
  }
  std::vector<Trial> shared;
  std::vector<const std::vector<size_t>*> users;
  for (const auto& [prefix, indices] : by_prefix) {
    if (indices.size() < 2) continue;
    shared.push_back(Trial{prefix.first, prefix.second});
    users.push_back(&indices);
  }
  const std::vector<std::shared_ptr<const Prediction>> done =
      PredictTrials(base, shared, options.spec, options.threads);
  for (size_t g = 0; g < done.size(); ++g) {
    for (size_t i : *users[g]) (*trials)[i].after = done[g];
  }
}

std::string Joined(const std::vector<const Candidate*>& parts) {
  std::vector<std::string> labels;
  for (const Candidate* p : parts) labels.push_back(p->label);
  return absl::StrJoin(labels, " + ");
}

// The best two, then three, candidates of different scripts together,
// over each script's best candidate: the first candidate with every other
// script's (each pair predicted: one that gains nothing alone may gain
// once another removes what bounds the step), then the two best pairs each
// with a third. Two pairs, not one, because the best three need not
// contain the best pair: on Kineto's ResNet-50 sample the workers with
// twice the batch are the best pair, the workers with CUDA graphs and a
// newer GPU the best three (5.2x; extending the best pair alone found
// 3.3x). A level whose best gains less than the level before it is kept
// with a note saying so, and the search stops.
std::vector<Combination> CombineBest(const LoadedTrace& base, const std::vector<Candidate>& ranked,
                                     const AdviseOptions& options, int* tried) {
  constexpr size_t kBeam = 2;          // pairs extended by a third
  std::vector<const Candidate*> pool;  // each script's best candidate, best first
  std::set<std::string> scripts;
  for (const Candidate& c : ranked) {
    if (scripts.insert(c.script).second) pool.push_back(&c);
  }
  std::vector<Combination> out;
  if (pool.size() < 2) return out;
  using Parts = std::vector<const Candidate*>;
  std::vector<Parts> beam{{pool[0]}};
  Parts best_before = beam[0];
  double gain = best_before.front()->gain();
  for (size_t level = 2; level <= 3 && level <= pool.size(); ++level) {
    // Every set one script larger than a set of the beam, each once.
    std::vector<Parts> sets;
    std::set<std::set<std::string>> seen;
    for (const Parts& b : beam) {
      for (const Candidate* c : pool) {
        if (std::find(b.begin(), b.end(), c) != b.end()) continue;
        Parts parts = b;
        parts.push_back(c);
        std::set<std::string> key;
        for (const Candidate* p : parts) key.insert(p->script);
        if (seen.insert(key).second) sets.push_back(std::move(parts));
      }
    }
    std::vector<Combination> here;
    std::vector<Trial> trials;
    for (const Parts& parts : sets) {
      here.push_back(Compose(parts));
      trials.push_back(here.back().trial);
    }
    SharePrefixes(base, sets, options, &trials);
    std::vector<TrialResult> results = RunTrials(base, trials, options.spec, options.threads);
    *tried += static_cast<int>(trials.size());
    std::vector<size_t> applied;  // best first
    for (size_t i = 0; i < results.size(); ++i) {
      here[i].result = std::move(results[i]);
      if (here[i].result.outcome == TrialOutcome::kApplied) applied.push_back(i);
    }
    std::stable_sort(applied.begin(), applied.end(), [&here](size_t x, size_t y) {
      return here[x].result.throughput_speedup > here[y].result.throughput_speedup;
    });
    if (applied.empty()) {
      Combination none = here[0];
      none.note = absl::StrCat("no candidate runs together with ", Joined(best_before), ": ",
                               here[0].result.reason);
      out.push_back(std::move(none));
      break;
    }
    Combination c = here[applied[0]];
    if (c.result.throughput_speedup < gain) {
      c.note = absl::StrFormat(
          "nothing adds to %s (%.3fx): the best addition predicts %.3fx together, so the "
          "changes interact (each shrinks what the other also shrinks, or one lengthens what "
          "bounds the other's step); stop at %s",
          Joined(best_before), gain, c.result.throughput_speedup, Joined(best_before));
      out.push_back(std::move(c));
      break;
    }
    gain = c.result.throughput_speedup;
    best_before = sets[applied[0]];
    out.push_back(std::move(c));
    beam.clear();
    for (size_t i = 0; i < applied.size() && i < kBeam; ++i) beam.push_back(sets[applied[i]]);
  }
  return out;
}

}  // namespace

std::string SettleFirstPlace(std::vector<Candidate>* ranked, bool* swapped) {
  *swapped = false;
  if (ranked->size() < 2) return "";
  Candidate& a = (*ranked)[0];
  Candidate& b = (*ranked)[1];
  // The relative standard error of a prediction's mean step; none from one step.
  auto relative_error = [](const depgraph::StepStats& s) {
    return s.counted > 1 && s.mean_ns > 0 ? s.mean_error_ns() / s.mean_ns : -1.0;
  };
  const double ra = relative_error(a.result.predicted), rb = relative_error(b.result.predicted);
  // Nothing to choose between unless both gain: one that slows the step
  // never goes first.
  if (ra < 0 || rb < 0 || a.gain() <= 1 || b.gain() <= 1) return "";
  const double apart = a.gain() / b.gain() - 1, noise = depgraph::TwoMeansNoise(ra, rb);
  if (apart > noise) return "";
  const std::string within = absl::StrFormat(
      "#1 and #2 gain %.1f%% apart, within the noise of their predicted steps (%.1f%%)",
      apart * 100, noise * 100);
  if (a.backing.pairs.empty() == b.backing.pairs.empty()) {
    return absl::StrCat(within, ": their order is not decided");
  }
  if (a.backing.pairs.empty()) {
    // What to try first, between two the predictions cannot tell apart, is
    // the one measured pairs back.
    std::swap(a, b);
    *swapped = true;
    return absl::StrCat(within, ": ", a.label, " is listed first, as only it is backed by ",
                        "measured pairs (", a.confidence, "); ", b.label,
                        " predicts the larger gain");
  }
  return absl::StrCat(within, ": their order is not decided; only ", a.label,
                      " is backed by measured pairs (", a.confidence, ")");
}

absl::StatusOr<Advice> Advise(const LoadedTrace& base, const AdviseOptions& options) {
  Advice a;
  a.trace_path = base.path;
  a.facts = base.model.facts;
  // Before the trials share `base`: the critical paths fill its caches.
  a.diagnosis = Diagnose(base);
  const Settings& user = options.spec.settings;
  const std::vector<CandidatePlan> plans = PlanCandidates(base);
  if (absl::Status s = CheckUserSettings(user, plans, options.spec); !s.ok()) return s;
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
  std::map<std::string, ScriptHeader> headers;
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::string& script = owner[i]->script;
    const Settings effective = EffectiveSettings(results[i], *owner[i], user);
    const std::string settings = SettingsText(effective);
    if (results[i].outcome != TrialOutcome::kApplied) {
      AddNotApplicable(script, settings, std::string(TrialOutcomeName(results[i].outcome)),
                       results[i].reason, &a.not_applicable);
      continue;
    }
    if (!headers.count(script)) {
      headers[script] = ReadScriptHeader(script, options.spec.script_dirs);
    }
    Candidate c;
    c.script = script;
    c.label = Label(script, settings);
    c.trial = trials[i];
    c.result = results[i];
    c.order = owner[i]->order;
    c.backing = BackingOf(script, effective);
    c.confidence = ConfidenceText(c.backing);
    c.ignores = headers[script].ignores;
    for (const lua::ScriptReport& r : c.result.reports) {
      if (c.did.empty() && !r.log.empty()) c.did = r.log.front();
    }
    a.candidates.push_back(std::move(c));
  }
  a.candidates = FoldSameGain(std::move(a.candidates));
  std::stable_sort(a.candidates.begin(), a.candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.gain() > y.gain(); });
  a.order_note = SettleFirstPlace(&a.candidates, &a.first_by_evidence);
  a.combined = CombineBest(base, a.candidates, options, &a.combinations_tried);
  for (const std::string& name : LibraryScriptNames(options.spec.script_dirs)) {
    if (!IsCandidateScript(name)) a.not_tried.push_back({name, WhyNotTried(name)});
  }
  return a;
}

}  // namespace reverie::whatif
