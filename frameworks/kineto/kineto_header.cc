#include "frameworks/kineto/kineto_header.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "frameworks/kineto/json_values.h"

namespace reverie::kineto {
namespace {

using json::GetString;
namespace od = simdjson::ondemand;
using json::Fatal;

// A string field's copy, or "" (absent, or not a string).
std::string Text(od::value& x, json::ReadState* st) {
  std::string_view s;
  return GetString(x, &s, st) ? std::string(s) : std::string();
}

simdjson::error_code ParseDevices(od::value& v, proto::TraceHeader* header, json::ReadState* st) {
  return json::ForEachObject(v, [&](od::object& obj) {
    proto::Device* d = header->add_devices();
    return json::ForEachField(obj, [&](std::string_view k, od::value& x) {
      int64_t n = 0;
      if (k == "name") {
        d->set_name(Text(x, st));
      } else if (!json::ReadInt(x, &n, st)) {
        // not a number: nothing else to read
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
      return simdjson::SUCCESS;
    });
  });
}

simdjson::error_code ParseRanks(od::value& x, proto::ProcessGroup* pg, json::ReadState* st) {
  od::array ranks;
  if (auto err = x.get_array().get(ranks); err) return Fatal(err) ? err : simdjson::SUCCESS;
  for (auto r : ranks) {
    if (auto err = r.error(); err) return err;
    int64_t n = 0;
    if (json::ReadInt(json::Held(r), &n, st)) pg->add_ranks(static_cast<int32_t>(n));
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ParseDistributed(od::value& v, proto::TraceHeader* header, json::ReadState* st) {
  od::object obj;
  if (auto err = v.get_object().get(obj); err) return Fatal(err) ? err : simdjson::SUCCESS;
  proto::DistributedInfo* info = header->mutable_distributed();
  return json::ForEachField(obj, [&](std::string_view k, od::value& x) {
    int64_t n = 0;
    if (k == "backend") {
      info->set_backend(Text(x, st));
    } else if (k == "rank") {
      if (json::ReadInt(x, &n, st)) info->set_rank(static_cast<int32_t>(n));
    } else if (k == "world_size") {
      if (json::ReadInt(x, &n, st)) info->set_world_size(static_cast<int32_t>(n));
    } else if (k == "nccl_version") {
      info->set_nccl_version(Text(x, st));
    } else if (k == "pg_config") {
      return json::ForEachObject(x, [&](od::object& group) {
        proto::ProcessGroup* pg = info->add_groups();
        return json::ForEachField(group, [&](std::string_view gk, od::value& gx) {
          int64_t size = 0;
          if (gk == "pg_name") {
            pg->set_name(Text(gx, st));
          } else if (gk == "pg_desc") {
            pg->set_desc(Text(gx, st));
          } else if (gk == "pg_size") {
            if (json::ReadInt(gx, &size, st)) pg->set_size(static_cast<int32_t>(size));
          } else if (gk == "ranks") {
            return ParseRanks(gx, pg, st);
          }
          return simdjson::SUCCESS;
        });
      });
    }
    return simdjson::SUCCESS;
  });
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
      return json::ForEachField(obj, [&](std::string_view k, od::value& x) {
        od::json_type ct;
        if (auto err = x.type().get(ct); err) return err;
        if (ct != od::json_type::string && ct != od::json_type::number &&
            ct != od::json_type::boolean) {
          return simdjson::SUCCESS;
        }
        return AddMetadata(absl::StrCat(Sv(key), ".", Sv(k)), x, header, st);
      });
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
