// File: base/printable.h
//
// Text from an input (a script's error or print, a trace's names, a .pb's
// recorded paths) shown on a terminal or pasted into a command the user may
// run. Traces and scripts may be hostile (issue 29, D31): an escape sequence
// in a message could clear the screen or rewrite what the terminal shows,
// and a path with "; cmd" in it turns a suggested command into another one.
#ifndef REVERIE_BASE_PRINTABLE_H_
#define REVERIE_BASE_PRINTABLE_H_

#include <string>
#include <string_view>

namespace reverie {

// `s` with every control character written as \xHH: the C0 controls (ESC,
// BEL, CR, backspace, ...) but tab and, when `keep_newlines`, newline; DEL;
// and the C1 controls, raw (0x80-0x9f outside a UTF-8 sequence) or encoded
// as UTF-8 (U+0080-U+009F), which some terminals obey too. A backslash is
// kept as is. Other bytes, valid UTF-8 or not, pass through.
inline std::string EscapeControl(std::string_view s, bool keep_newlines = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto escape = [&out](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      const bool control = (c < 0x20 && c != '\t' && !(keep_newlines && c == '\n')) || c == 0x7f;
      if (control) {
        escape(c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // The length of a well-formed UTF-8 sequence starting here, or 0.
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < len; ++k) {
      if (i + k >= s.size() || (byte(i + k) & 0xc0) != 0x80) len = 0;
    }
    if (len == 2 && c == 0xc2 && byte(i + 1) <= 0x9f) {  // U+0080-U+009F
      escape(c);
      escape(byte(i + 1));
    } else if (len > 0) {
      out.append(s.substr(i, len));
    } else if (c <= 0x9f) {  // a raw C1 control, outside any sequence
      escape(c);
    } else {
      out += static_cast<char>(c);
    }
    i += len > 0 ? len : 1;
  }
  return out;
}

// One line for the terminal: every line of `s` kept, line breaks written as
// spaces, every other control character as \xHH (EscapeControl), so no
// escape sequence in a path, a trace's name or a script's text quoted in a
// message reaches the terminal (issue 29, D31).
inline std::string TerminalLine(std::string_view s) {
  std::string line(s);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return EscapeControl(line);
}

// `s` quoted for a POSIX shell: as is when it holds only characters no shell
// reads specially, else in single quotes (a quote inside as '\'').
inline std::string ShellQuote(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ',' ||
                      c == ':' || c == '=' || c == '@' || c == '%';
    plain = plain && safe;
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

}  // namespace reverie

#endif  // REVERIE_BASE_PRINTABLE_H_
