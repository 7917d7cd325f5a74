// File: base/topological_order.h
//
// Kahn's algorithm, the one topological sort of the code base (the graph's
// validation, removal's rewiring order, the Chakra export's node ids). The
// caller owns the structure: nodes are 0..n-1, `pending[i]` counts node i's
// parents, exactly the edges `children` visits into it (kNotANode leaves a
// slot out, a removed task: no edge may lead to it), and
// `children(i, visit)` calls visit(c) once per edge i -> c, and
// `emit(i)` receives the nodes in order (a caller that only checks for a
// cycle keeps nothing: storing the order of millions of nodes costs more
// than sorting them). Ready nodes are taken last in, first out, or smallest
// key first with TopologicalOrderBy. Nodes never emitted are on a cycle or
// behind one; FirstUnordered names one for the caller's cycle message
// (depgraph::CycleError).
#ifndef REVERIE_BASE_TOPOLOGICAL_ORDER_H_
#define REVERIE_BASE_TOPOLOGICAL_ORDER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace reverie {

inline constexpr uint32_t kNotANode = std::numeric_limits<uint32_t>::max();

struct TopologicalResult {
  std::vector<uint32_t> pending;  // what is left: > 0 for the unordered nodes
  size_t nodes = 0;               // slots that are nodes
  size_t ordered = 0;             // nodes emitted
  bool complete() const { return ordered == nodes; }
  // The first node left unordered, or kNotANode when complete.
  uint32_t FirstUnordered() const {
    for (uint32_t i = 0; i < pending.size(); ++i) {
      if (pending[i] != 0 && pending[i] != kNotANode) return i;
    }
    return kNotANode;
  }
};

namespace internal {

template <typename Ready, typename Push, typename Pop, typename Children, typename Emit>
TopologicalResult Kahn(std::vector<uint32_t> pending, Ready& ready, Push push, Pop pop, Children&& children,
                       Emit&& emit) {
  TopologicalResult r;
  for (uint32_t i = 0; i < pending.size(); ++i) {
    if (pending[i] == kNotANode) continue;
    ++r.nodes;
    if (pending[i] == 0) push(ready, i);
  }
  while (!ready.empty()) {
    const uint32_t i = pop(ready);
    ++r.ordered;
    emit(i);
    children(i, [&](uint32_t c) {
      if (--pending[c] == 0) push(ready, c);
    });
  }
  r.pending = std::move(pending);
  return r;
}

}  // namespace internal

template <typename Children, typename Emit>
TopologicalResult TopologicalOrder(std::vector<uint32_t> pending, Children&& children, Emit&& emit) {
  std::vector<uint32_t> ready;
  return internal::Kahn(
      std::move(pending), ready, [](std::vector<uint32_t>& r, uint32_t i) { r.push_back(i); },
      [](std::vector<uint32_t>& r) {
        const uint32_t i = r.back();
        r.pop_back();
        return i;
      },
      std::forward<Children>(children), std::forward<Emit>(emit));
}

// Ready nodes smallest `key(i)` first (ties by node), e.g. earliest start.
template <typename Children, typename Key, typename Emit>
TopologicalResult TopologicalOrderBy(std::vector<uint32_t> pending, Children&& children, Key&& key,
                                     Emit&& emit) {
  using Entry = std::pair<int64_t, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  return internal::Kahn(
      std::move(pending), ready, [&](auto& r, uint32_t i) { r.push({key(i), i}); },
      [](auto& r) {
        const uint32_t i = r.top().second;
        r.pop();
        return i;
      },
      std::forward<Children>(children), std::forward<Emit>(emit));
}

}  // namespace reverie

#endif  // REVERIE_BASE_TOPOLOGICAL_ORDER_H_
