#include "export/astra_model.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reverie::exporter {
namespace {

enum Slot { kCpu = 0, kGpu = 1, kComm = 2, kNoSlot = 3 };

Slot SlotOf(const chakra_et::Node& n) {
  const chakra_et::AttributeProto* cpu = FindAttr(n, "is_cpu_op");
  if (cpu != nullptr && cpu->bool_val()) return kCpu;
  switch (n.type()) {
    case chakra_et::COMP_NODE: return kGpu;
    case chakra_et::COMM_RECV_NODE: return kNoSlot;
    default: return kComm;
  }
}

bool IsComm(const chakra_et::Node& n) {
  return n.type() == chakra_et::COMM_COLL_NODE || n.type() == chakra_et::COMM_SEND_NODE ||
         n.type() == chakra_et::COMM_RECV_NODE;
}

int64_t Ns(const chakra_et::Node& n) {
  return std::max<int64_t>(1, static_cast<int64_t>(n.duration_micros()) * 1000);
}

// The peers a communication node waits for: a collective's are the k-th
// collective of every rank; a send's and a receive's share their tag.
using MeetKey = std::tuple<int, int64_t>;  // (0 collective / 1 point-to-point, ordinal / tag)

struct RankState {
  const ChakraFile* file = nullptr;
  std::vector<uint32_t> pending;
  std::vector<std::vector<uint32_t>> children;
  std::set<uint32_t> free_nodes;  // ASTRA-sim issues dependency-free nodes by id
  std::array<bool, 4> busy{};
  int64_t collectives_issued = 0;
  size_t done = 0;
};

absl::Status Index(const ChakraFile& f, int rank, RankState* s) {
  const size_t n = f.nodes.size();
  s->file = &f;
  s->pending.assign(n, 0);
  s->children.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    const chakra_et::Node& node = f.nodes[i];
    if (node.id() != i) {
      return absl::InvalidArgumentError(absl::StrCat("rank ", rank, ": node #", i, " has id ", node.id()));
    }
    for (uint64_t p : node.data_deps()) {
      if (p >= n) {
        return absl::InvalidArgumentError(absl::StrCat("rank ", rank, ": node ", i, " depends on ", p));
      }
      s->children[p].push_back(static_cast<uint32_t>(i));
      ++s->pending[i];
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (s->pending[i] == 0) s->free_nodes.insert(i);
  }
  return absl::OkStatus();
}

int64_t Attr(const chakra_et::Node& n, const char* name) {
  const chakra_et::AttributeProto* a = FindAttr(n, name);
  return a == nullptr ? -1 : a->int64_val();
}

class Replay {
 public:
  explicit Replay(std::vector<RankState> ranks) : ranks_(std::move(ranks)), out_(ranks_.size()) {}

  std::vector<AstraModelResult> Run() {
    for (size_t r = 0; r < ranks_.size(); ++r) Issue(static_cast<int>(r), 0);
    while (!running_.empty()) {
      const auto [end, r, id] = running_.top();
      running_.pop();
      RankState& s = ranks_[r];
      ++s.done;
      out_[r].finish_ns = end;
      const Slot slot = SlotOf(s.file->nodes[id]);
      if (slot != kNoSlot) s.busy[slot] = false;
      for (uint32_t c : s.children[id]) {
        if (--s.pending[c] == 0) s.free_nodes.insert(c);
      }
      Issue(r, end);
    }
    return out_;
  }

  bool AllDone() const {
    for (const RankState& s : ranks_) {
      if (s.done != s.file->nodes.size()) return false;
    }
    return true;
  }

 private:
  void Start(int r, uint32_t id, int64_t at, int64_t ns) {
    const Slot slot = SlotOf(ranks_[r].file->nodes[id]);
    (slot == kCpu ? out_[r].cpu_ns : slot == kGpu ? out_[r].gpu_ns : out_[r].comm_ns) += ns;
    running_.emplace(at + ns, r, id);
  }

  // A communication node waits for its peers, then all run together for the
  // longest of their durations.
  void Meet(int r, uint32_t id, int64_t now) {
    const chakra_et::Node& n = ranks_[r].file->nodes[id];
    MeetKey key;
    size_t needed = ranks_.size();
    if (n.type() == chakra_et::COMM_COLL_NODE) {
      key = {0, ranks_[r].collectives_issued++};
    } else {
      key = {1, Attr(n, "comm_tag")};
      needed = Attr(n, "comm_src") == Attr(n, "comm_dst") ? 1 : 2;
    }
    std::vector<std::tuple<int, uint32_t, int64_t>>& arrived = meetings_[key];
    arrived.emplace_back(r, id, now);
    if (arrived.size() < std::min(needed, ranks_.size())) return;
    int64_t at = 0, ns = 0;
    for (const auto& [pr, pid, t] : arrived) {
      at = std::max(at, t);
      ns = std::max(ns, Ns(ranks_[pr].file->nodes[pid]));
    }
    for (const auto& [pr, pid, t] : arrived) Start(pr, pid, at, ns);
    meetings_.erase(key);
  }

  void Issue(int r, int64_t now) {
    RankState& s = ranks_[r];
    for (auto it = s.free_nodes.begin(); it != s.free_nodes.end();) {
      const chakra_et::Node& n = s.file->nodes[*it];
      const Slot slot = SlotOf(n);
      if (slot != kNoSlot && s.busy[slot]) {
        ++it;
        continue;
      }
      if (slot != kNoSlot) s.busy[slot] = true;
      if (IsComm(n)) {
        Meet(r, *it, now);
      } else {
        Start(r, *it, now, Ns(n));
      }
      it = s.free_nodes.erase(it);
    }
  }

  std::vector<RankState> ranks_;
  std::vector<AstraModelResult> out_;
  using Event = std::tuple<int64_t, int, uint32_t>;  // (end, rank, node)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> running_;
  std::map<MeetKey, std::vector<std::tuple<int, uint32_t, int64_t>>> meetings_;
};

}  // namespace

absl::StatusOr<std::vector<AstraModelResult>> ReplayLikeAstraSim(std::span<const ChakraFile> files) {
  std::vector<RankState> ranks(files.size());
  for (size_t r = 0; r < files.size(); ++r) {
    REVERIE_RETURN_IF_ERROR(Index(files[r], static_cast<int>(r), &ranks[r]));
  }
  Replay replay(std::move(ranks));
  std::vector<AstraModelResult> out = replay.Run();
  if (!replay.AllDone()) {
    return absl::FailedPreconditionError(
        "some nodes never run: a dependency cycle, or communication no peer takes part in");
  }
  return out;
}

absl::StatusOr<AstraModelResult> ReplayLikeAstraSim(const ChakraFile& file) {
  REVERIE_ASSIGN_OR_RETURN(std::vector<AstraModelResult> out, ReplayLikeAstraSim(std::span<const ChakraFile>(&file, 1)));
  return (out)[0];
}

}  // namespace reverie::exporter
