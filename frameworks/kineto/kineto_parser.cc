#include "frameworks/kineto/kineto_parser.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "frameworks/kineto/kineto_limits.h"
#include "frameworks/kineto/kineto_numbers.h"
#include "simdjson.h"

namespace reverie::kineto {
namespace {

namespace od = simdjson::ondemand;

// A failed simdjson call, with the place it happened.
struct JsonFailure {
  simdjson::error_code code = simdjson::SUCCESS;
};

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                        s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// The text of a string value when it needs no unescaping, read straight from
// the input (no copy into simdjson's string buffer); false otherwise.
bool QuickString(od::value& v, std::string_view* out) {
  const std::string_view tok = TrimRight(v.raw_json_token());
  if (tok.size() < 2 || tok.front() != '"' || tok.back() != '"') return false;
  const std::string_view inner = tok.substr(1, tok.size() - 2);
  if (inner.find('\\') != std::string_view::npos) return false;
  *out = inner;
  return true;
}

bool GetString(od::value& v, std::string_view* out) {
  if (QuickString(v, out)) return true;
  return v.get_string().get(*out) == simdjson::SUCCESS;
}

// Integers may be JSON numbers or numeric strings ("tid": "24572").
bool ReadInt(od::value& v, int64_t* out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t == od::json_type::number) return ParseIntegerText(v.raw_json_token(), out);
  if (t == od::json_type::string) {
    std::string_view s;
    return GetString(v, &s) && ParseIntegerText(s, out);
  }
  return false;
}

bool ReadMicros(od::value& v, int64_t* ns) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t == od::json_type::number) return ParseMicrosToNanos(v.raw_json_token(), ns);
  if (t == od::json_type::string) {
    std::string_view s;
    return GetString(v, &s) && ParseMicrosToNanos(s, ns);
  }
  return false;
}

// pid / tid: a number, a numeric string, or a label ("stream 7", "Spans").
void ReadId(od::value& v, int64_t* out, bool* is_text) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return;
  if (t == od::json_type::number) {
    ParseIntegerText(v.raw_json_token(), out);
    return;
  }
  std::string_view s;
  if (t != od::json_type::string || !GetString(v, &s)) return;
  if (ParseIntegerText(s, out) || ParseTrailingInteger(s, out)) return;
  *is_text = true;
}

uint64_t NonNegative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

void ReadTriple(od::value& v, int32_t out[3]) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) return;
  int i = 0;
  for (auto item : arr) {
    od::value x;
    int64_t n = 0;
    if (item.get(x) != simdjson::SUCCESS) return;
    if (i < 3 && ReadInt(x, &n)) out[i] = static_cast<int32_t>(n);
    ++i;
  }
}

// Key of an object field, read from the input without unescaping (the keys
// we look for have no escapes, so an escaped key simply matches nothing).
std::string_view KeyOf(od::field& f) {
  const char* p = f.key().raw();
  const char* q = p;
  while (*q != '"') q += (*q == '\\') ? 2 : 1;
  return std::string_view(p, static_cast<size_t>(q - p));
}

simdjson::error_code ParseArgs(od::value& v, RawEvent* e) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return simdjson::SUCCESS;  // not an object: ignore
  int64_t n = 0;
  for (auto field_result : obj) {
    od::field f;
    if (auto err = std::move(field_result).get(f); err) return err;
    const std::string_view k = KeyOf(f);
    od::value x = f.value();
    if (k == "correlation") {
      if (ReadInt(x, &n)) e->correlation = NonNegative(n), e->has_correlation = true;
    } else if (k == "External id" || k == "external id") {
      if (ReadInt(x, &n)) e->external_id = NonNegative(n);
    } else if (k == "stream") {
      if (ReadInt(x, &e->stream)) e->has_stream = true;
    } else if (k == "device") {
      if (ReadInt(x, &n)) e->device = static_cast<int32_t>(n), e->has_device = true;
    } else if (k == "context") {
      ReadInt(x, &e->context);
    } else if (k == "grid") {
      ReadTriple(x, e->grid);
    } else if (k == "block") {
      ReadTriple(x, e->block);
    } else if (k == "registers per thread") {
      if (ReadInt(x, &n)) e->registers_per_thread = static_cast<int32_t>(n);
    } else if (k == "shared memory") {
      ReadInt(x, &e->shared_memory);
    } else if (k == "bytes") {
      ReadInt(x, &e->bytes);
    } else if (k == "kind") {
      GetString(x, &e->copy_kind_arg);
    } else if (k == "graph id") {
      ReadInt(x, &e->graph_id);
    } else if (k == "cbid") {
      if (ReadInt(x, &n)) e->cbid = static_cast<uint32_t>(NonNegative(n));
    } else if (k == "Sequence number") {
      if (ReadInt(x, &e->sequence_number)) e->has_sequence_number = true;
    } else if (k == "Fwd thread id") {
      ReadInt(x, &e->fwd_thread_id);
    } else if (k == "Python id") {
      if (ReadInt(x, &e->python_id)) e->has_python_id = true;
    } else if (k == "Python parent id") {
      ReadInt(x, &e->python_parent_id);
    } else if (k == "cuda_sync_kind") {
      GetString(x, &e->sync_kind);
    } else if (k == "wait_on_stream") {
      if (ReadInt(x, &e->wait_on_stream)) e->has_wait_on_stream = true;
    } else if (k == "wait_on_cuda_event_record_corr_id") {
      ReadInt(x, &e->wait_on_event_record_corr);
    } else if (k == "wait_on_cuda_event_id" || k == "event_id" || k == "event id") {
      if (ReadInt(x, &e->event_id)) e->has_event_id = true;
    } else if (k == "Collective name") {
      GetString(x, &e->collective_name);
    } else if (k == "In msg nelems") {
      ReadInt(x, &e->in_nelems);
    } else if (k == "Out msg nelems") {
      ReadInt(x, &e->out_nelems);
    } else if (k == "Group size") {
      ReadInt(x, &e->group_size);
    } else if (k == "dtype") {
      GetString(x, &e->dtype);
    } else if (k == "Process Group Name") {
      GetString(x, &e->process_group_name);
    } else if (k == "Seq") {
      ReadInt(x, &e->seq);
    } else if (k == "name") {
      GetString(x, &e->meta_name);
    } else if (k == "labels") {
      GetString(x, &e->meta_labels);
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ParseEvent(od::object& obj, RawEvent* e) {
  for (auto field_result : obj) {
    od::field f;
    if (auto err = std::move(field_result).get(f); err) return err;
    const std::string_view k = KeyOf(f);
    od::value v = f.value();
    if (k.size() == 2) {
      if (k == "ph") {
        std::string_view s;
        if (GetString(v, &s) && !s.empty()) e->ph = s[0];
      } else if (k == "ts") {
        if (ReadMicros(v, &e->ts_ns)) {
          e->has_ts = true;
        } else {
          e->bad_number = true;
        }
      } else if (k == "id") {
        int64_t id = 0;
        if (ReadInt(v, &id)) e->flow_id = static_cast<uint64_t>(id), e->has_flow_id = true;
      } else if (k == "bp") {
        std::string_view s;
        e->binding_enclosing = GetString(v, &s) && s == "e";
      }
    } else if (k == "cat") {
      GetString(v, &e->cat_name);
      e->cat = CategoryFromName(e->cat_name);
    } else if (k == "name") {
      e->has_name = GetString(v, &e->name);
    } else if (k == "pid") {
      e->has_pid = true;
      ReadId(v, &e->pid, &e->pid_is_text);
    } else if (k == "tid") {
      e->has_tid = true;
      ReadId(v, &e->tid, &e->tid_is_text);
    } else if (k == "dur") {
      if (ReadMicros(v, &e->dur_ns)) {
        e->has_dur = true;
      } else {
        e->bad_number = true;
      }
    } else if (k == "args") {
      if (auto err = ParseArgs(v, e); err) return err;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ParseDevices(od::value& v, proto::TraceHeader* header) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) return simdjson::SUCCESS;
  for (auto item : arr) {
    od::object obj;
    if (item.get_object().get(obj) != simdjson::SUCCESS) continue;
    proto::Device* d = header->add_devices();
    for (auto field_result : obj) {
      od::field f;
      if (auto err = std::move(field_result).get(f); err) return err;
      const std::string_view k = KeyOf(f);
      od::value x = f.value();
      int64_t n = 0;
      std::string_view s;
      if (k == "name") {
        if (GetString(x, &s)) d->set_name(std::string(s));
      } else if (!ReadInt(x, &n)) {
        continue;
      } else if (k == "id") {
        d->set_id(static_cast<int32_t>(n));
      } else if (k == "totalGlobalMem") {
        d->set_total_memory_bytes(n);
      } else if (k == "computeMajor") {
        d->set_compute_major(static_cast<int32_t>(n));
      } else if (k == "computeMinor") {
        d->set_compute_minor(static_cast<int32_t>(n));
      } else if (k == "numSms") {
        d->set_sm_count(static_cast<int32_t>(n));
      } else if (k == "maxThreadsPerMultiprocessor") {
        d->set_max_threads_per_sm(static_cast<int32_t>(n));
      } else if (k == "regsPerMultiprocessor") {
        d->set_registers_per_sm(static_cast<int32_t>(n));
      } else if (k == "sharedMemPerMultiprocessor" || k == "maxSharedMemoryPerMultiProcessor") {
        d->set_shared_memory_per_sm_bytes(n);
      } else if (k == "warpSize") {
        d->set_warp_size(static_cast<int32_t>(n));
      } else if (k == "clockRate") {
        d->set_sm_clock_khz(n);
      } else if (k == "memoryClockRate") {
        d->set_memory_clock_khz(n);
      } else if (k == "memoryBusWidth") {
        d->set_memory_bus_width_bits(static_cast<int32_t>(n));
      }
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ParseDistributed(od::value& v, proto::TraceHeader* header) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return simdjson::SUCCESS;
  proto::DistributedInfo* info = header->mutable_distributed();
  for (auto field_result : obj) {
    od::field f;
    if (auto err = std::move(field_result).get(f); err) return err;
    const std::string_view k = KeyOf(f);
    od::value x = f.value();
    int64_t n = 0;
    std::string_view s;
    if (k == "backend") {
      if (GetString(x, &s)) info->set_backend(std::string(s));
    } else if (k == "rank") {
      if (ReadInt(x, &n)) info->set_rank(static_cast<int32_t>(n));
    } else if (k == "world_size") {
      if (ReadInt(x, &n)) info->set_world_size(static_cast<int32_t>(n));
    } else if (k == "nccl_version") {
      if (GetString(x, &s)) info->set_nccl_version(std::string(s));
    } else if (k == "pg_config") {
      od::array groups;
      if (x.get_array().get(groups) != simdjson::SUCCESS) continue;
      for (auto g : groups) {
        od::object gobj;
        if (g.get_object().get(gobj) != simdjson::SUCCESS) continue;
        proto::ProcessGroup* pg = info->add_groups();
        for (auto gfield_result : gobj) {
          od::field gf;
          if (auto err = std::move(gfield_result).get(gf); err) return err;
          const std::string_view gk = KeyOf(gf);
          od::value gx = gf.value();
          if (gk == "pg_name") {
            if (GetString(gx, &s)) pg->set_name(std::string(s));
          } else if (gk == "pg_desc") {
            if (GetString(gx, &s)) pg->set_desc(std::string(s));
          } else if (gk == "pg_size") {
            if (ReadInt(gx, &n)) pg->set_size(static_cast<int32_t>(n));
          } else if (gk == "ranks") {
            od::array ranks;
            if (gx.get_array().get(ranks) != simdjson::SUCCESS) continue;
            for (auto r : ranks) {
              od::value rv;
              if (r.get(rv) == simdjson::SUCCESS && ReadInt(rv, &n)) {
                pg->add_ranks(static_cast<int32_t>(n));
              }
            }
          }
        }
      }
    }
  }
  return simdjson::SUCCESS;
}

// Scalars become metadata text; objects are flattened one level
// ("metadata.key"); arrays (log lines) are left out.
simdjson::error_code AddMetadata(std::string_view key, od::value& v, proto::TraceHeader* header) {
  od::json_type t;
  if (auto err = v.type().get(t); err) return err;
  auto* md = header->mutable_metadata();
  switch (t) {
    case od::json_type::string: {
      std::string_view s;
      if (GetString(v, &s)) (*md)[std::string(key)] = std::string(s);
      break;
    }
    case od::json_type::number:
    case od::json_type::boolean:
      (*md)[std::string(key)] = std::string(TrimRight(v.raw_json_token()));
      break;
    case od::json_type::object: {
      od::object obj;
      if (v.get_object().get(obj) != simdjson::SUCCESS) break;
      for (auto field_result : obj) {
        od::field f;
        if (auto err = std::move(field_result).get(f); err) return err;
        const std::string child = absl::StrCat(Sv(key), ".", Sv(KeyOf(f)));
        od::value x = f.value();
        od::json_type ct;
        if (x.type().get(ct) != simdjson::SUCCESS) continue;
        if (ct == od::json_type::string || ct == od::json_type::number ||
            ct == od::json_type::boolean) {
          if (auto err = AddMetadata(child, x, header); err) return err;
        }
      }
      break;
    }
    default:
      break;
  }
  return simdjson::SUCCESS;
}

std::string_view TypeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "an unknown value";
}

absl::Status JsonError(const std::string& path, const JsonInput& input, od::document& doc,
                       simdjson::error_code code) {
  const char* where = nullptr;
  std::string at = "at end of input";
  if (doc.current_location().get(where) == simdjson::SUCCESS && where >= input.data() &&
      where <= input.data() + input.size()) {
    at = absl::StrCat("at byte ", where - input.data());
  }
  if (code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    // simdjson checks that the last character closes the top-level value.
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": invalid JSON: the top-level value is not closed at the end of the",
        input.was_gzip() ? " decompressed" : "", " text (byte ", input.size(),
        "): truncated, or followed by other content"));
  }
  if (code == simdjson::UNCLOSED_STRING) {
    at = absl::StrCat("at byte ", input.size(), " (end of input)");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": invalid JSON ", at, input.was_gzip() ? " of the decompressed text" : "", ": ",
      simdjson::error_message(code)));
}

}  // namespace

absl::Status ParseKinetoJson(const JsonInput& input, const std::string& path,
                             KinetoTraceBuilder* builder) {
  od::parser parser;
  const simdjson::padded_string_view view(input.data(), input.size(), input.capacity());
  od::document doc;
  if (auto err = parser.iterate(view).get(doc); err) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": invalid JSON", input.was_gzip() ? " (decompressed text)" : "", ": ",
        simdjson::error_message(err)));
  }
  od::json_type type;
  if (auto err = doc.type().get(type); err) return JsonError(path, input, doc, err);
  if (type == od::json_type::array) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": is a bare JSON array, not a PyTorch profiler trace (expected an object with "
              "\"traceEvents\")"));
  }
  if (type != od::json_type::object) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": is JSON but not a trace: the top-level value is ", Sv(TypeName(type)),
        " (expected an object with \"traceEvents\")"));
  }
  od::object top;
  if (auto err = doc.get_object().get(top); err) return JsonError(path, input, doc, err);
  bool has_events = false, has_nodes = false, has_schema = false;
  proto::TraceHeader& header = builder->header();
  for (auto field_result : top) {
    od::field f;
    if (auto err = std::move(field_result).get(f); err) return JsonError(path, input, doc, err);
    const std::string_view key = KeyOf(f);
    od::value v = f.value();
    simdjson::error_code err = simdjson::SUCCESS;
    if (key == "traceEvents") {
      od::array events;
      od::json_type t;
      if ((err = v.type().get(t))) return JsonError(path, input, doc, err);
      if (t != od::json_type::array) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": \"traceEvents\" is ", Sv(TypeName(t)), ", not an array of events"));
      }
      if ((err = v.get_array().get(events))) return JsonError(path, input, doc, err);
      has_events = true;
      for (auto item : events) {
        od::value ev;
        if ((err = item.get(ev))) return JsonError(path, input, doc, err);
        od::json_type et;
        if ((err = ev.type().get(et))) return JsonError(path, input, doc, err);
        if (et != od::json_type::object) {
          builder->trace().AddCounter("malformed_event");
          continue;
        }
        od::object obj;
        if ((err = ev.get_object().get(obj))) return JsonError(path, input, doc, err);
        RawEvent e;
        if ((err = ParseEvent(obj, &e))) return JsonError(path, input, doc, err);
        ClampEventNumbers(&e, &builder->trace());  // D7: before any arithmetic
        builder->AddEvent(e);
      }
      builder->EndOfEvents();
    } else if (key == "deviceProperties") {
      err = ParseDevices(v, &header);
    } else if (key == "distributedInfo") {
      err = ParseDistributed(v, &header);
    } else if (key == "baseTimeNanoseconds") {
      int64_t n = 0;
      if (ReadInt(v, &n)) header.set_base_time_ns(n);
    } else if (key == "nodes") {
      has_nodes = true;
      if (has_schema && !has_events) break;  // an execution trace: no need to read it all
    } else if (key == "schema") {
      has_schema = true;
    } else {
      err = AddMetadata(key, v, &header);
    }
    if (err) return JsonError(path, input, doc, err);
  }
  if (!has_events) {
    if (has_nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": is a PyTorch execution trace, not a profiler trace (it has \"nodes\" and "
                "\"schema\", no \"traceEvents\"); give the Kineto trace of the same run"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": is a JSON object without \"traceEvents\": not a PyTorch profiler trace"));
  }
  return absl::OkStatus();
}

}  // namespace reverie::kineto
