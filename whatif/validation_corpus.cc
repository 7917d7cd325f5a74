#include "whatif/validation_corpus.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/sv.h"

namespace reverie::whatif {
namespace {

constexpr ValidatedPair kPairs[] = {
#include "whatif/validation_corpus.inc"
};

// Whether the pair's settings and `settings` agree on every key both set.
bool Agrees(const ValidatedPair& p,
            const std::vector<std::pair<std::string, std::string>>& settings) {
  for (absl::string_view kv : absl::StrSplit(Sv(p.settings), ',', absl::SkipEmpty())) {
    const size_t eq = kv.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    for (const auto& [k, v] : settings) {
      if (k == key && v != value) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<ValidatedPair> PairsOf(std::string_view script) {
  std::vector<ValidatedPair> out;
  for (const ValidatedPair& p : kPairs) {
    if (p.script == script) out.push_back(p);
  }
  return out;
}

Backing BackingOf(std::string_view script,
                  const std::vector<std::pair<std::string, std::string>>& settings) {
  Backing b;
  const std::vector<ValidatedPair> all = PairsOf(script);
  for (const ValidatedPair& p : all) {
    if (Agrees(p, settings)) b.pairs.push_back(p);
  }
  if (b.pairs.empty() && !all.empty()) {
    b.pairs = all;
    b.exact = false;
  }
  return b;
}

std::string ConfidenceText(const Backing& b) {
  if (b.pairs.empty()) return "not validated";
  double lo = b.pairs[0].step_error_pct, hi = lo;
  std::vector<std::string> ids;
  for (const ValidatedPair& p : b.pairs) {
    lo = std::min(lo, p.step_error_pct);
    hi = std::max(hi, p.step_error_pct);
    ids.emplace_back(p.id);
  }
  std::string s = b.pairs.size() == 1 ? absl::StrFormat("error %+.1f%%", lo)
                                      : absl::StrFormat("error %+.1f%%..%+.1f%%", lo, hi);
  absl::StrAppend(&s, " (", absl::StrJoin(ids, ", "));
  if (!b.exact) {
    std::vector<std::string> other;
    for (const ValidatedPair& p : b.pairs) {
      if (!p.settings.empty()) other.emplace_back(p.settings);
    }
    std::sort(other.begin(), other.end());
    other.erase(std::unique(other.begin(), other.end()), other.end());
    if (!other.empty()) absl::StrAppend(&s, ", at ", absl::StrJoin(other, "; "));
  }
  return absl::StrCat(s, ")");
}

}  // namespace reverie::whatif
