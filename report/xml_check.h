// File: report/xml_check.h
//
// Test helper: a minimal well-formedness check for the SVG / HTML the report
// writes (tags balance, attributes quoted, entities known). Not a general
// XML parser: no DTDs, CDATA or processing instructions, which our writers
// never emit. Void HTML elements (meta, br) are accepted unclosed.
#ifndef REVERIE_REPORT_XML_CHECK_H_
#define REVERIE_REPORT_XML_CHECK_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace reverie::report::testing {

// Joins pieces (GCC 12 warns falsely on "literal" + std::string chains).
inline std::string Msg(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p.data(), p.size());
  return out;
}

// "" when well formed, else what is wrong and where.
inline std::string CheckWellFormed(std::string_view s, bool html = false) {
  std::vector<std::string> stack;
  size_t i = 0;
  auto is_void = [&](const std::string& n) { return html && (n == "meta" || n == "br"); };
  while (i < s.size()) {
    if (s[i] == '&') {
      const size_t semi = s.find(';', i);
      if (semi == std::string_view::npos || semi - i > 8)
        return Msg({"bad entity at ", std::to_string(i)});
      const std::string_view ent = s.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&#39;") {
        return Msg({"unknown entity ", ent});
      }
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') {
      if (s[i] == '>' && !stack.empty() && stack.back() != "style")
        return Msg({"stray > at ", std::to_string(i)});
      ++i;
      continue;
    }
    if (!stack.empty() && stack.back() == "style") {
      // CSS is raw text up to </style>.
      const size_t end = s.find("</style>", i);
      if (end == std::string_view::npos) return "unclosed style";
      i = end;
      if (s.compare(i, 8, "</style>") == 0) {
        stack.pop_back();
        i += 8;
        continue;
      }
    }
    if (s.substr(i, 9) == "<!DOCTYPE") {
      i = s.find('>', i) + 1;
      continue;
    }
    const bool closing = i + 1 < s.size() && s[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    size_t name_start = j;
    while (j < s.size() &&
           (isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':'))
      ++j;
    const std::string name(s.substr(name_start, j - name_start));
    if (name.empty()) return Msg({"empty tag name at ", std::to_string(i)});
    // Attributes: name="value" pairs.
    bool self_closing = false;
    while (true) {
      while (j < s.size() && isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size()) return Msg({"unterminated tag ", name});
      if (s[j] == '>') {
        ++j;
        break;
      }
      if (s[j] == '/' && j + 1 < s.size() && s[j + 1] == '>') {
        self_closing = true;
        j += 2;
        break;
      }
      if (closing) return Msg({"attribute on closing tag ", name});
      size_t a = j;
      while (j < s.size() && s[j] != '=' && s[j] != '>' &&
             !isspace(static_cast<unsigned char>(s[j])))
        ++j;
      if (j == a || j >= s.size() || s[j] != '=') return Msg({"attribute without value in ", name});
      ++j;
      if (j >= s.size() || s[j] != '"') return Msg({"unquoted attribute in ", name});
      const size_t close = s.find('"', j + 1);
      if (close == std::string_view::npos) return Msg({"unterminated attribute in ", name});
      if (s.substr(j + 1, close - j - 1).find('<') != std::string_view::npos)
        return Msg({"'<' in attribute of ", name});
      j = close + 1;
    }
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        return Msg(
            {"closing </", name, "> does not match <", stack.empty() ? "" : stack.back(), ">"});
      }
      stack.pop_back();
    } else if (!self_closing && !is_void(name)) {
      stack.push_back(name);
    }
    i = j;
  }
  if (!stack.empty()) return Msg({"unclosed <", stack.back(), ">"});
  return "";
}

// Number of opening (or self-closing) tags named `name`.
inline int CountTag(std::string_view s, std::string_view name) {
  int n = 0;
  const std::string open = Msg({"<", name});
  for (size_t p = s.find(open); p != std::string_view::npos; p = s.find(open, p + 1)) {
    const size_t after = p + open.size();
    if (after < s.size() && (s[after] == ' ' || s[after] == '>' || s[after] == '/')) ++n;
  }
  return n;
}

// Number of occurrences of `needle`.
inline int Count(std::string_view s, std::string_view needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string_view::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace reverie::report::testing

#endif  // REVERIE_REPORT_XML_CHECK_H_
