// File: frameworks/kineto/kineto_op_inputs.h
//
// The record_shapes arguments of a Kineto cpu_op ("Input Dims": per input a
// tensor's sizes, a tensor list's, or [] for no tensor; "Input type" and
// "Concrete Inputs": a string per input), read into the parser's scratch
// within its limits (OpInputsScratch: anything past them is cut and
// flagged `truncated`).
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_OP_INPUTS_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_OP_INPUTS_H_

#include <string_view>

#include "frameworks/kineto/json_values.h"
#include "frameworks/kineto/kineto_event.h"
#include "simdjson.h"

namespace reverie::kineto {

void ReadInputDims(simdjson::ondemand::value& v, OpInputsScratch* inputs, json::ReadState* state);
void ReadInputStrings(simdjson::ondemand::value& v, std::string_view OpInputsScratch::Input::*field,
                      OpInputsScratch* inputs, json::ReadState* state);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_OP_INPUTS_H_
