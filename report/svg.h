// File: report/svg.h
//
// A minimal SVG writer: the report draws its own charts so that a report is
// one self-contained file with no plotting service, script or network fetch.
//
// Invariants:
// - Every text passed in is XML-escaped on output, so labels taken from a
//   trace (kernel names with '<' and '&') never break the document.
// - Str() always returns a well-formed document: elements are written whole
//   (no open groups are left dangling).
#ifndef REVERIE_REPORT_SVG_H_
#define REVERIE_REPORT_SVG_H_

#include <string>
#include <string_view>
#include <vector>

namespace reverie::report {

// Escapes &, <, >, " and ' for XML text and attribute values.
std::string EscapeXml(std::string_view s);

// Formats a number compactly for tick labels: "0", "2.5", "1,200", "1.5e+06".
std::string FormatNumber(double v);

// "Nice" tick values (1, 2, 5 x 10^k steps) covering [lo, hi], about
// `target` of them. lo == hi gives a small range around the value.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);

enum class Anchor { kStart, kMiddle, kEnd };

class Svg {
 public:
  Svg(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  // `title` becomes a <title> child (a hover tooltip in browsers).
  void Rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view title = {});
  void Line(double x1, double y1, double x2, double y2, std::string_view stroke,
            double stroke_width = 1.0, bool dashed = false);
  void Polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double stroke_width = 2.0, bool dashed = false);
  void Circle(double cx, double cy, double r, std::string_view fill, std::string_view title = {});
  // `rotate` degrees about (x, y), e.g. -90 for a vertical axis label.
  void Text(double x, double y, std::string_view text, Anchor anchor = Anchor::kStart,
            double font_size = 12, double rotate = 0, bool bold = false);

  // A standalone .svg document (with the SVG namespace declaration).
  std::string Str() const { return Render(true); }
  // For inline use in HTML5, which needs no namespace: keeps a report free of
  // any URL, even the namespace one.
  std::string StrInline() const { return Render(false); }

 private:
  std::string Render(bool standalone) const;

  double width_;
  double height_;
  std::string body_;
};

// A fixed qualitative palette (colour-blind friendly, Okabe-Ito order).
std::string_view PaletteColor(int i);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_SVG_H_
