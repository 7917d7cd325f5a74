#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace reverie::report {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s = buf;
  // Trim trailing zeros to keep documents small.
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

const char* AnchorName(Anchor a) {
  switch (a) {
    case Anchor::kStart:
      return "start";
    case Anchor::kMiddle:
      return "middle";
    case Anchor::kEnd:
      return "end";
  }
  return "start";
}

}  // namespace

std::string EscapeXml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  char buf[48];
  if (a != 0 && (a >= 1e7 || a < 1e-3)) {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
    return buf;
  }
  if (a >= 1000) {
    // Thousands separators for readability.
    std::snprintf(buf, sizeof(buf), "%.0f", std::fabs(v));
    std::string digits = buf, grouped;
    if (v < 0) grouped.push_back('-');
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return grouped;
  }
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  target = std::max(target, 2);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (raw <= step) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step) * step;
  for (double t = first; t <= hi + step * 0.999 && ticks.size() < 64; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi) break;
  }
  return ticks;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::Rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view title) {
  body_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(std::max(w, 0.0)) +
           "\" height=\"" + Num(std::max(h, 0.0)) + "\" fill=\"" + EscapeXml(fill) + "\"";
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>" + EscapeXml(title) + "</title></rect>\n";
  }
}

void Svg::Line(double x1, double y1, double x2, double y2, std::string_view stroke,
               double stroke_width, bool dashed) {
  body_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
           Num(y2) + "\" stroke=\"" + EscapeXml(stroke) + "\" stroke-width=\"" + Num(stroke_width) +
           "\"" + (dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>\n";
}

void Svg::Polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                   double stroke_width, bool dashed) {
  body_ += "<polyline fill=\"none\" stroke=\"" + EscapeXml(stroke) + "\" stroke-width=\"" +
           Num(stroke_width) + (dashed ? "\" stroke-dasharray=\"6 4" : "") + "\" points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) body_ += ' ';
    body_ += Num(points[i].first) + "," + Num(points[i].second);
  }
  body_ += "\"/>\n";
}

void Svg::Circle(double cx, double cy, double r, std::string_view fill, std::string_view title) {
  body_ += "<circle cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) + "\" r=\"" + Num(r) + "\" fill=\"" +
           EscapeXml(fill) + "\"";
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>" + EscapeXml(title) + "</title></circle>\n";
  }
}

void Svg::Text(double x, double y, std::string_view text, Anchor anchor, double font_size,
               double rotate, bool bold) {
  absl::StrAppend(&body_, "<text x=\"", Num(x), "\" y=\"", Num(y), "\" font-size=\"",
                  Num(font_size), "\" text-anchor=\"", AnchorName(anchor), "\"");
  if (rotate != 0) {
    absl::StrAppend(&body_, " transform=\"rotate(", Num(rotate), " ", Num(x), " ", Num(y), ")\"");
  }
  if (bold) body_ += " font-weight=\"bold\"";
  absl::StrAppend(&body_, ">", EscapeXml(text), "</text>\n");
}

std::string Svg::Render(bool standalone) const {
  return std::string(standalone ? "<svg xmlns=\"http://www.w3.org/2000/svg\"" : "<svg") +
         " width=\"" + Num(width_) + "\" height=\"" + Num(height_) + "\" viewBox=\"0 0 " +
         Num(width_) + " " + Num(height_) +
         "\" font-family=\"sans-serif\">\n<rect x=\"0\" y=\"0\" width=\"" + Num(width_) +
         "\" height=\"" + Num(height_) + "\" fill=\"white\"/>\n" + body_ + "</svg>\n";
}

std::string_view PaletteColor(int i) {
  static constexpr std::string_view kColors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                 "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
  constexpr int n = sizeof(kColors) / sizeof(kColors[0]);
  return kColors[((i % n) + n) % n];
}

}  // namespace reverie::report
