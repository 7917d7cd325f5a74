// File: hardware/text.h
//
// The few string helpers hardware/ needs, on std::string_view (Debian's
// abseil has its own string_view type: base/sv.h).
#ifndef REVERIE_HARDWARE_TEXT_H_
#define REVERIE_HARDWARE_TEXT_H_

#include <cctype>
#include <string>
#include <string_view>

namespace reverie::hardware::text {

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
inline std::string_view Strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}
inline bool ConsumePrefix(std::string_view* s, std::string_view p) {
  if (!s->starts_with(p)) return false;
  s->remove_prefix(p.size());
  return true;
}
inline bool ConsumeSuffix(std::string_view* s, std::string_view p) {
  if (!s->ends_with(p)) return false;
  s->remove_suffix(p.size());
  return true;
}

}  // namespace reverie::hardware::text

#endif  // REVERIE_HARDWARE_TEXT_H_
