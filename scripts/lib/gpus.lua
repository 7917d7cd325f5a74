-- lib/gpus.lua: the GPUs retarget_gpu.lua knows, from vendor spec sheets and
-- architecture whitepapers. Load with `local G = reverie.include("lib/gpus.lua")`.
--
-- Fields (what Habitat's wave scaling needs, §3.3, plus the host link):
--   sm_count             SMs (NVIDIA) or CUs (AMD)
--   max_threads_per_sm, max_blocks_per_sm, registers_per_sm,
--   shared_memory_per_sm_kb       occupancy limits (CUDA occupancy calculator)
--   clock_mhz            boost clock, the clock the peaks are quoted at
--   memory_bandwidth_gbs peak DRAM bandwidth, GB/s
--   pcie_gbs             host link per direction, GB/s (x16: gen3 16, gen4 32, gen5 64)
--   tflops               dense peaks (no 2:4 sparsity) by math: fp32 (CUDA
--                        cores), tf32, fp16 / bf16 (tensor cores; GeForce
--                        parts at their FP32-accumulate rate, which AMP uses),
--                        fp8, fp64; absent = not supported
--   match                Lua patterns tried on the lower-cased device name a
--                        trace records (Kineto deviceProperties), in list order
--
-- Ratios between GPUs are what matter: wave scaling multiplies measured times
-- by ratios of these numbers, so spec-sheet peaks (which no kernel reaches)
-- cancel as long as each GPU reaches a similar fraction of its own peak.
-- Habitat measured achieved bandwidth instead; to do the same, copy an entry,
-- put your measured figures in, and pass it as a new key (see below).
--
-- Add a GPU: append an entry to G.list with a unique `key`.
local G = {}

local KB = 1
local VOLTA = {max_threads_per_sm = 2048, max_blocks_per_sm = 32, registers_per_sm = 65536,
               shared_memory_per_sm_kb = 96 * KB}
local TURING = {max_threads_per_sm = 1024, max_blocks_per_sm = 16, registers_per_sm = 65536,
                shared_memory_per_sm_kb = 64 * KB}
local PASCAL = {max_threads_per_sm = 2048, max_blocks_per_sm = 32, registers_per_sm = 65536,
                shared_memory_per_sm_kb = 64 * KB}
local GA100 = {max_threads_per_sm = 2048, max_blocks_per_sm = 32, registers_per_sm = 65536,
               shared_memory_per_sm_kb = 164 * KB}
local GA10X = {max_threads_per_sm = 1536, max_blocks_per_sm = 16, registers_per_sm = 65536,
               shared_memory_per_sm_kb = 100 * KB}
local ADA = {max_threads_per_sm = 1536, max_blocks_per_sm = 24, registers_per_sm = 65536,
             shared_memory_per_sm_kb = 100 * KB}
local HOPPER = {max_threads_per_sm = 2048, max_blocks_per_sm = 32, registers_per_sm = 65536,
                shared_memory_per_sm_kb = 228 * KB}
-- CDNA3: 64-wide wavefronts; VGPRs are per SIMD lane, so no register limit
-- is modelled; LDS is 64 KiB per CU.
local CDNA3 = {max_threads_per_sm = 2048, max_blocks_per_sm = 32, registers_per_sm = 0,
               shared_memory_per_sm_kb = 64 * KB}

local function gpu(limits, t)
  for k, v in pairs(limits) do t[k] = v end
  t.vendor = t.vendor or "nvidia"
  return t
end

G.list = {
  gpu(PASCAL, {key = "P100-SXM2", arch = "Pascal sm_60", sm_count = 56, clock_mhz = 1480,
               memory_bandwidth_gbs = 732, memory_gb = 16, pcie_gbs = 16,
               tflops = {fp32 = 10.6, fp16 = 21.2, fp64 = 5.3}, match = {"p100"}}),
  gpu(PASCAL, {key = "GP100", arch = "Pascal sm_60 (Quadro GP100)", sm_count = 56, clock_mhz = 1442,
               memory_bandwidth_gbs = 717, memory_gb = 16, pcie_gbs = 16,
               tflops = {fp32 = 10.3, fp16 = 20.7, fp64 = 5.2}, match = {"gp100"}}),
  gpu(VOLTA, {key = "V100-PCIe", arch = "Volta sm_70", sm_count = 80, clock_mhz = 1380,
              memory_bandwidth_gbs = 900, memory_gb = 32, pcie_gbs = 16,
              tflops = {fp32 = 14.0, fp16 = 112, fp64 = 7.0}, match = {"v100%-pcie"}}),
  -- DGX Station's V100-DGXS runs at the SXM2 clocks.
  gpu(VOLTA, {key = "V100-SXM2", arch = "Volta sm_70", sm_count = 80, clock_mhz = 1530,
              memory_bandwidth_gbs = 900, memory_gb = 32, pcie_gbs = 16,
              tflops = {fp32 = 15.7, fp16 = 125, fp64 = 7.8}, match = {"v100"}}),
  gpu(TURING, {key = "T4", arch = "Turing sm_75", sm_count = 40, clock_mhz = 1590,
               memory_bandwidth_gbs = 320, memory_gb = 16, pcie_gbs = 16,
               tflops = {fp32 = 8.1, fp16 = 65}, match = {"t4$", "tesla t4"}}),
  gpu(TURING, {key = "RTX2080Ti", arch = "Turing sm_75", sm_count = 68, clock_mhz = 1545,
               memory_bandwidth_gbs = 616, memory_gb = 11, pcie_gbs = 16,
               tflops = {fp32 = 13.4, fp16 = 53.8}, match = {"2080 ti"}}),
  gpu(GA100, {key = "A100-PCIe-80GB", arch = "Ampere sm_80", sm_count = 108, clock_mhz = 1410,
              memory_bandwidth_gbs = 1935, memory_gb = 80, pcie_gbs = 32,
              tflops = {fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, fp64 = 9.7},
              match = {"a100 80gb pcie", "a100%-pcie%-80gb"}}),
  gpu(GA100, {key = "A100-PCIe-40GB", arch = "Ampere sm_80", sm_count = 108, clock_mhz = 1410,
              memory_bandwidth_gbs = 1555, memory_gb = 40, pcie_gbs = 32,
              tflops = {fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, fp64 = 9.7},
              match = {"a100.*pcie"}}),
  gpu(GA100, {key = "A100-SXM4-80GB", arch = "Ampere sm_80", sm_count = 108, clock_mhz = 1410,
              memory_bandwidth_gbs = 2039, memory_gb = 80, pcie_gbs = 32,
              tflops = {fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, fp64 = 9.7},
              match = {"a100.*80gb"}}),
  -- Also "A100-PG509-200" (a board name some clusters report; 40 GB assumed).
  gpu(GA100, {key = "A100-SXM4-40GB", arch = "Ampere sm_80", sm_count = 108, clock_mhz = 1410,
              memory_bandwidth_gbs = 1555, memory_gb = 40, pcie_gbs = 32,
              tflops = {fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, fp64 = 9.7},
              match = {"a100"}}),
  gpu(GA10X, {key = "A10", arch = "Ampere sm_86", sm_count = 72, clock_mhz = 1695,
              memory_bandwidth_gbs = 600, memory_gb = 24, pcie_gbs = 32,
              tflops = {fp32 = 31.2, tf32 = 62.5, fp16 = 125, bf16 = 125}, match = {"a10$"}}),
  gpu(GA10X, {key = "RTX3090", arch = "Ampere sm_86", sm_count = 82, clock_mhz = 1695,
              memory_bandwidth_gbs = 936, memory_gb = 24, pcie_gbs = 32,
              tflops = {fp32 = 35.6, tf32 = 35.6, fp16 = 71, bf16 = 71}, match = {"3090"}}),
  gpu(ADA, {key = "RTX4090", arch = "Ada sm_89", sm_count = 128, clock_mhz = 2520,
            memory_bandwidth_gbs = 1008, memory_gb = 24, pcie_gbs = 32,
            tflops = {fp32 = 82.6, tf32 = 82.6, fp16 = 165.2, bf16 = 165.2, fp8 = 330.3},
            match = {"4090"}}),
  gpu(ADA, {key = "L4", arch = "Ada sm_89", sm_count = 58, clock_mhz = 2040,
            memory_bandwidth_gbs = 300, memory_gb = 24, pcie_gbs = 32,
            tflops = {fp32 = 30.3, tf32 = 60, fp16 = 121, bf16 = 121, fp8 = 242.5}, match = {"l4$"}}),
  gpu(ADA, {key = "L40S", arch = "Ada sm_89", sm_count = 142, clock_mhz = 2520,
            memory_bandwidth_gbs = 864, memory_gb = 48, pcie_gbs = 32,
            tflops = {fp32 = 91.6, tf32 = 183, fp16 = 362, bf16 = 362, fp8 = 733}, match = {"l40s"}}),
  gpu(HOPPER, {key = "H100-PCIe", arch = "Hopper sm_90", sm_count = 114, clock_mhz = 1755,
               memory_bandwidth_gbs = 2000, memory_gb = 80, pcie_gbs = 64,
               tflops = {fp32 = 51.2, tf32 = 378, fp16 = 756, bf16 = 756, fp8 = 1513, fp64 = 25.6},
               match = {"h100 pcie", "h100%-pcie"}}),
  -- "H100 80GB HBM3" is the SXM5 part (the PCIe card has HBM2e).
  gpu(HOPPER, {key = "H100-SXM", arch = "Hopper sm_90", sm_count = 132, clock_mhz = 1980,
               memory_bandwidth_gbs = 3350, memory_gb = 80, pcie_gbs = 64,
               tflops = {fp32 = 67, tf32 = 494.7, fp16 = 989.4, bf16 = 989.4, fp8 = 1978.9, fp64 = 34},
               match = {"h100"}}),
  gpu(HOPPER, {key = "H200", arch = "Hopper sm_90", sm_count = 132, clock_mhz = 1980,
               memory_bandwidth_gbs = 4800, memory_gb = 141, pcie_gbs = 64,
               tflops = {fp32 = 67, tf32 = 494.7, fp16 = 989.4, bf16 = 989.4, fp8 = 1978.9, fp64 = 34},
               match = {"h200"}}),
  -- HGX B200 per-GPU dense figures; fp32 and the clock are derived from
  -- NVIDIA's system totals and are approximate.
  gpu(HOPPER, {key = "B200", arch = "Blackwell sm_100", sm_count = 148, clock_mhz = 1965,
               memory_bandwidth_gbs = 8000, memory_gb = 180, pcie_gbs = 64,
               tflops = {fp32 = 75, tf32 = 1100, fp16 = 2250, bf16 = 2250, fp8 = 4500, fp64 = 37},
               match = {"b200"}}),
  gpu(CDNA3, {key = "MI300X", vendor = "amd", arch = "CDNA3 gfx942", sm_count = 304, clock_mhz = 2100,
              memory_bandwidth_gbs = 5300, memory_gb = 192, pcie_gbs = 64,
              tflops = {fp32 = 163.4, tf32 = 653.7, fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9,
                        fp64 = 81.7},
              match = {"mi300x"}}),
  gpu(CDNA3, {key = "MI325X", vendor = "amd", arch = "CDNA3 gfx942", sm_count = 304, clock_mhz = 2100,
              memory_bandwidth_gbs = 6000, memory_gb = 256, pcie_gbs = 64,
              tflops = {fp32 = 163.4, tf32 = 653.7, fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9,
                        fp64 = 81.7},
              match = {"mi325x"}}),
}

function G.keys()
  local out = {}
  for _, g in ipairs(G.list) do out[#out + 1] = g.key end
  return table.concat(out, ", ")
end

-- The entry whose key equals `key` (case-insensitive), or nil.
function G.by_key(key)
  local want = key:lower()
  for _, g in ipairs(G.list) do
    if g.key:lower() == want then return g end
  end
  return nil
end

-- The entry a trace's device name denotes (first matching pattern in list
-- order, so more specific entries come first), or nil.
function G.by_device_name(name)
  local lower = name:lower()
  for _, g in ipairs(G.list) do
    for _, pat in ipairs(g.match) do
      if lower:find(pat) then return g end
    end
  end
  return nil
end

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
