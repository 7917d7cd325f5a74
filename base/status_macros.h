// File: base/status_macros.h
//
// RETURN_IF_ERROR / ASSIGN_OR_RETURN look-alikes. The abseil packaged by
// Debian 12 (20220623) predates absl/status/status_macros.h, so these carry a
// REVERIE_ prefix to avoid clashing with it once it exists.
#ifndef REVERIE_BASE_STATUS_MACROS_H_
#define REVERIE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define REVERIE_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::absl::Status reverie_status_ = (expr);     \
    if (!reverie_status_.ok()) return reverie_status_; \
  } while (0)

#define REVERIE_CONCAT_INNER_(a, b) a##b
#define REVERIE_CONCAT_(a, b) REVERIE_CONCAT_INNER_(a, b)

#define REVERIE_ASSIGN_OR_RETURN(lhs, expr) \
  REVERIE_ASSIGN_OR_RETURN_IMPL_(REVERIE_CONCAT_(reverie_statusor_, __LINE__), lhs, expr)

#define REVERIE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return std::move(tmp).status();        \
  lhs = std::move(tmp).value()

#endif  // REVERIE_BASE_STATUS_MACROS_H_
