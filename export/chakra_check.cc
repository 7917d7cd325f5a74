#include "export/chakra_check.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reverie::exporter {
namespace {

absl::Status Broken(const chakra_et::Node& n, std::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("node ", n.id(), " (", n.name(), "): ", std::string(why)));
}

bool IsCpuOp(const chakra_et::Node& n) {
  const chakra_et::AttributeProto* a = FindAttr(n, "is_cpu_op");
  return a != nullptr && a->bool_val();
}

int64_t IntAttr(const chakra_et::Node& n, std::string_view name, int64_t missing) {
  const chakra_et::AttributeProto* a = FindAttr(n, name);
  return a != nullptr && a->value_case() == chakra_et::AttributeProto::kInt64Val ? a->int64_val()
                                                                                 : missing;
}

absl::Status CheckComm(const chakra_et::Node& n) {
  if (IsCpuOp(n)) return Broken(n, "a communication node marked is_cpu_op");
  if (IntAttr(n, "comm_size", 0) <= 0) return Broken(n, "no comm_size > 0");
  if (n.type() == chakra_et::COMM_COLL_NODE) {
    switch (IntAttr(n, "comm_type", -1)) {
      case chakra_et::ALL_REDUCE:
      case chakra_et::ALL_GATHER:
      case chakra_et::REDUCE_SCATTER:
      case chakra_et::ALL_TO_ALL:
      case chakra_et::BROADCAST:
        return absl::OkStatus();
      default:
        return Broken(n, "no comm_type ASTRA-sim simulates");
    }
  }
  for (const char* attr : {"comm_src", "comm_dst", "comm_tag"}) {
    if (IntAttr(n, attr, -1) < 0) return Broken(n, absl::StrCat("no ", attr));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateChakra(const ChakraFile& file, bool one_compute_lane) {
  int64_t last_compute = -1;
  for (size_t i = 0; i < file.nodes.size(); ++i) {
    const chakra_et::Node& n = file.nodes[i];
    if (n.id() != i) return Broken(n, absl::StrCat("id out of order at position ", i));
    int64_t previous = -1;
    bool follows_lane = false;
    for (uint64_t p : n.data_deps()) {
      if (static_cast<int64_t>(p) <= previous) return Broken(n, "dependencies not strictly increasing");
      if (p >= i) return Broken(n, absl::StrCat("depends on node ", p, ", not an earlier one"));
      previous = static_cast<int64_t>(p);
      follows_lane |= static_cast<int64_t>(p) == last_compute;
    }
    switch (n.type()) {
      case chakra_et::COMP_NODE:
        if (one_compute_lane) {
          if (IsCpuOp(n)) return Broken(n, "a CPU op on the compute lane");
          if (last_compute >= 0 && !follows_lane) {
            return Broken(n, absl::StrCat("compute node off the lane (no dependency on compute node ",
                                          last_compute, ")"));
          }
        }
        last_compute = static_cast<int64_t>(i);
        break;
      case chakra_et::COMM_COLL_NODE:
      case chakra_et::COMM_SEND_NODE:
      case chakra_et::COMM_RECV_NODE:
        REVERIE_RETURN_IF_ERROR(CheckComm(n));
        break;
      default:
        return Broken(n, absl::StrCat("node type ", n.type(), " is never written"));
    }
  }
  return absl::OkStatus();
}

}  // namespace reverie::exporter
