// File: export/chakra_check.h
//
// ValidateChakra(): what ASTRA-sim needs of a Chakra ET and cannot report
// when it is missing (a bad file makes it hang or exit 0 with ranks
// unfinished), checked on a parsed file. Both exports hold to it; tests run
// it on every export of the examples and the shared traces, and
// `reverie export` on what it is about to write.
//
// - ids are 0..n-1 in file order (FeederV3 indexes nodes by id);
// - each node's data_deps name earlier nodes, strictly increasing (no
//   duplicate: the legacy feeder releases one occurrence per completion),
//   hence the graph is acyclic;
// - every communication node is typed and sized: COMM_COLL_NODE has a
//   comm_type ASTRA-sim simulates (all-reduce, all-gather, reduce-scatter,
//   all-to-all, broadcast) and comm_size > 0; COMM_SEND_NODE and
//   COMM_RECV_NODE have comm_src, comm_dst, comm_tag and comm_size > 0; no
//   communication node is a CPU op (ASTRA-sim throws);
// - with one_compute_lane (the default export): the COMP_NODEs form one
//   chain, each depending on the previous one, none a CPU op, so at most one
//   compute node can run at a time and ASTRA-sim serialises nothing.
#ifndef REVERIE_EXPORT_CHAKRA_CHECK_H_
#define REVERIE_EXPORT_CHAKRA_CHECK_H_

#include "absl/status/status.h"
#include "export/chakra_io.h"

namespace reverie::exporter {

// kFailedPrecondition naming the first node that breaks a rule.
absl::Status ValidateChakra(const ChakraFile& file, bool one_compute_lane);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_CHECK_H_
