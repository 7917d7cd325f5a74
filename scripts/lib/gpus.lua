-- lib/gpus.lua: the GPUs reverie knows, read from its C++ table
-- (hardware/gpu_table.cc: every figure with its vendor datasheet or
-- whitepaper; `reverie info TRACE` shows the row a trace matched and where
-- each figure came from). Load with `local G = reverie.include("lib/gpus.lua")`.
--
-- An entry is the table reverie.gpu(key) returns (docs/LUA_API.md, "The
-- hardware model"): key, name, vendor, arch, sm_count, clock_mhz,
-- memory_bandwidth_gbs, memory_gb, l2_mb, pcie_gen, pcie_lanes, pcie_gbs
-- (per direction), scaleup, scaleup_gbs, tflops (best dense peak per math:
-- fp64, fp32, tf32, bf16, fp16, fp8), vector_tflops and matrix_tflops
-- (without and with tensor / matrix cores), the occupancy limits
-- (max_threads_per_sm, max_blocks_per_sm, registers_per_sm,
-- shared_memory_per_sm_kb), source and note. The figures live in C++ only;
-- a script that wants other figures (measured ones, say) copies an entry
-- with G.copy and changes the copy.
local G = {}

G.list = {}
for _, key in ipairs(reverie.gpus()) do G.list[#G.list + 1] = reverie.gpu(key) end

function G.keys() return table.concat(reverie.gpus(), ", ") end

-- The entry whose key equals `key` (case-insensitive), or nil.
function G.by_key(key) return reverie.gpu(key) end

-- The entry a trace's device name denotes (the C++ matcher: name tokens,
-- more specific rows first), or nil.
function G.by_device_name(name) return reverie.match_gpu(name) end

-- A copy of an entry (scripts adjust copies, never the shared table).
function G.copy(g)
  local c = {}
  for k, v in pairs(g) do
    if type(v) == "table" then
      local t = {}
      for k2, v2 in pairs(v) do t[k2] = v2 end
      c[k] = t
    else
      c[k] = v
    end
  end
  return c
end

return G
