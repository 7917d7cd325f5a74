#include "report/sweep.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/json_writer.h"
#include "base/sv.h"
#include "report/plots.h"

namespace reverie::report {
namespace {

bool ParseDouble(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0' && std::isfinite(*v);
}

std::string SettingsText(const std::vector<Setting>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += ", ";
    absl::StrAppend(&out, s[i].first, "=", s[i].second);
  }
  return out;
}

}  // namespace

absl::StatusOr<SweepParam> ParseSweepParam(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set '", Sv(text), "': expected key=value[,value...]"));
  }
  SweepParam p;
  p.key = std::string(absl::StripAsciiWhitespace(Sv(text.substr(0, eq))));
  if (p.key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--set '", Sv(text), "': empty key"));
  }
  for (absl::string_view v : absl::StrSplit(Sv(text.substr(eq + 1)), ',')) {
    v = absl::StripAsciiWhitespace(v);
    if (v.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--set '", Sv(text), "': empty value"));
    }
    p.values.emplace_back(v);
  }
  return p;
}

std::vector<std::vector<Setting>> SweepGrid(const std::vector<SweepParam>& params) {
  std::vector<std::vector<Setting>> grid = {{}};
  for (const SweepParam& p : params) {
    std::vector<std::vector<Setting>> next;
    next.reserve(grid.size() * p.values.size());
    for (const auto& point : grid) {
      for (const std::string& v : p.values) {
        next.push_back(point);
        next.back().emplace_back(p.key, v);
      }
    }
    grid = std::move(next);
  }
  return grid;
}

std::string SweepTable(const SweepResult& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "trace: %s\nscripts: %s\nbaseline (simulated): %.1f us per step\n\n",
                r.trace_path.c_str(), absl::StrJoin(r.scripts, " ").c_str(), r.baseline_ns / 1e3);
  out += buf;
  for (const SweepParam& p : r.params) {
    std::snprintf(buf, sizeof(buf), "%-16s ", p.key.c_str());
    out += buf;
  }
  out += "  predicted_us   speedup  throughput\n";
  for (const SweepPoint& pt : r.points) {
    for (const Setting& s : pt.settings) {
      std::snprintf(buf, sizeof(buf), "%-16s ", s.second.c_str());
      out += buf;
    }
    if (!pt.error.empty()) {
      out += "  error: " + pt.error + "\n";
      continue;
    }
    const double speedup = pt.predicted_ns > 0 ? r.baseline_ns / pt.predicted_ns : 0.0;
    std::snprintf(buf, sizeof(buf), "  %12.1f   %6.3fx     %6.3fx\n", pt.predicted_ns / 1e3,
                  speedup, speedup * pt.work_factor);
    out += buf;
  }
  return out;
}

std::string SweepJson(const SweepResult& r) {
  JsonWriter w(0);
  w.BeginObject().Field("trace", r.trace_path).Key("scripts").BeginArray();
  for (const std::string& s : r.scripts) w.String(s);
  w.EndArray().Field("baseline_us", r.baseline_ns / 1e3).Key("params").BeginArray();
  for (const SweepParam& p : r.params) {
    w.BeginObject().Field("key", p.key).Key("values").BeginArray();
    for (const std::string& v : p.values) w.String(v);
    w.EndArray().EndObject();
  }
  w.EndArray().Key("points").BeginArray();
  for (const SweepPoint& pt : r.points) {
    w.BeginObject().Key("settings").BeginObject();
    for (const auto& [key, value] : pt.settings) w.Field(key, value);
    w.EndObject();
    if (!pt.error.empty()) {
      w.Field("error", pt.error);
    } else {
      const double speedup = pt.predicted_ns > 0 ? r.baseline_ns / pt.predicted_ns : NAN;
      // The keys of `predict --json`.
      w.Field("predicted_us", pt.predicted_ns / 1e3)
          .Field("speedup", speedup)
          .Field("work_per_step", pt.work_factor)
          .Field("throughput_speedup", speedup * pt.work_factor);
    }
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.str() + "\n";
}

Svg SweepChart(const SweepResult& r) {
  LineChart chart;
  chart.title = "Predicted step time";
  chart.y_label = "step time (ms)";
  if (r.params.empty()) {
    chart.x_label = "(no parameter)";
    chart.x = {0};
    LineSeries s{"predicted", {}};
    for (const SweepPoint& pt : r.points) {
      s.y.push_back(pt.error.empty() ? pt.predicted_ns / 1e6 : NAN);
    }
    chart.series.push_back(std::move(s));
    return RenderLineChart(chart);
  }
  const SweepParam& xp = r.params[0];
  chart.x_label = xp.key;
  bool numeric = true;
  std::vector<double> xs;
  for (const std::string& v : xp.values) {
    double d = 0;
    numeric = numeric && ParseDouble(v, &d);
    xs.push_back(d);
  }
  if (!numeric) {
    xs.clear();
    for (size_t i = 0; i < xp.values.size(); ++i) xs.push_back(static_cast<double>(i));
    chart.x_label = xp.key + " (index: " + absl::StrJoin(xp.values, ", ") + ")";
  }
  chart.x = xs;
  // One line per combination of the other parameters, in grid order.
  std::map<std::string, size_t> line_of;
  for (const SweepPoint& pt : r.points) {
    if (pt.settings.empty()) continue;
    std::vector<Setting> rest(pt.settings.begin() + 1, pt.settings.end());
    const std::string name = rest.empty() ? std::string("predicted") : SettingsText(rest);
    auto [it, inserted] = line_of.try_emplace(name, chart.series.size());
    if (inserted) chart.series.push_back({name, std::vector<double>(xs.size(), NAN)});
    for (size_t i = 0; i < xp.values.size(); ++i) {
      if (xp.values[i] == pt.settings[0].second && pt.error.empty()) {
        chart.series[it->second].y[i] = pt.predicted_ns / 1e6;
      }
    }
  }
  if (r.baseline_ns > 0) {
    chart.series.push_back(
        {"baseline", std::vector<double>(xs.size(), r.baseline_ns / 1e6), /*reference=*/true});
  }
  return RenderLineChart(chart);
}

}  // namespace reverie::report
