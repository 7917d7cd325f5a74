// `reverie advise --json` (whatif/advise.h): the same fields in the same
// units (us) as predict's JSON for each candidate, which Python's
// Trace.advise() reads too.
#include <algorithm>

#include "base/json_writer.h"
#include "whatif/advise.h"
#include "whatif/facts_view.h"
#include "whatif/script_catalog.h"
#include "whatif/step_report.h"
#include "whatif/validation_corpus.h"

namespace reverie::whatif {
namespace {

void WriteSettings(JsonWriter& w, const Trial& t) {
  w.Key("settings").BeginObject();
  for (const auto& [k, v] : t.settings) w.Field(k, v);
  w.EndObject();
}

void WriteDiagnosis(JsonWriter& w, const Diagnosis& d) {
  w.BeginObject();
  w.Field("bound", d.bound).Field("side", d.side);
  w.Field("gpu_busy_pct", d.gpu_busy * 100).Field("cpu_busy_pct", d.cpu_busy * 100);
  w.Field("unexplained_pct", d.unexplained * 100);
  w.Key("step");
  WriteStepJson(w, d.step);
  w.Key("limits").BeginArray();
  for (const LimitShare& l : d.limits) {
    w.BeginObject().Field("what", l.what).Field("critical_path_pct", l.share * 100);
    w.Field("us_per_step", l.us_per_step).EndObject();
  }
  w.EndArray();
  w.Key("lines").BeginArray();
  for (const std::string& line : d.lines) w.String(line);
  w.EndArray();
  w.Field("warning", d.warning);
  w.EndObject();
}

void WriteCandidate(JsonWriter& w, const Candidate& c, int rank) {
  w.BeginObject().Field("rank", rank).Field("script", c.script).Field("label", c.label);
  WriteSettings(w, c.trial);
  WriteTrialFields(w, c.result);
  w.Field("gain", c.gain());
  w.Key("confidence").BeginObject().Field("text", c.confidence);
  w.Field("same_settings", c.backing.exact);
  w.Key("pairs").BeginArray();
  for (const ValidatedPair& p : c.backing.pairs) {
    w.BeginObject().Field("id", p.id).Field("what", p.what).Field("settings", p.settings);
    w.Field("step_error_pct", p.step_error_pct).EndObject();
  }
  w.EndArray().EndObject();
  w.Field("ignores", c.ignores);
  w.Field("did", c.did);
  w.Key("same_gain").BeginArray();
  for (const std::string& l : c.same_gain) w.String(l);
  w.EndArray();
  w.EndObject();
}

}  // namespace

std::string AdviceJson(const Advice& a, int top) {
  JsonWriter w;
  w.BeginObject();
  w.Field("trace", a.trace_path);
  w.Key("facts");
  WriteFactsJson(w, a.facts);
  w.Key("diagnosis");
  WriteDiagnosis(w, a.diagnosis);
  w.Field("baseline_us", a.diagnosis.step.mean_ns / 1e3);
  w.Key("baseline_noise");
  WriteStepJson(w, a.diagnosis.step);
  w.Field("candidates_total", static_cast<int64_t>(a.candidates.size()));
  w.Key("candidates").BeginArray();
  const size_t shown = std::min(a.candidates.size(), static_cast<size_t>(std::max(0, top)));
  for (size_t i = 0; i < shown; ++i) WriteCandidate(w, a.candidates[i], static_cast<int>(i + 1));
  w.EndArray();
  w.Field("order_note", a.order_note);
  w.Field("first_by_evidence", a.first_by_evidence);
  w.Key("combined").BeginArray();
  for (const Combination& c : a.combined) {
    w.BeginObject();
    w.Key("labels").BeginArray();
    for (const std::string& l : c.labels) w.String(l);
    w.EndArray();
    w.Key("scripts").BeginArray();
    for (const std::string& s : c.trial.scripts) w.String(s);
    w.EndArray();
    WriteSettings(w, c.trial);
    WriteTrialFields(w, c.result);
    w.Field("gain", c.result.throughput_speedup).Field("product_of_parts", c.product);
    w.Field("note", c.note);
    w.EndObject();
  }
  w.EndArray();
  w.Field("combinations_tried", a.combinations_tried);
  w.Key("not_applicable").BeginArray();
  for (const NotApplicable& n : a.not_applicable) {
    w.BeginObject().Field("script", n.script).Field("settings", n.label);
    w.Field("outcome", n.outcome).Field("reason", n.reason).EndObject();
  }
  w.EndArray();
  w.Key("not_tried").BeginArray();
  for (const NotTried& n : a.not_tried) {
    w.BeginObject().Field("script", n.script).Field("why", n.why).EndObject();
  }
  w.EndArray();
  w.Field("threads", a.threads);
  w.EndObject();
  return w.str();
}

}  // namespace reverie::whatif
