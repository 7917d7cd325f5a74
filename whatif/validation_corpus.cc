#include "whatif/validation_corpus.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/sv.h"

namespace reverie::whatif {
namespace {

constexpr ValidatedPair kPairs[] = {
#include "whatif/validation_corpus.inc"
};

}  // namespace

std::vector<ValidatedPair> PairsOf(std::string_view script) {
  std::vector<ValidatedPair> out;
  for (const ValidatedPair& p : kPairs) {
    if (p.script == script) out.push_back(p);
  }
  return out;
}

std::string ConfidenceText(std::string_view script) {
  const std::vector<ValidatedPair> pairs = PairsOf(script);
  if (pairs.empty()) return "not validated";
  std::string s = "step error ";
  for (size_t i = 0; i < pairs.size(); ++i) {
    absl::StrAppend(&s, i > 0 ? ", " : "", absl::StrFormat("%+.1f%%", pairs[i].step_error_pct),
                    " (", Sv(pairs[i].id), ")");
  }
  return absl::StrCat(s, " on measured runs");
}

}  // namespace reverie::whatif
