#include "frameworks/kineto/kineto_header.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "frameworks/kineto/json_values.h"

namespace reverie::kineto {
namespace {

using json::GetString;
using json::KeyOf;
namespace od = simdjson::ondemand;
using json::Fatal;

simdjson::error_code ParseDevices(od::value& v, proto::TraceHeader* header, json::ReadState* st) {
  od::array arr;
  if (auto err = v.get_array().get(arr); err) return Fatal(err) ? err : simdjson::SUCCESS;
  for (auto item : arr) {
    od::object obj;
    if (auto err = item.get_object().get(obj); err) {
      if (Fatal(err)) return err;
      continue;
    }
    proto::Device* d = header->add_devices();
    for (auto field_result : obj) {
      if (auto err = field_result.error(); err) return err;
      od::field& f = json::Held(field_result);
      const std::string_view k = KeyOf(f);
      od::value& x = f.value();
      int64_t n = 0;
      std::string_view s;
      if (k == "name") {
        if (GetString(x, &s, st)) d->set_name(std::string(s));
      } else if (!json::ReadInt(x, &n, st)) {
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

simdjson::error_code ParseProcessGroups(od::value& v, proto::DistributedInfo* info,
                                        json::ReadState* st) {
  od::array groups;
  if (auto err = v.get_array().get(groups); err) return Fatal(err) ? err : simdjson::SUCCESS;
  for (auto g : groups) {
    od::object gobj;
    if (auto err = g.get_object().get(gobj); err) {
      if (Fatal(err)) return err;
      continue;
    }
    proto::ProcessGroup* pg = info->add_groups();
    for (auto field_result : gobj) {
      if (auto err = field_result.error(); err) return err;
      od::field& f = json::Held(field_result);
      const std::string_view k = KeyOf(f);
      od::value& x = f.value();
      int64_t n = 0;
      std::string_view s;
      if (k == "pg_name") {
        if (GetString(x, &s, st)) pg->set_name(std::string(s));
      } else if (k == "pg_desc") {
        if (GetString(x, &s, st)) pg->set_desc(std::string(s));
      } else if (k == "pg_size") {
        if (json::ReadInt(x, &n, st)) pg->set_size(static_cast<int32_t>(n));
      } else if (k == "ranks") {
        od::array ranks;
        if (auto err = x.get_array().get(ranks); err) {
          if (Fatal(err)) return err;
          continue;
        }
        for (auto r : ranks) {
          if (auto err = r.error(); err) return err;
          if (json::ReadInt(json::Held(r), &n, st)) pg->add_ranks(static_cast<int32_t>(n));
        }
      }
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ParseDistributed(od::value& v, proto::TraceHeader* header, json::ReadState* st) {
  od::object obj;
  if (auto err = v.get_object().get(obj); err) return Fatal(err) ? err : simdjson::SUCCESS;
  proto::DistributedInfo* info = header->mutable_distributed();
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = json::Held(field_result);
    const std::string_view k = KeyOf(f);
    od::value& x = f.value();
    int64_t n = 0;
    std::string_view s;
    if (k == "backend") {
      if (GetString(x, &s, st)) info->set_backend(std::string(s));
    } else if (k == "rank") {
      if (json::ReadInt(x, &n, st)) info->set_rank(static_cast<int32_t>(n));
    } else if (k == "world_size") {
      if (json::ReadInt(x, &n, st)) info->set_world_size(static_cast<int32_t>(n));
    } else if (k == "nccl_version") {
      if (GetString(x, &s, st)) info->set_nccl_version(std::string(s));
    } else if (k == "pg_config") {
      if (auto err = ParseProcessGroups(x, info, st); err) return err;
    }
  }
  return simdjson::SUCCESS;
}

// Scalars become metadata text; objects are flattened one level
// ("metadata.key"); arrays (log lines) are left out.
simdjson::error_code AddMetadata(std::string_view key, od::value& v, proto::TraceHeader* header,
                                 json::ReadState* st) {
  od::json_type t;
  if (auto err = v.type().get(t); err) return err;
  auto* md = header->mutable_metadata();
  switch (t) {
    case od::json_type::string: {
      std::string_view s;
      if (GetString(v, &s, st)) (*md)[std::string(key)] = std::string(s);
      break;
    }
    case od::json_type::number:
    case od::json_type::boolean:
      (*md)[std::string(key)] = std::string(json::TrimRight(v.raw_json_token()));
      break;
    case od::json_type::object: {
      od::object obj;
      if (auto err = v.get_object().get(obj); err) return err;
      for (auto field_result : obj) {
        if (auto err = field_result.error(); err) return err;
        od::field& f = json::Held(field_result);
        const std::string child = absl::StrCat(Sv(key), ".", Sv(KeyOf(f)));
        od::value& x = f.value();
        od::json_type ct;
        if (auto err = x.type().get(ct); err) return err;
        if (ct == od::json_type::string || ct == od::json_type::number ||
            ct == od::json_type::boolean) {
          if (auto err = AddMetadata(child, x, header, st); err) return err;
        }
      }
      break;
    }
    default:
      break;
  }
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code ParseHeaderField(std::string_view key, od::value& v,
                                      proto::TraceHeader* header, json::ReadState* st) {
  if (key == "deviceProperties") return ParseDevices(v, header, st);
  if (key == "distributedInfo") return ParseDistributed(v, header, st);
  if (key == "baseTimeNanoseconds") {
    int64_t n = 0;
    if (json::ReadInt(v, &n, st)) header->set_base_time_ns(n);
    return simdjson::SUCCESS;
  }
  return AddMetadata(key, v, header, st);
}

}  // namespace reverie::kineto
