#ifndef REVERIE_WHATIF_DEPRECATED_NAMES_H_
#define REVERIE_WHATIF_DEPRECATED_NAMES_H_

// JSON names reverie 0.1.0 used before "step" became the one word for a
// training step. The outputs write them beside the new names for one release
// so that scripts reading them keep working; the docs mark them deprecated.

#include "base/json_writer.h"

namespace reverie::whatif {

inline constexpr char kDeprecatedStepsKey[] = "iterations";  // now "steps"

// Writes the value `write` writes under "steps", then again under its
// deprecated name.
template <typename WriteFn>
void WriteStepsAndAlias(JsonWriter& w, const WriteFn& write) {
  w.Key("steps");
  write();
  w.Key(kDeprecatedStepsKey);
  write();
}

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_DEPRECATED_NAMES_H_
