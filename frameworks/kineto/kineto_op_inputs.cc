// Kineto's record_shapes arguments of a cpu_op, read into the parser's
// reusable scratch (frameworks/kineto/kineto_event.h OpInputsScratch).
#include "frameworks/kineto/kineto_op_inputs.h"

#include <cstdint>

namespace reverie::kineto {

namespace od = simdjson::ondemand;

namespace {

// Reads a tensor's sizes (an array of integers) into inputs->dims.
void ReadDims(od::array& arr, uint32_t* count, OpInputsScratch* inputs, json::ReadState* state) {
  for (auto item : arr) {
    if (!state->Note(item.error())) return;
    int64_t n = 0;
    if (!json::ReadInt(json::Held(item), &n, state)) continue;
    if (*count >= OpInputsScratch::kMaxDims || inputs->dims.size() >= OpInputsScratch::kMaxEventDims) {
      inputs->truncated = true;
      continue;
    }
    inputs->dims.push_back(n);
    ++*count;
  }
}

// Calls fn(input, value) for each element of the per-input array `v`, the
// input null past those kept; stops when fn returns false (malformed JSON,
// noted in `state`).
template <typename Fn>
void ForEachInput(od::value& v, OpInputsScratch* inputs, json::ReadState* state, Fn fn) {
  od::array arr;
  if (!state->Note(v.get_array().get(arr))) return;
  size_t i = 0;
  for (auto item : arr) {
    if (!state->Note(item.error())) return;
    OpInputsScratch::Input* in = inputs->At(i++);
    if (!fn(in, json::Held(item))) return;
  }
}

// One tensor's sizes, or a tensor list's, into `in`; false on malformed JSON.
bool ReadOneInputDims(od::value& x, OpInputsScratch::Input* in, OpInputsScratch* inputs,
                      json::ReadState* state) {
  od::array dims;
  if (!state->Note(x.get_array().get(dims))) return false;
  in->dims_begin = static_cast<uint32_t>(inputs->dims.size());
  in->ranks_begin = static_cast<uint32_t>(inputs->ranks.size());
  for (auto d : dims) {
    if (!state->Note(d.error())) return false;
    od::value& y = json::Held(d);
    if (json::FirstChar(y) == '[') {  // a tensor list
      in->is_list = true;
      od::array inner;
      if (!state->Note(y.get_array().get(inner))) return false;
      if (in->ranks_count >= OpInputsScratch::kMaxListTensors) {
        inputs->truncated = true;
        continue;
      }
      uint32_t rank = 0;
      ReadDims(inner, &rank, inputs, state);
      in->dims_count += rank;
      inputs->ranks.push_back(static_cast<int32_t>(rank));
      ++in->ranks_count;
    } else {
      int64_t n = 0;
      if (!json::ReadInt(y, &n, state)) continue;
      if (in->dims_count >= OpInputsScratch::kMaxDims ||
          inputs->dims.size() >= OpInputsScratch::kMaxEventDims) {
        inputs->truncated = true;
        continue;
      }
      inputs->dims.push_back(n);
      ++in->dims_count;
    }
  }
  return true;
}

}  // namespace

// "Input Dims": per input, a tensor's sizes ([2, 3]), a tensor list's
// ([[2, 3], [4]]) or [] (no tensor).
void ReadInputDims(od::value& v, OpInputsScratch* inputs, json::ReadState* state) {
  ForEachInput(v, inputs, state, [&](OpInputsScratch::Input* in, od::value& x) {
    if (in == nullptr || json::FirstChar(x) != '[') return true;
    return ReadOneInputDims(x, in, inputs, state);
  });
}

// "Input type" / "Concrete Inputs": one string per input.
void ReadInputStrings(od::value& v, std::string_view OpInputsScratch::Input::*field,
                      OpInputsScratch* inputs, json::ReadState* state) {
  ForEachInput(v, inputs, state, [&](OpInputsScratch::Input* in, od::value& x) {
    if (in != nullptr && json::FirstChar(x) == '"') json::GetString(x, &(in->*field), state);
    return true;
  });
}

}  // namespace reverie::kineto
