// reverie.params{...}: a script's declared parameters, typed by their
// defaults and overridden by `--set key=value` / `--set script.key=value`.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

enum ParamType { kNumber, kBoolean, kString };

struct ParamSpec {  // views into the Lua stack of the declaration being read
  const char* name;
  int type;
  double num;
  int boolean;
  const char* str;
  const char* doc;
  int has_min, has_max, integer;
  double min, max;
};

bool ParseBool(std::string_view v, bool* out) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "0" || v == "no" || v == "off") {
    *out = false;
    return true;
  }
  return false;
}

std::string NumberText(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

std::string DeclaredList(const EngineState& S) {
  std::vector<std::string> names;
  for (const ParamValue& p : S.results.params) names.push_back(p.name);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// Applies an override to `p`, checks it and records the declaration. The
// value to return is then in `p` (numbers, booleans) or S.results.params.back()
// (strings). Messages carry no script name: luaL_error adds "file.lua:LINE:".
absl::Status Declare(EngineState& S, ParamSpec& p) {
  ParamValue v;
  v.name = p.name;
  v.doc = p.doc;
  v.type = p.type == kNumber ? "number" : p.type == kBoolean ? "boolean" : "string";
  v.default_text = p.type == kNumber    ? NumberText(p.num)
                   : p.type == kBoolean ? (p.boolean ? "true" : "false")
                                        : std::string(p.str);
  v.value_text = v.default_text;
  if (p.type == kNumber) {
    v.integer = p.integer != 0;
    if (p.has_min) v.min = p.min;
    if (p.has_max) v.max = p.max;
  }
  const std::string qualified = absl::StrCat(S.run.stem, ".", p.name);
  const std::string* text = nullptr;
  std::string key;
  if (S.run.overrides != nullptr) {
    if (auto it = S.run.overrides->find(qualified); it != S.run.overrides->end()) {
      text = &it->second;
      key = qualified;
    } else if (auto it2 = S.run.overrides->find(p.name); it2 != S.run.overrides->end()) {
      text = &it2->second;
      key = p.name;
    }
  }
  if (text != nullptr) {
    v.overridden = true;
    v.value_text = *text;
    S.results.used_keys.insert(key);
    if (p.type == kNumber) {
      char* end = nullptr;
      const double d = std::strtod(text->c_str(), &end);
      if (text->empty() || end == nullptr || *end != '\0' || !std::isfinite(d)) {
        return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' expects a finite number, got '",
                                    *text, "'"));
      }
      p.num = d;
    } else if (p.type == kBoolean) {
      bool b = false;
      if (!ParseBool(*text, &b)) {
        return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' expects true or false, got '", *text,
                                    "'"));
      }
      p.boolean = b;
    }
  }
  if (p.type == kNumber) {
    if (!std::isfinite(p.num)) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' must be a finite number, got ",
                                  NumberText(p.num)));
    }
    // No cast to an integer type: a double beyond int64 does not convert.
    if (p.integer && (std::fabs(p.num) > 9.0e15 || p.num != std::trunc(p.num))) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' must be a whole number, got ",
                                  NumberText(p.num)));
    }
    if ((p.has_min && p.num < p.min) || (p.has_max && p.num > p.max)) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' = ", NumberText(p.num), " is outside [",
                                  p.has_min ? NumberText(p.min) : "-inf", ", ",
                                  p.has_max ? NumberText(p.max) : "inf", "]"));
    }
  }
  S.results.params.push_back(std::move(v));
  return absl::OkStatus();
}

void SortParams(EngineState& S) {
  std::sort(S.results.params.begin(), S.results.params.end(),
            [](const ParamValue& a, const ParamValue& b) { return a.name < b.name; });
}

bool KnownSpecField(const char* f) {
  for (const char* k : {"default", "doc", "min", "max", "integer"}) {
    if (std::strcmp(f, k) == 0) return true;
  }
  return false;
}

}  // namespace

absl::Status CheckOverridesUsed(EngineState& S) {
  if (S.run.overrides == nullptr) return absl::OkStatus();
  const std::string prefix = S.run.stem + ".";
  for (const auto& [key, value] : *S.run.overrides) {
    const bool mine = key.rfind(prefix, 0) == 0;
    const bool unqualified = key.find('.') == std::string::npos;
    if (S.results.used_keys.count(key)) continue;
    if (mine || (unqualified && S.run.only_script)) {
      const std::string name = mine ? key.substr(prefix.size()) : key;
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown parameter '", name, "' (", S.run.display_name, " declares: ", DeclaredList(S), ")"));
    }
  }
  return absl::OkStatus();
}

int Params(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  EngineState& S = State(L);
  if (S.results.params_declared) return luaL_error(L, "reverie.params may be called only once");
  S.results.params_declared = true;
  lua_newtable(L);  // 2: result
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {  // key -2, spec -1
    if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "parameter names must be strings");
    ParamSpec p{};
    p.name = lua_tostring(L, -2);
    if (!lua_istable(L, -1)) {
      return luaL_error(L, "parameter '%s' must be declared as {default = ..., doc = \"...\"}",
                        p.name);
    }
    const int spec = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, spec) != 0) {
      const char* f = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
      if (!KnownSpecField(f)) {
        return luaL_error(L, "parameter '%s': unknown field '%s' (default, doc, min, max, integer)",
                          p.name, f);
      }
      lua_pop(L, 1);
    }
    lua_getfield(L, spec, "default");
    switch (lua_type(L, -1)) {
      case LUA_TNUMBER: p.type = kNumber; p.num = lua_tonumber(L, -1); break;
      case LUA_TBOOLEAN: p.type = kBoolean; p.boolean = lua_toboolean(L, -1); break;
      case LUA_TSTRING: p.type = kString; p.str = lua_tostring(L, -1); break;
      default:
        return luaL_error(L, "parameter '%s' needs a default that is a number, boolean or string",
                          p.name);
    }
    lua_getfield(L, spec, "doc");
    if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "parameter '%s' needs a doc string", p.name);
    p.doc = lua_tostring(L, -1);
    lua_getfield(L, spec, "min");
    p.has_min = lua_isnumber(L, -1);
    p.min = lua_tonumber(L, -1);
    lua_getfield(L, spec, "max");
    p.has_max = lua_isnumber(L, -1);
    p.max = lua_tonumber(L, -1);
    lua_getfield(L, spec, "integer");
    p.integer = lua_toboolean(L, -1);
    RaiseIfError(L, Declare(S, p));
    lua_pushvalue(L, spec - 1);  // the name
    switch (p.type) {
      case kNumber:
        if (p.integer) {
          lua_pushinteger(L, static_cast<lua_Integer>(p.num));
        } else {
          lua_pushnumber(L, p.num);
        }
        break;
      case kBoolean: lua_pushboolean(L, p.boolean); break;
      default: lua_pushstring(L, S.results.params.back().value_text.c_str()); break;
    }
    lua_settable(L, 2);
    lua_settop(L, spec - 1);  // keep the key for lua_next
  }
  SortParams(S);
  RaiseIfError(L, CheckOverridesUsed(S));
  if (S.run.describe) {
    // Describe mode: the declarations are all it asked for; LuaEngine::Run
    // reads `described` and ends the run without an error.
    S.results.described = true;
    lua_pushliteral(L, "described");
    return lua_error(L);
  }
  return 1;
}

}  // namespace reverie::lua::internal
