#include "transforms/pattern.h"

#include <cctype>
#include <regex>

#include "absl/strings/str_cat.h"
#include "base/sv.h"

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

absl::StatusOr<std::vector<bool>> MatchNameTable(const depgraph::Graph& g,
                                                 const std::vector<std::string>& patterns,
                                                 const std::string& regex) {
  std::vector<bool> match(g.name_count(), false);
  for (uint32_t id = 0; id < g.name_count(); ++id) {
    for (const std::string& p : patterns) {
      if (NameMatches(p, g.NameOf(id))) {
        match[id] = true;
        break;
      }
    }
  }
  if (!regex.empty()) {
    // std::regex reports a bad pattern by throwing; keep that inside.
    std::regex re;
    try {
      re.assign(regex, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad name regex '", regex, "': ", e.what()));
    }
    for (uint32_t id = 0; id < g.name_count(); ++id) {
      if (match[id]) continue;
      const std::string_view n = g.NameOf(id);
      if (std::regex_search(n.begin(), n.end(), re)) match[id] = true;
    }
  }
  return match;
}

std::vector<bool> MatchLayers(const depgraph::Graph& g, const std::vector<std::string>& patterns) {
  const size_t n = g.layer_count();
  // 0 = unknown, 1 = no, 2 = yes; ancestors are resolved by walking up, so
  // the result does not depend on layers being created parent-first.
  std::vector<char> state(n, 0);
  std::vector<uint32_t> chain;
  for (uint32_t l = 0; l < n; ++l) {
    if (state[l] != 0) continue;
    chain.clear();
    uint32_t cur = l;
    char verdict = 1;
    while (true) {
      if (state[cur] != 0) {
        verdict = state[cur];
        break;
      }
      bool self = false;
      for (const std::string& p : patterns) {
        if (PathGlobMatch(p, g.layer(depgraph::LayerId(cur)).path)) {
          self = true;
          break;
        }
      }
      chain.push_back(cur);
      if (self) {
        verdict = 2;
        break;
      }
      const depgraph::LayerId parent = g.layer(depgraph::LayerId(cur)).parent;
      if (!parent.valid() || parent.value() >= n || chain.size() > n) {
        verdict = 1;
        break;
      }
      cur = parent.value();
    }
    // Every layer on the chain is a descendant of (or is) the layer that
    // decided: a match there covers them all, and a non-match means none of
    // them matched by itself either (the walk would have stopped).
    for (uint32_t c : chain) state[c] = verdict;
  }
  std::vector<bool> out(n);
  for (size_t l = 0; l < n; ++l) out[l] = state[l] == 2;
  return out;
}

}  // namespace reverie::transforms
