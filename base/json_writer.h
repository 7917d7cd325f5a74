// File: base/json_writer.h
//
// JsonWriter: writes one JSON value by hand (no DOM) for the commands'
// --json output and the Python module's results (the same text for both).
// Commas and indentation are handled by the writer; strings are escaped per
// RFC 8259; doubles use the shortest text that reads back to
// the same value (NaN and infinities become null).
//
// Invariants: keys are only written inside objects, values inside arrays or
// after a key; misuse trips an assert in debug builds. str() is complete JSON
// once every Begin* has its End*.
#ifndef REVERIE_BASE_JSON_WRITER_H_
#define REVERIE_BASE_JSON_WRITER_H_

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace reverie {

// Appends `s` as a quoted JSON string (RFC 8259): bytes >= 0x80 pass
// through (names are UTF-8), control characters are escaped. The one
// escaper of every JSON reverie writes, by JsonWriter or streamed by hand.
inline void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

class JsonWriter {
 public:
  // indent = 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }

  JsonWriter& Key(std::string_view key) {
    assert(!stack_.empty() && stack_.back().is_object && !after_key_);
    Separate();
    AppendString(key);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
  }

  JsonWriter& String(std::string_view s) {
    BeforeValue();
    AppendString(s);
    return *this;
  }
  JsonWriter& Int(int64_t v) {
    BeforeValue();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& Double(double v) {
    BeforeValue();
    if (!std::isfinite(v)) {
      out_ += "null";
      return *this;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, r.ptr);
    return *this;
  }
  JsonWriter& Bool(bool v) {
    BeforeValue();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& Null() {
    BeforeValue();
    out_ += "null";
    return *this;
  }

  // Shorthands for "key": value.
  JsonWriter& Field(std::string_view k, std::string_view v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const char* v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, int v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, double v) { return Key(k).Double(v); }
  JsonWriter& Field(std::string_view k, bool v) { return Key(k).Bool(v); }

  const std::string& str() const { return out_; }

 private:
  struct Level {
    bool is_object;
    bool empty = true;
  };

  JsonWriter& Open(char c) {
    BeforeValue();
    out_ += c;
    stack_.push_back({c == '{'});
    return *this;
  }
  JsonWriter& Close(char c) {
    assert(!stack_.empty() && stack_.back().is_object == (c == '}') && !after_key_);
    const bool empty = stack_.back().empty;
    stack_.pop_back();
    if (!empty) NewLine();
    out_ += c;
    return *this;
  }
  void BeforeValue() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    assert(stack_.empty() || !stack_.back().is_object);
    if (!stack_.empty()) Separate();
  }
  void Separate() {
    if (!stack_.back().empty) out_ += ',';
    stack_.back().empty = false;
    NewLine();
  }
  void NewLine() {
    if (indent_ <= 0) return;
    out_ += '\n';
    out_.append(stack_.size() * static_cast<size_t>(indent_), ' ');
  }
  void AppendString(std::string_view s) { AppendJsonString(out_, s); }

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace reverie

#endif  // REVERIE_BASE_JSON_WRITER_H_
