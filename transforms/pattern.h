// File: transforms/pattern.h
//
// Name and layer patterns for selections. Task names are matched against the
// graph's interned name table once per query (a few thousand distinct names
// even in a trace of millions of tasks), so the per-task cost of a name
// filter is one bit lookup by name id.
//
// Every pattern and regex is matched with RE2 (linear time in the subject,
// no recursion): a kernel name of any length or a pathological pattern costs
// one pass per name. GlobMatch / PathGlobMatch below are the reference
// semantics the RE2 translation keeps (pattern_test checks they agree).
//
// Task-name patterns (case-insensitive, ASCII):
//   - without `*` or `?`: a keyword, matched as a substring ("sgemm");
//   - with them: a glob over the whole name ("*winograd*4x4*").
// Layer patterns (case-sensitive, over dotted module paths):
//   - `*` matches one path component or part of one (never a '.'),
//     `**` matches any run of characters including dots, `?` one non-dot;
//   - a pattern matches a layer when it matches the layer's path or the path
//     of one of its ancestors, so "layer1.*" covers layer1.0.conv1.
#ifndef REVERIE_TRANSFORMS_PATTERN_H_
#define REVERIE_TRANSFORMS_PATTERN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "depgraph/graph.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace reverie::transforms {

// `*` / `?` glob over the whole text; `*` crosses every character.
bool GlobMatch(std::string_view pattern, std::string_view text, bool case_insensitive);

// Glob for dotted paths (see the file comment).
bool PathGlobMatch(std::string_view pattern, std::string_view path);

// A task-name pattern as described above.
bool NameMatches(std::string_view pattern, std::string_view name);

// Name patterns and a regex compiled once, matched one name at a time: a
// query over a few tasks asks only for their names (NameMatcher), a pass
// over the graph fills the whole table (MatchNameTable).
class NameMatcher {
 public:
  // kInvalidArgument as MatchNameTable's.
  static absl::StatusOr<NameMatcher> Compile(const std::vector<std::string>& patterns,
                                             const std::string& regex);
  NameMatcher(NameMatcher&&) noexcept;
  NameMatcher& operator=(NameMatcher&&) noexcept;
  ~NameMatcher();
  bool Matches(std::string_view name) const;

 private:
  NameMatcher();
  std::unique_ptr<re2::RE2> any_;    // the patterns, or null
  std::unique_ptr<re2::RE2> regex_;  // the regex, or null
};

// Answers kept per id, filled as they are asked: a table of every id for a
// pass over the graph, a map of the ids asked about for a query over a few
// tasks (so it costs what it is asked, not the size of the graph).
class Verdicts {
 public:
  static constexpr char kUnknown = 0, kNo = 1, kYes = 2;
  Verdicts(size_t n, bool dense) : dense_(dense) {
    if (dense) table_.assign(n, kUnknown);
  }
  char Get(uint32_t id) const {
    if (dense_) return table_[id];
    const auto it = map_.find(id);
    return it == map_.end() ? kUnknown : it->second;
  }
  void Set(uint32_t id, char v) {
    if (dense_) {
      table_[id] = v;
    } else {
      map_[id] = v;
    }
  }

 private:
  bool dense_;
  std::vector<char> table_;
  absl::flat_hash_map<uint32_t, char> map_;
};

// Layer patterns, with the verdict kept per layer: a layer matches when it
// or an ancestor does, and each layer's path is matched at most once.
class LayerMatcher {
 public:
  LayerMatcher(const depgraph::Graph& g, const std::vector<std::string>& patterns, bool dense);
  LayerMatcher(LayerMatcher&&) noexcept;
  ~LayerMatcher();
  bool Matches(depgraph::LayerId l);
  // Bytes of layer paths matched so far (what the answers cost).
  int64_t bytes_matched() const { return bytes_matched_; }

 private:
  bool SelfMatches(std::string_view path);

  const depgraph::Graph* g_;
  const std::vector<std::string>* patterns_;
  std::unique_ptr<re2::RE2> any_;
  Verdicts verdicts_;
  std::vector<uint32_t> chain_;
  int64_t bytes_matched_ = 0;
};

// One flag per interned name id of `g`: does the name match any of
// `patterns`, or the RE2 regex `regex` (searched, case-sensitive; RE2 syntax:
// no backreferences or lookaround) when not empty. kInvalidArgument for a
// malformed regex or patterns too large for RE2's memory bound.
absl::StatusOr<std::vector<bool>> MatchNameTable(const depgraph::Graph& g,
                                                 const std::vector<std::string>& patterns,
                                                 const std::string& regex);

// One flag per LayerId of `g`: the layer or one of its ancestors matches any
// of `patterns`.
std::vector<bool> MatchLayers(const depgraph::Graph& g, const std::vector<std::string>& patterns);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_PATTERN_H_
