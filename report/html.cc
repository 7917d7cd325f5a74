#include "report/html.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "report/plots.h"
#include "report/svg.h"
#include "report/timeline_view_assets.h"

namespace reverie::report {
namespace {

constexpr char kCss[] = R"css(
body{font-family:sans-serif;margin:24px auto;max-width:1100px;color:#222;background:#fff}
h1{font-size:24px;margin-bottom:4px}
h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left;max-width:560px;overflow-wrap:anywhere}
.faster{color:#007a4d;font-weight:bold}.slower{color:#b33c00;font-weight:bold}
.muted{color:#777;font-size:12px}.chart{margin:12px 0}
.cards{display:flex;gap:16px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:6px;padding:10px 16px;min-width:180px}
.card .v{font-size:22px;font-weight:bold}
h3{font-size:15px;margin:16px 0 4px}
pre.log{background:#f7f7f7;border:1px solid #ddd;padding:6px 8px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
)css";

std::string MsText(double ns, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, ns / 1e6);
  return buf;
}

std::string Speedup(double base, double pred) {
  if (pred <= 0 || base <= 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3fx", base / pred);
  return buf;
}

std::string Cell(std::string_view s, bool left = false) {
  return absl::StrCat(left ? "<td class=\"l\">" : "<td>", EscapeHtml(s), "</td>");
}

std::string DeltaTable(const std::vector<Diff>& rows, int top_n, const char* what) {
  std::string out = absl::StrCat(
      "<table><tr><th class=\"l\">", what,
      "</th><th>baseline (ms/iter)</th><th>predicted (ms/iter)</th><th>change (ms)</th>"
      "<th>change (%)</th></tr>\n");
  int shown = 0;
  for (const Diff& d : rows) {
    if (shown >= top_n) break;
    const double change = d.b_ns - d.a_ns;
    if (change == 0) continue;
    ++shown;
    char pct[32] = "new";
    if (d.a_ns > 0) std::snprintf(pct, sizeof(pct), "%+.1f%%", 100.0 * change / d.a_ns);
    absl::StrAppend(&out, "<tr>", Cell(d.name, true), Cell(MsText(d.a_ns)), Cell(MsText(d.b_ns)),
                    "<td class=\"", change < 0 ? "faster" : "slower", "\">",
                    (change > 0 ? "+" : ""), MsText(change), "</td>", Cell(pct), "</tr>\n");
  }
  if (shown == 0) out += "<tr><td class=\"l\" colspan=\"5\">no change</td></tr>\n";
  out += "</table>\n";
  return out;
}

std::string BreakdownChart(const std::vector<BreakdownRow>& rows, const std::string& title) {
  BarChart c;
  c.title = title;
  c.x_label = "step";
  c.y_label = "time (ms)";
  c.stacked = true;
  c.series = {"CPU only", "GPU only", "CPU + GPU", "idle"};
  c.values.assign(4, {});
  for (const BreakdownRow& r : rows) {
    c.categories.push_back(r.label);
    c.values[0].push_back(r.cpu_only_ns / 1e6);
    c.values[1].push_back(r.gpu_only_ns / 1e6);
    c.values[2].push_back(r.both_ns / 1e6);
    c.values[3].push_back(r.idle_ns / 1e6);
  }
  return RenderBarChart(c).StrInline();
}

}  // namespace

std::string EscapeHtml(std::string_view s) { return EscapeXml(s); }

namespace {

std::string Noise(const depgraph::StepStats& n) {
  if (n.counted < 2) return absl::StrCat(n.counted, " step");
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.3f-%.3f (sd %.3f, %d steps)", n.min_ns / 1e6, n.max_ns / 1e6,
                n.stddev_ns / 1e6, n.counted);
  return buf;
}

void Summary(const ReportData& d, std::string& h) {
  h += "<h2>Summary</h2><div class=\"cards\">\n";
  if (d.measured_step_ns > 0) {
    absl::StrAppend(&h, "<div class=\"card\"><div>measured step</div><div class=\"v\">",
                    MsText(d.measured_step_ns), " ms</div></div>\n");
  }
  absl::StrAppend(&h, "<div class=\"card\"><div>simulated baseline</div><div class=\"v\">",
                  MsText(d.baseline_ns), " ms</div>");
  if (d.measured_step_ns > 0) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%+.1f%%",
                  100.0 * (d.baseline_ns - d.measured_step_ns) / d.measured_step_ns);
    absl::StrAppend(&h, "<div class=\"muted\">simulation vs measured: ", buf, "</div>");
  }
  h += "</div>\n";
  for (const ScriptOutcome& s : d.scripts) {
    absl::StrAppend(&h, "<div class=\"card\"><div>", EscapeHtml(s.name), "</div>");
    if (!s.error.empty()) {
      absl::StrAppend(&h, "<div class=\"slower\">failed: ", EscapeHtml(s.error), "</div></div>\n");
      continue;
    }
    absl::StrAppend(&h, "<div class=\"v\">", MsText(s.predicted_ns), " ms</div><div class=\"",
                    s.predicted_ns <= d.baseline_ns ? "faster" : "slower", "\">speedup ",
                    Speedup(d.baseline_ns, s.predicted_ns), "</div></div>\n");
  }
  h += "</div>\n";
  if (!d.warning.empty()) absl::StrAppend(&h, "<p class=\"slower\">", EscapeHtml(d.warning), "</p>\n");
  h += "<table><tr><th class=\"l\">run</th><th>step (ms)</th><th>step-to-step spread (ms)</th>"
       "<th>speedup vs baseline</th></tr>\n";
  if (d.measured_step_ns > 0) {
    absl::StrAppend(&h, "<tr>", Cell("measured", true), Cell(MsText(d.measured_step_ns)),
                    Cell("-"), Cell("-"), "</tr>\n");
  }
  absl::StrAppend(&h, "<tr>", Cell("baseline (simulated)", true), Cell(MsText(d.baseline_ns)),
                  Cell(Noise(d.baseline_noise)), Cell("1.000x"), "</tr>\n");
  for (const ScriptOutcome& s : d.scripts) {
    const bool ok = s.error.empty();
    absl::StrAppend(&h, "<tr>", Cell(s.name, true), Cell(ok ? MsText(s.predicted_ns) : "failed"),
                    Cell(ok ? Noise(s.noise) : "-"),
                    Cell(ok ? Speedup(d.baseline_ns, s.predicted_ns) : "-"), "</tr>\n");
    const double spread = d.baseline_noise.max_ns - d.baseline_noise.min_ns;
    if (ok && d.baseline_noise.counted > 1 && std::fabs(s.predicted_ns - d.baseline_ns) < spread) {
      absl::StrAppend(&h, "<tr><td class=\"l muted\" colspan=\"4\">", EscapeHtml(s.name),
                      ": the predicted change is smaller than the baseline's own step-to-step "
                      "spread</td></tr>\n");
    }
  }
  h += "</table>\n";
  if (!d.settings.empty()) {
    h += "<div class=\"muted\">settings: ";
    for (size_t i = 0; i < d.settings.size(); ++i) {
      absl::StrAppend(&h, i > 0 ? ", " : "", EscapeHtml(d.settings[i].first), "=",
                      EscapeHtml(d.settings[i].second));
    }
    h += "</div>\n";
  }
}

std::string AdviceRowHtml(const AdviceRow& r, const std::string& rank) {
  if (r.predicted_ns <= 0) {
    return absl::StrCat("<tr>", Cell(rank), Cell(r.label, true), "<td colspan=\"5\"></td>",
                        Cell(r.note, true), "</tr>\n");
  }
  char speed[64];
  std::snprintf(speed, sizeof(speed), "%.3fx", r.speedup);
  char gain[64];
  std::snprintf(gain, sizeof(gain), "%.3fx", r.throughput);
  return absl::StrCat("<tr>", Cell(rank), Cell(r.label, true), Cell(MsText(r.predicted_ns)),
                      Cell(Noise(r.noise)), "<td class=\"", r.speedup >= 1 ? "faster" : "slower",
                      "\">", speed, "</td>", Cell(gain), Cell(r.confidence, true),
                      Cell(r.note, true), "</tr>\n");
}

// What to try first (reverie advise): the page's first section.
void AdviceSectionHtml(const ReportData& d, std::string& h) {
  if (!d.has_advice) return;
  const AdviceSection& a = d.advice;
  h += "<h2>What to try first</h2>\n<div>";
  for (const std::string& line : a.diagnosis) absl::StrAppend(&h, EscapeHtml(line), "<br>\n");
  h += "</div>\n";
  const char* head =
      "<table><tr><th>#</th><th class=\"l\">what</th><th>step (ms)</th><th>spread (ms)</th>"
      "<th>speedup</th><th>throughput</th><th class=\"l\">confidence</th>"
      "<th class=\"l\">%s</th></tr>\n";
  char buf[512];
  std::snprintf(buf, sizeof(buf), head, "ignores");
  h += "<h3>Candidates, ranked by predicted gain</h3>\n";
  if (a.candidates.empty()) {
    h += "<div class=\"muted\">none: no script applies to this trace</div>\n";
  } else {
    h += buf;
    for (size_t i = 0; i < a.candidates.size(); ++i) {
      h += AdviceRowHtml(a.candidates[i], absl::StrCat(i + 1));
    }
    h += "</table>\n";
    if (!a.order_note.empty()) {
      absl::StrAppend(&h, "<div class=\"muted\">", EscapeHtml(a.order_note), "</div>\n");
    }
  }
  if (!a.combined.empty()) {
    std::snprintf(buf, sizeof(buf), head, "note");
    absl::StrAppend(&h, "<h3>Combined (they interact)</h3>\n", buf);
    for (const AdviceRow& r : a.combined) h += AdviceRowHtml(r, "");
    h += "</table>\n";
  }
  if (!a.not_applicable.empty()) {
    h += "<h3>Not applicable</h3>\n<ul>";
    for (const std::string& n : a.not_applicable) absl::StrAppend(&h, "<li>", EscapeHtml(n), "</li>");
    h += "</ul>\n";
  }
}

// What each script was given and what it said (docs/LUA_API.md: the log is
// the script's account of what it changed and why).
void ScriptsSection(const ReportData& d, std::string& h) {
  if (d.scripts.empty()) return;
  h += "<h2>Scripts</h2>\n";
  for (const ScriptOutcome& s : d.scripts) {
    absl::StrAppend(&h, "<h3>", EscapeHtml(s.name), "</h3>\n<div class=\"muted\">parameters: ",
                    s.params.empty() ? "none" : "", "");
    for (size_t i = 0; i < s.params.size(); ++i) {
      absl::StrAppend(&h, i > 0 ? ", " : "", EscapeHtml(s.params[i]));
    }
    h += " (* = set with --set)</div>\n";
    if (!s.log.empty()) {
      h += "<pre class=\"log\">";
      for (const std::string& line : s.log) absl::StrAppend(&h, EscapeHtml(line), "\n");
      h += "</pre>\n";
    }
  }
}

void TimelineSection(const ReportData& d, std::string& h) {
  if (d.timeline_json.empty()) return;
  absl::StrAppend(
      &h, "<h2>Timeline</h2>\n<div class=\"muted\">One step, baseline above prediction: "
          "wheel or +/- to zoom, drag to pan, hover a task for its details.</div>\n"
          "<div id=\"tl\" class=\"tl\">The timeline needs JavaScript.</div>\n"
          "<script type=\"application/json\" id=\"tl-data\">",
      d.timeline_json, "</script>\n<script>", assets::kTimelineJs, "</script>\n");
}

void MemorySectionHtml(const ReportData& d, std::string& h) {
  if (d.memory.svg.empty()) return;
  h += "<h2>Memory</h2>\n<div class=\"muted\">The GPU's allocated memory over the simulated run: the "
       "trace's allocations and frees (profile_memory=True) replayed in each run's simulated order, "
       "as its scripts resized them; the baseline dashed.</div>\n<ul>";
  for (const std::string& p : d.memory.peaks) absl::StrAppend(&h, "<li>", EscapeHtml(p), "</li>");
  absl::StrAppend(&h, "</ul>\n<div class=\"chart\">", d.memory.svg, "</div>\n");
}

void ChartsSection(const ReportData& d, std::string& h) {
  h += "<h2>Charts</h2>\n";
  if (!d.scripts.empty()) {
    BarChart c;
    c.title = "Step time: baseline vs predicted";
    c.x_label = "optimization script";
    c.y_label = "step time (ms)";
    c.series = {"baseline (simulated)", "predicted"};
    c.values.assign(2, {});
    for (const ScriptOutcome& s : d.scripts) {
      c.categories.push_back(s.name);
      c.values[0].push_back(d.baseline_ns / 1e6);
      c.values[1].push_back(s.error.empty() ? s.predicted_ns / 1e6 : 0);
    }
    absl::StrAppend(&h, "<div class=\"chart\">", RenderBarChart(c).StrInline(), "</div>\n");
  }
  if (!d.baseline_breakdown.empty()) {
    absl::StrAppend(&h, "<div class=\"chart\">",
                    BreakdownChart(d.baseline_breakdown, "Runtime breakdown: baseline"),
                    "</div>\n");
  }
  for (const ScriptOutcome& s : d.scripts) {
    if (!s.error.empty()) continue;
    if (!s.breakdown.empty()) {
      absl::StrAppend(&h, "<div class=\"chart\">",
                      BreakdownChart(s.breakdown, "Runtime breakdown: " + s.name), "</div>\n");
    }
    HBarChart hb;
    hb.title = "Largest per-layer changes: " + s.name;
    hb.x_label = "change in task time per step (ms; negative = faster)";
    hb.top_n = d.top_n;
    for (const Diff& l : s.layers) {
      if (l.b_ns == l.a_ns) continue;
      hb.labels.push_back(l.name);
      hb.values.push_back((l.b_ns - l.a_ns) / 1e6);
    }
    if (hb.labels.empty()) {
      absl::StrAppend(&h, "<div class=\"muted\">", EscapeHtml(s.name),
                      ": no per-layer change</div>\n");
    } else {
      absl::StrAppend(&h, "<div class=\"chart\">", RenderHBarChart(hb).StrInline(), "</div>\n");
    }
  }
}

void KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows, std::string& h) {
  h += "<table>";
  for (const auto& [k, v] : rows) {
    absl::StrAppend(&h, "<tr>", Cell(k, true), Cell(v, true), "</tr>\n");
  }
  h += "</table>\n";
}

void TablesSection(const ReportData& d, std::string& h) {
  if (!d.facts.empty()) {
    h += "<h2>What the run already does</h2>\n";
    KeyValueTable(d.facts, h);
  }
  for (const ScriptOutcome& s : d.scripts) {
    if (!s.error.empty()) continue;
    absl::StrAppend(&h, "<h2>Top changed layers: ", EscapeHtml(s.name), "</h2>\n",
                    DeltaTable(s.layers, d.top_n, "layer"));
    absl::StrAppend(&h, "<h2>Top changed kernels: ", EscapeHtml(s.name), "</h2>\n",
                    DeltaTable(s.kernels, d.top_n, "kernel / GPU task"));
  }
  h += "<h2>Critical path (baseline)</h2>\n";
  if (d.critical_path.empty()) {
    h += "<div class=\"muted\">not available</div>\n";
  } else {
    KeyValueTable(d.critical_path, h);
  }
  h += "<h2>Anomaly counters</h2>\n";
  if (d.anomalies.empty()) {
    h += "<div class=\"muted\">none recorded</div>\n";
  } else {
    h += "<table><tr><th class=\"l\">counter</th><th>count</th></tr>";
    for (const auto& [k, v] : d.anomalies) {
      absl::StrAppend(&h, "<tr>", Cell(k, true), Cell(absl::StrCat(v)), "</tr>\n");
    }
    h += "</table>\n";
  }
  if (!d.graph_facts.empty()) {
    h += "<h2>Graph</h2>";
    KeyValueTable(d.graph_facts, h);
  }
}

}  // namespace

std::string RenderHtmlReport(const ReportData& d) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&h, "<title>reverie report: ", EscapeHtml(d.trace_path), "</title>\n<style>",
                  kCss, d.timeline_json.empty() ? "" : assets::kTimelineCss,
                  "</style></head><body>\n");
  absl::StrAppend(&h, "<h1>reverie what-if report</h1><div class=\"muted\">trace: ",
                  EscapeHtml(d.trace_path), "</div>\n");
  AdviceSectionHtml(d, h);
  Summary(d, h);
  ScriptsSection(d, h);
  TimelineSection(d, h);
  MemorySectionHtml(d, h);
  ChartsSection(d, h);
  TablesSection(d, h);
  h += "<div class=\"muted\">Generated by reverie. Times are per step (the profiler overview's "
       "step time); predictions come from simulating the transformed dependency graph.</div>\n"
       "</body></html>\n";
  return h;
}

}  // namespace reverie::report
