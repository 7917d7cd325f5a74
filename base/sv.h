// File: base/sv.h
//
// Debian 12's abseil (20220623) is built with ABSL_OPTION_USE_STD_STRING_VIEW
// 0, so absl::string_view is its own type: StrCat, StrSplit and heterogeneous
// flat_hash_map lookups do not accept std::string_view. Our interfaces use
// std::string_view; Sv() crosses into abseil at no cost.
#ifndef REVERIE_BASE_SV_H_
#define REVERIE_BASE_SV_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace reverie {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view StdSv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace reverie

#endif  // REVERIE_BASE_SV_H_
