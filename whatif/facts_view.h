// File: whatif/facts_view.h
//
// The trace facts (depgraph/facts.h) as users read them: one line per fact
// for `info` and the HTML report, and the JSON object `info --json`, the
// Python module and `advise` carry under "facts". Every line ends with
// where the fact came from.
#ifndef REVERIE_WHATIF_FACTS_VIEW_H_
#define REVERIE_WHATIF_FACTS_VIEW_H_

#include <string>
#include <utility>
#include <vector>

#include "base/json_writer.h"
#include "depgraph/facts.h"

namespace reverie::whatif {

// {label, text} rows: "precision" -> "bf16 (97% of GEMM/conv/attention time)
// [inferred: the compute kernels' names]".
std::vector<std::pair<std::string, std::string>> FactLines(const depgraph::TraceFacts& f);

void WriteFactsJson(JsonWriter& w, const depgraph::TraceFacts& f);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_FACTS_VIEW_H_
