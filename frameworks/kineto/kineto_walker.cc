#include "frameworks/kineto/kineto_walker.h"

#include "frameworks/kineto/kineto_numbers.h"
#include "frameworks/kineto/kineto_op_inputs.h"

namespace reverie::kineto {
namespace {

namespace od = simdjson::ondemand;
using json::KeyOf;

uint64_t NonNegative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// pid / tid: a number, a numeric string, or a label ("stream 7", "Spans").
void ReadId(od::value& v, int64_t* out, bool* is_text, json::ReadState* st) {
  if (json::ReadInt(v, out, st)) return;
  std::string_view s;
  if (json::FirstChar(v) != '"' || !json::GetString(v, &s, st)) return;
  if (!ParseTrailingInteger(s, out)) *is_text = true;
}

}  // namespace

simdjson::error_code EventWalker::ParseArgs(od::value& v, RawEvent* e) {
  od::object obj;
  if (auto err = v.get_object().get(obj); err) {
    return json::Fatal(err) ? err : simdjson::SUCCESS;  // not an object: ignored
  }
  int64_t n = 0;
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = json::Held(field_result);
    const std::string_view k = KeyOf(f);
    od::value& x = f.value();
    if (k == "correlation") {
      if (Int(x, &n)) e->correlation = NonNegative(n), e->has_correlation = true;
    } else if (k == "External id" || k == "external id") {
      if (Int(x, &n)) e->external_id = NonNegative(n);
    } else if (k == "stream") {
      if (Int(x, &e->stream)) e->has_stream = true;
    } else if (k == "device") {
      if (Int(x, &n)) e->device = static_cast<int32_t>(n), e->has_device = true;
    } else if (k == "context") {
      Int(x, &e->context);
    } else if (k == "grid") {
      ReadTriple(x, e->grid);
    } else if (k == "block") {
      ReadTriple(x, e->block);
    } else if (k == "registers per thread") {
      if (Int(x, &n)) e->registers_per_thread = static_cast<int32_t>(n);
    } else if (k == "shared memory") {
      Int(x, &e->shared_memory);
    } else if (k == "bytes") {
      Int(x, &e->bytes);
    } else if (k == "kind") {
      Str(x, &e->copy_kind_arg);
    } else if (k == "graph id") {
      Int(x, &e->graph_id);
    } else if (k == "cbid") {
      if (Int(x, &n)) e->cbid = static_cast<uint32_t>(NonNegative(n));
    } else if (k == "Sequence number") {
      if (Int(x, &e->sequence_number)) e->has_sequence_number = true;
    } else if (k == "Fwd thread id") {
      Int(x, &e->fwd_thread_id);
    } else if (k == "Python id") {
      if (Int(x, &e->python_id)) e->has_python_id = true;
    } else if (k == "Python parent id") {
      Int(x, &e->python_parent_id);
    } else if (k == "cuda_sync_kind") {
      Str(x, &e->sync_kind);
    } else if (k == "wait_on_stream") {
      if (Int(x, &e->wait_on_stream)) e->has_wait_on_stream = true;
    } else if (k == "wait_on_cuda_event_record_corr_id") {
      Int(x, &e->wait_on_event_record_corr);
    } else if (k == "wait_on_cuda_event_id" || k == "event_id" || k == "event id") {
      if (Int(x, &e->event_id)) e->has_event_id = true;
    } else if (k == "Collective name") {
      Str(x, &e->collective_name);
    } else if (k == "In msg nelems") {
      Int(x, &e->in_nelems);
    } else if (k == "Out msg nelems") {
      Int(x, &e->out_nelems);
    } else if (k == "Group size") {
      Int(x, &e->group_size);
    } else if (k == "dtype") {
      Str(x, &e->dtype);
    } else if (k == "Process Group Name") {
      Str(x, &e->process_group_name);
    } else if (k == "Seq") {
      Int(x, &e->seq);
    } else if (k == "Input Dims") {
      ReadInputDims(x, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Input type") {
      ReadInputStrings(x, &OpInputsScratch::Input::type, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Concrete Inputs") {
      ReadInputStrings(x, &OpInputsScratch::Input::concrete, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Addr") {
      Int(x, &e->mem_addr);
    } else if (k == "Bytes") {
      e->has_mem_bytes = Int(x, &e->mem_bytes);
    } else if (k == "Total Allocated") {
      e->has_total_allocated = Int(x, &e->total_allocated);
    } else if (k == "Total Reserved") {
      e->has_total_reserved = Int(x, &e->total_reserved);
    } else if (k == "Device Type") {
      e->has_device_type = Int(x, &e->device_type);
    } else if (k == "Device Id") {
      Int(x, &e->device_id);
    } else if (k == "name") {
      Str(x, &e->meta_name);
    } else if (k == "labels") {
      Str(x, &e->meta_labels);
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code EventWalker::ParseEvent(od::object& obj, RawEvent* e) {
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = json::Held(field_result);
    const std::string_view k = KeyOf(f);
    od::value& v = f.value();
    // Dispatch on length first: every event has these few keys.
    switch (k.size()) {
      case 2:
        if (k == "ph") {
          std::string_view s;
          if (Str(v, &s) && !s.empty()) e->ph = s[0];
        } else if (k == "ts") {
          e->has_ts = json::ReadMicros(v, &e->ts_ns, &state_);
          e->bad_number |= !e->has_ts;
        } else if (k == "id") {
          int64_t id = 0;
          if (Int(v, &id)) e->flow_id = static_cast<uint64_t>(id), e->has_flow_id = true;
        } else if (k == "bp") {
          std::string_view s;
          e->binding_enclosing = Str(v, &s) && s == "e";
        }
        break;
      case 3:
        if (k == "cat") {
          Str(v, &e->cat_name);
          e->cat = CategoryFromName(e->cat_name);
        } else if (k == "pid") {
          e->has_pid = true;
          ReadId(v, &e->pid, &e->pid_is_text, &state_);
        } else if (k == "tid") {
          e->has_tid = true;
          ReadId(v, &e->tid, &e->tid_is_text, &state_);
        } else if (k == "dur") {
          e->has_dur = json::ReadMicros(v, &e->dur_ns, &state_);
          e->bad_number |= !e->has_dur;
        }
        break;
      case 4:
        if (k == "name") {
          e->has_name = Str(v, &e->name);
        } else if (k == "args") {
          if (auto err = ParseArgs(v, e); err) return err;
        }
        break;
      default:
        break;
    }
    // Launch flows (ac2g: the same link as args.correlation) and instant
    // events other than the CPU ones ([memory]) are only counted by their
    // phase and category: once both are known the rest is left to simdjson
    // to skip (a third of the events of a current trace).
    if (e->cat != Category::kNone &&
        (((e->ph == 'i' || e->ph == 'I') && e->cat != Category::kCpuInstantEvent) ||
         (e->cat == Category::kAc2g && (e->ph == 's' || e->ph == 'f' || e->ph == 't')))) {
      break;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace reverie::kineto
