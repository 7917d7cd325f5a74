#include "whatif/script_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "whatif/step_report.h"

namespace reverie::whatif {
namespace {

namespace fs = std::filesystem;

// The header's lines without their "--" (and one space), up to the first
// line that is not a comment.
std::vector<std::string> HeaderLines(std::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view raw : absl::StrSplit(Sv(text), '\n')) {
    absl::string_view line = absl::StripTrailingAsciiWhitespace(raw);
    if (!absl::ConsumePrefix(&line, "--")) break;
    absl::ConsumePrefix(&line, " ");
    out.emplace_back(absl::StripLeadingAsciiWhitespace(line));
  }
  return out;
}

// Labels that start a paragraph of their own. A label may carry a
// parenthesis before its colon ("Preconditions (graph:facts().precision):").
constexpr std::string_view kPreconditions = "Preconditions";
constexpr std::string_view kMemory = "Memory";
constexpr std::string_view kIgnoreLabels[] = {"Ignores", "What it ignores"};
constexpr std::string_view kOtherLabels[] = {"Assumptions", "Sources", "Model", "Parameters"};

// The length of `label` with its parenthesis and colon at the start of
// `line`, or 0 when the line does not start with it.
size_t LabelLength(std::string_view line, std::string_view label) {
  if (line.substr(0, label.size()) != label) return 0;
  size_t at = label.size();
  if (line.substr(at, 2) == " (") {
    int depth = 0;
    size_t close = at + 1;
    for (; close < line.size(); ++close) {
      if (line[close] == '(') ++depth;
      if (line[close] == ')' && --depth == 0) break;
    }
    if (close >= line.size()) return 0;
    at = close + 1;
  }
  return at < line.size() && line[at] == ':' ? at + 1 : 0;
}

bool StartsLabel(std::string_view line) {
  if (LabelLength(line, kPreconditions) > 0 || LabelLength(line, kMemory) > 0) return true;
  for (std::string_view l : kIgnoreLabels) {
    if (LabelLength(line, l) > 0) return true;
  }
  for (std::string_view l : kOtherLabels) {
    // "Model." and "Assumptions, ..." start paragraphs too.
    if (line.substr(0, l.size()) == l) return true;
  }
  return false;
}

// The paragraph starting at lines[i] (its first line without the label's
// first `label_length` characters), joined into one line.
std::string Paragraph(const std::vector<std::string>& lines, size_t i, size_t label_length) {
  std::vector<std::string> parts{std::string(absl::StripLeadingAsciiWhitespace(
      Sv(std::string_view(lines[i]).substr(label_length))))};
  for (size_t j = i + 1; j < lines.size() && !lines[j].empty() && !StartsLabel(lines[j]); ++j) {
    parts.push_back(lines[j]);
  }
  return absl::StrJoin(parts, " ");
}

// "Ignores the one-time capture cost ..." inside a paragraph: from that
// sentence to the paragraph's end.
std::string IgnoresSentence(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t at = lines[i].find("Ignores ");
    if (at == std::string::npos) continue;
    // A sentence's start: the line's, or after ". ".
    if (at > 0 && (at < 2 || lines[i].compare(at - 2, 2, ". ") != 0)) continue;
    std::vector<std::string> parts{lines[i].substr(at + 8)};
    for (size_t j = i + 1; j < lines.size() && !lines[j].empty() && !StartsLabel(lines[j]); ++j) {
      parts.push_back(lines[j]);
    }
    return absl::StrJoin(parts, " ");
  }
  return "";
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string NumberText(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

}  // namespace

ScriptHeader ParseScriptHeader(std::string_view text) {
  ScriptHeader h;
  const std::vector<std::string> lines = HeaderLines(text);
  if (lines.empty()) return h;
  // "name.lua: summary"
  absl::string_view first = lines[0];
  const size_t colon = first.find(".lua:");
  h.summary = std::string(absl::StripLeadingAsciiWhitespace(
      colon == absl::string_view::npos ? first : first.substr(colon + 5)));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (const size_t n = LabelLength(lines[i], kPreconditions); h.preconditions.empty() && n > 0) {
      h.preconditions = Paragraph(lines, i, n);
    }
    if (const size_t n = LabelLength(lines[i], kMemory); h.memory.empty() && n > 0) {
      h.memory = Paragraph(lines, i, n);
    }
    for (std::string_view label : kIgnoreLabels) {
      if (const size_t n = LabelLength(lines[i], label); h.ignores.empty() && n > 0) {
        h.ignores = Paragraph(lines, i, n);
      }
    }
  }
  if (h.ignores.empty()) h.ignores = IgnoresSentence(lines);
  return h;
}

ScriptHeader ReadScriptHeader(const std::string& name, const std::vector<std::string>& dirs) {
  absl::StatusOr<lua::ResolvedScript> resolved = lua::ResolveScript(name, dirs);
  if (!resolved.ok()) return {};
  absl::StatusOr<std::string> text = ReadText(resolved->path);
  return text.ok() ? ParseScriptHeader(*text) : ScriptHeader();
}

std::vector<std::string> LibraryScriptNames(const std::vector<std::string>& dirs) {
  std::map<std::string, std::string> names;  // sorted, first folder wins
  for (const std::string& d : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.extension() != ".lua" || !it->is_regular_file(ec)) continue;
      names.emplace(p.filename().string(), d);
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, dir] : names) out.push_back(name);
  return out;
}

absl::StatusOr<ScriptInfo> DescribeScript(const std::string& name, const ScriptSpec& spec) {
  REVERIE_ASSIGN_OR_RETURN(lua::ResolvedScript resolved, lua::ResolveScript(name, spec.script_dirs));
  ScriptInfo info;
  info.name = fs::path(resolved.path).filename().string();
  info.path = resolved.path;
  absl::StatusOr<std::string> text = ReadText(resolved.path);
  if (!text.ok()) return Named(info.path, text.status());
  info.header = ParseScriptHeader(*text);
  absl::StatusOr<lua::ScriptDescription> d =
      lua::DescribeScript(name, spec.limits, spec.script_dirs);
  if (d.ok()) {
    info.params = std::move(d->params);
  } else {
    info.describe_error = FirstLine(StdSv(d.status().message()));
  }
  return info;
}

std::vector<ScriptInfo> DescribeLibrary(const ScriptSpec& spec) {
  std::vector<ScriptInfo> out;
  for (const std::string& name : LibraryScriptNames(spec.script_dirs)) {
    absl::StatusOr<ScriptInfo> info = DescribeScript(name, spec);
    if (info.ok()) {
      out.push_back(*std::move(info));
    } else {
      // Listed but unreadable (removed meanwhile, no permission): say so.
      ScriptInfo broken;
      broken.name = name;
      broken.describe_error = FirstLine(StdSv(info.status().message()));
      out.push_back(std::move(broken));
    }
  }
  return out;
}

std::vector<TrialResult> TryEachScript(const LoadedTrace& base,
                                       const std::vector<ScriptInfo>& scripts,
                                       const ScriptSpec& spec, int threads) {
  std::vector<Trial> trials;
  for (const ScriptInfo& s : scripts) {
    trials.push_back({{s.path.empty() ? s.name : s.path}, {}});
  }
  return RunTrials(base, trials, spec, threads);
}

std::string TrialVerdict(const TrialResult& r) {
  switch (r.outcome) {
    case TrialOutcome::kApplied: {
      std::string s = absl::StrFormat("applies: %.3fx (%.1f -> %.1f ms per step)", r.speedup,
                                      r.baseline.mean_ns / 1e6, r.predicted.mean_ns / 1e6);
      if (r.work_factor != 1) {
        absl::StrAppend(&s, absl::StrFormat(", throughput %.3fx", r.throughput_speedup));
      }
      return s;
    }
    case TrialOutcome::kUnchanged: return absl::StrCat("nothing to change: ", r.reason);
    case TrialOutcome::kRefused: return absl::StrCat("refuses: ", r.reason);
    case TrialOutcome::kFailed: return absl::StrCat("fails: ", r.reason);
  }
  return "";
}

std::string BoundsText(const lua::ParamValue& p) {
  std::string s = p.integer ? "integer" : "";
  auto add = [&s](const std::string& part) { s = s.empty() ? part : absl::StrCat(s, " ", part); };
  if (p.min.has_value() && p.max.has_value()) {
    add(absl::StrCat("in [", NumberText(*p.min), ", ", NumberText(*p.max), "]"));
  } else if (p.min.has_value()) {
    add(absl::StrCat(">= ", NumberText(*p.min)));
  } else if (p.max.has_value()) {
    add(absl::StrCat("<= ", NumberText(*p.max)));
  }
  return s;
}

void WriteTrialFields(JsonWriter& w, const TrialResult& r) {
  // The same keys whatever the outcome (a stable schema): figures a failed
  // or refused run does not have are null.
  w.Field("outcome", TrialOutcomeName(r.outcome));
  w.Field("reason", r.reason);
  const bool ran = r.outcome == TrialOutcome::kApplied || r.outcome == TrialOutcome::kUnchanged;
  auto number = [&w, ran](std::string_view key, double v) {
    w.Key(key);
    if (ran) {
      w.Double(v);
    } else {
      w.Null();
    }
  };
  number("baseline_us", r.baseline.mean_ns / 1e3);
  number("predicted_us", r.predicted.mean_ns / 1e3);
  number("speedup", r.speedup);
  number("work_per_step", r.work_factor);
  number("throughput_speedup", r.throughput_speedup);
  w.Key("predicted_samples_per_s");
  if (ran && r.samples_per_step > 0 && r.predicted.mean_ns > 0) {
    w.Double(static_cast<double>(r.samples_per_step) * r.work_factor / r.predicted.mean_ns * 1e9);
  } else {
    w.Null();
  }
  w.Key("predicted_noise");
  if (ran) {
    WriteStepJson(w, r.predicted);
  } else {
    w.Null();
  }
  w.Key("host_sensitivity_pct");
  if (ran && r.host_sensitivity_pct >= 0) {
    w.Double(r.host_sensitivity_pct);
  } else {
    w.Null();
  }
  w.Key("first_step_share");
  if (ran && r.first_step_share.has_value()) {
    w.Double(*r.first_step_share);
  } else {
    w.Null();
  }
}

namespace {

void WriteParam(JsonWriter& w, const lua::ParamValue& p) {
  w.BeginObject().Field("name", p.name).Field("type", p.type).Field("doc", p.doc);
  w.Key("default");
  double v = 0;
  if (p.type == "number" && absl::SimpleAtod(p.default_text, &v)) {
    w.Double(v);
  } else if (p.type == "boolean") {
    w.Bool(p.default_text == "true");
  } else {
    w.String(p.default_text);
  }
  if (p.type == "number") w.Field("integer", p.integer);
  if (p.min.has_value()) w.Field("min", *p.min);
  if (p.max.has_value()) w.Field("max", *p.max);
  w.EndObject();
}

}  // namespace

std::string ScriptsJson(const std::vector<ScriptInfo>& scripts, const std::string& trace_path,
                        const std::vector<TrialResult>& tried) {
  JsonWriter w;
  w.BeginObject();
  if (!trace_path.empty()) w.Field("trace", trace_path);
  w.Key("scripts").BeginArray();
  for (size_t i = 0; i < scripts.size(); ++i) {
    const ScriptInfo& s = scripts[i];
    w.BeginObject().Field("name", s.name).Field("path", s.path);
    w.Field("summary", s.header.summary).Field("preconditions", s.header.preconditions);
    w.Field("ignores", s.header.ignores);
    w.Field("memory", s.header.memory);
    if (!s.describe_error.empty()) w.Field("describe_error", s.describe_error);
    w.Key("params").BeginArray();
    for (const lua::ParamValue& p : s.params) WriteParam(w, p);
    w.EndArray();
    if (i < tried.size()) {
      w.Key("on_trace").BeginObject();
      w.Field("verdict", TrialVerdict(tried[i]));
      WriteTrialFields(w, tried[i]);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str();
}

}  // namespace reverie::whatif
