#include "transforms/pattern.h"

#include <cctype>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "re2/re2.h"

namespace reverie::transforms {
namespace {

inline char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool HasWildcard(std::string_view p) { return p.find_first_of("*?") != std::string_view::npos; }

bool ContainsIgnoreCase(std::string_view text, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > text.size()) return false;
  const char first = Lower(needle[0]);
  for (size_t i = 0; i + needle.size() <= text.size(); ++i) {
    if (Lower(text[i]) != first) continue;
    size_t j = 1;
    while (j < needle.size() && Lower(text[i + j]) == Lower(needle[j])) ++j;
    if (j == needle.size()) return true;
  }
  return false;
}

// RE2 holds its automata within this many bytes; past it a pattern fails to
// compile (a clear error) instead of growing without bound.
constexpr int64_t kRe2MaxMem = int64_t{64} << 20;

// Latin-1 so that every byte is one character: names are bytes (a script may
// set any), and `*` must cross every one of them.
RE2::Options ByteOptions() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_log_errors(false);
  o.set_never_capture(true);
  o.set_dot_nl(true);
  o.set_max_mem(kRe2MaxMem);
  return o;
}

// One literal byte as a regex; letters become [aA] when `fold`, which is
// exactly Lower()'s ASCII folding (RE2's (?i) would fold Latin-1 too).
void AppendLiteral(char c, bool fold, std::string* out) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (fold && std::isalpha(u) && u < 0x80) {
    out->push_back('[');
    out->push_back(static_cast<char>(std::tolower(u)));
    out->push_back(static_cast<char>(std::toupper(u)));
    out->push_back(']');
    return;
  }
  if (std::isalnum(u) && u < 0x80) {
    out->push_back(c);
  } else {
    // \xHH is unambiguous for every byte, NUL and '\n' included.
    absl::StrAppend(out, "\\x", absl::Hex(u, absl::kZeroPad2));
  }
}

// A task-name pattern (NameMatches' semantics) as an RE2 regex over bytes.
std::string NamePatternRegex(std::string_view p) {
  std::string out;
  if (!HasWildcard(p)) {
    for (char c : p) AppendLiteral(c, /*fold=*/true, &out);
    return out;  // searched: a substring
  }
  out = "\\A";
  for (char c : p) {
    if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += ".";
    } else {
      AppendLiteral(c, /*fold=*/true, &out);
    }
  }
  out += "\\z";
  return out;
}

// A layer pattern (PathGlobMatch's semantics) as an anchored RE2 regex.
std::string PathPatternRegex(std::string_view p) {
  std::string out = "\\A";
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '*') {
      const bool dbl = i + 1 < p.size() && p[i + 1] == '*';
      out += dbl ? ".*" : "[^.]*";
      if (dbl) ++i;
    } else if (p[i] == '?') {
      out += "[^.]";
    } else {
      AppendLiteral(p[i], /*fold=*/false, &out);
    }
  }
  out += "\\z";
  return out;
}

// Any of `patterns` as one alternation (one linear pass per subject).
std::unique_ptr<RE2> CompileAny(const std::vector<std::string>& patterns,
                                std::string (*translate)(std::string_view)) {
  std::string any;
  for (const std::string& p : patterns) {
    if (!any.empty()) any += '|';
    absl::StrAppend(&any, "(?:", translate(p), ")");
  }
  return std::make_unique<RE2>(any, ByteOptions());
}

// A pattern (or RE2's error, which quotes it) in an error message: at most
// 80 bytes of it, on one line.
std::string Quoted(std::string_view p) {
  std::string cut(p.substr(0, 80));
  for (char& c : cut) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (p.size() <= 80) return absl::StrCat("'", cut, "'");
  return absl::StrCat("'", cut, "...' (", p.size(), " bytes)");
}

}  // namespace

bool GlobMatch(std::string_view pat, std::string_view txt, bool case_insensitive) {
  // Greedy matching with one backtrack point (the last `*`): linear in
  // practice, exact for `*` and `?`.
  auto eq = [case_insensitive](char a, char b) {
    return case_insensitive ? Lower(a) == Lower(b) : a == b;
  };
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < txt.size()) {
    if (p < pat.size() && pat[p] != '*' && (pat[p] == '?' || eq(pat[p], txt[t]))) {
      ++p;
      ++t;
    } else if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool PathGlobMatch(std::string_view pat, std::string_view path) {
  // Dynamic programming over (pattern position, path position): `*` may not
  // cross a '.', so the single-backtrack trick above does not apply. Paths
  // and patterns are short and each layer is matched once per query.
  const size_t m = pat.size(), n = path.size();
  // reach[j]: pattern prefix [0, i) matches path prefix [0, j).
  std::vector<char> reach(n + 1, 0), next(n + 1, 0);
  reach[0] = 1;
  size_t i = 0;
  while (i < m) {
    std::fill(next.begin(), next.end(), 0);
    if (pat[i] == '*') {
      const bool dbl = i + 1 < m && pat[i + 1] == '*';
      // Propagate forward: from each reachable j, consume any run allowed.
      bool carry = false;
      for (size_t j = 0; j <= n; ++j) {
        if (reach[j]) carry = true;
        if (carry) next[j] = 1;
        if (j < n && !dbl && path[j] == '.') carry = false;
      }
      i += dbl ? 2 : 1;
    } else {
      for (size_t j = 0; j < n; ++j) {
        if (!reach[j]) continue;
        if (pat[i] == '?' ? path[j] != '.' : pat[i] == path[j]) next[j + 1] = 1;
      }
      ++i;
    }
    reach.swap(next);
  }
  return reach[n] != 0;
}

bool NameMatches(std::string_view pattern, std::string_view name) {
  if (!HasWildcard(pattern)) return ContainsIgnoreCase(name, pattern);
  return GlobMatch(pattern, name, /*case_insensitive=*/true);
}

NameMatcher::NameMatcher() = default;
NameMatcher::NameMatcher(NameMatcher&&) noexcept = default;
NameMatcher& NameMatcher::operator=(NameMatcher&&) noexcept = default;
NameMatcher::~NameMatcher() = default;

absl::StatusOr<NameMatcher> NameMatcher::Compile(const std::vector<std::string>& patterns,
                                                 const std::string& regex) {
  // RE2 matches in time linear in the name (no backtracking, no recursion),
  // so neither a 40,000-character kernel name nor a pattern like ^(a|a)*$
  // can overflow the stack or run away.
  NameMatcher m;
  if (!patterns.empty()) {
    m.any_ = CompileAny(patterns, NamePatternRegex);
    if (!m.any_->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("name patterns too large to match: ", Quoted(m.any_->error())));
    }
  }
  if (!regex.empty()) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_never_capture(true);
    o.set_max_mem(kRe2MaxMem);
    m.regex_ = std::make_unique<RE2>(regex, o);
    if (!m.regex_->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad name regex ", Quoted(regex), ": ", Quoted(m.regex_->error())));
    }
  }
  return m;
}

bool NameMatcher::Matches(std::string_view name) const {
  const re2::StringPiece text(name.data(), name.size());
  return (any_ != nullptr && RE2::PartialMatch(text, *any_)) ||
         (regex_ != nullptr && RE2::PartialMatch(text, *regex_));
}

absl::StatusOr<std::vector<bool>> MatchNameTable(const depgraph::Graph& g,
                                                 const std::vector<std::string>& patterns,
                                                 const std::string& regex) {
  REVERIE_ASSIGN_OR_RETURN(const NameMatcher m, NameMatcher::Compile(patterns, regex));
  std::vector<bool> match(g.name_count(), false);
  for (uint32_t id = 0; id < g.name_count(); ++id) match[id] = m.Matches(g.NameOf(id));
  return match;
}

LayerMatcher::LayerMatcher(const depgraph::Graph& g, const std::vector<std::string>& patterns,
                           bool dense)
    : g_(&g), patterns_(&patterns), verdicts_(g.layer_count(), dense) {
  // Linear per path whatever the pattern (PathGlobMatch is quadratic).
  if (!patterns.empty()) any_ = CompileAny(patterns, PathPatternRegex);
}
LayerMatcher::LayerMatcher(LayerMatcher&&) noexcept = default;
LayerMatcher::~LayerMatcher() = default;

bool LayerMatcher::SelfMatches(std::string_view path) {
  bytes_matched_ += static_cast<int64_t>(path.size());
  if (any_ == nullptr) return false;
  if (any_->ok()) return RE2::FullMatch(re2::StringPiece(path.data(), path.size()), *any_);
  for (const std::string& p : *patterns_) {  // too large for RE2: the reference
    if (PathGlobMatch(p, path)) return true;
  }
  return false;
}

bool LayerMatcher::Matches(depgraph::LayerId layer) {
  const size_t n = g_->layer_count();
  if (!layer.valid() || layer.value() >= n) return false;
  // Ancestors are resolved by walking up, so the result does not depend on
  // layers being created parent-first.
  if (const char v = verdicts_.Get(layer.value()); v != Verdicts::kUnknown) {
    return v == Verdicts::kYes;
  }
  chain_.clear();
  uint32_t cur = layer.value();
  char verdict = Verdicts::kNo;
  while (true) {
    if (const char v = verdicts_.Get(cur); v != Verdicts::kUnknown) {
      verdict = v;
      break;
    }
    const bool self = SelfMatches(g_->layer(depgraph::LayerId(cur)).path);
    chain_.push_back(cur);
    if (self) {
      verdict = Verdicts::kYes;
      break;
    }
    const depgraph::LayerId parent = g_->layer(depgraph::LayerId(cur)).parent;
    if (!parent.valid() || parent.value() >= n || chain_.size() > n) break;
    cur = parent.value();
  }
  // Every layer on the chain is a descendant of (or is) the layer that
  // decided: a match there covers them all, and a non-match means none of
  // them matched by itself either (the walk would have stopped).
  for (uint32_t c : chain_) verdicts_.Set(c, verdict);
  return verdict == Verdicts::kYes;
}

std::vector<bool> MatchLayers(const depgraph::Graph& g, const std::vector<std::string>& patterns) {
  LayerMatcher m(g, patterns, /*dense=*/true);
  std::vector<bool> out(g.layer_count());
  for (uint32_t l = 0; l < g.layer_count(); ++l) out[l] = m.Matches(depgraph::LayerId(l));
  return out;
}

}  // namespace reverie::transforms
