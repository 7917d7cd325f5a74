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

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"

namespace reverie::transforms {

// `*` / `?` glob over the whole text; `*` crosses every character.
bool GlobMatch(std::string_view pattern, std::string_view text, bool case_insensitive);

// Glob for dotted paths (see the file comment).
bool PathGlobMatch(std::string_view pattern, std::string_view path);

// A task-name pattern as described above.
bool NameMatches(std::string_view pattern, std::string_view name);

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
