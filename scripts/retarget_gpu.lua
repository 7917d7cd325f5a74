-- retarget_gpu.lua: what if this training step ran on another GPU?
-- (Habitat, Yu et al. USENIX ATC'21, wave scaling §3.3-§4.2; run inside the
-- graph simulator as the Habitat digest's §1.6 suggests, so CPU overhead,
-- launch rate and overlap are kept where Habitat sums kernel times.)
--
--   reverie predict trace.json.gz --script retarget_gpu --set to=H100-SXM
--
-- Model. Every kernel's measured time is carried from the trace's GPU (the
-- origin) to `to` with wave scaling (transforms/gpu_scaling.h): the kernel's
-- blocks are counted in waves from its recorded launch geometry and the
-- occupancy limits of each GPU, and one wave's time scales with memory
-- bandwidth per resident block to the power gamma and with per-SM math
-- throughput to the power 1 - gamma.
-- - GEMM / convolution kernels (lib/common.lua C.COMPUTE): gamma from
--   Habitat's Eq. 3 with the destination's ridge point for the kernel's math
--   (peak FLOPS / bandwidth) and an assumed arithmetic `intensity`: Habitat
--   measures intensity with CUPTI metrics, a trace does not record it.
--   Their math is read from the kernel name: tf32, fp16/bf16 tensor-core
--   (884/1688/16816/hmma/gmma/nvjet/f16/bf16...), fp8, else fp32 CUDA
--   cores; `compute_math` overrides it when names say nothing (Triton).
-- - Every other kernel: gamma `memory_gamma` (1: memory-bound, Habitat's
--   default when it has no metrics); one that fits in a single wave on both
--   GPUs keeps its time (latency-bound).
-- - Host<->device copies scale with the host link (pcie_gbs), device copies
--   and memsets with memory bandwidth; peer copies and NCCL/RCCL kernels keep
--   their time unless `scale_communication` (interconnects are a separate
--   question: faster_network.lua, ddp.lua).
-- - CPU work and launch calls keep their time: same host, same framework.
--
-- Assumptions and limits.
-- - The same kernels run on both GPUs. Habitat predicts cuBLAS/cuDNN ops with
--   per-op MLPs because libraries pick other kernels per architecture; this
--   script wave-scales them instead (Habitat's per-op error: 18% with MLPs,
--   30% with wave scaling). Crossing vendors is refused unless
--   `cross_vendor` is set, since no kernel is shared then.
-- - PyTorch lets cuDNN run FP32 convolutions as TF32 by default
--   (torch.backends.cudnn.allow_tf32): `tf32_convs` applies that where the
--   destination has TF32 and the origin did not; `tf32_matmul` does the same
--   for GEMMs (off by default, like torch.backends.cuda.matmul.allow_tf32).
-- - Peaks are spec-sheet numbers (lib/gpus.lua); only their ratios matter.
-- - Data-parallel communication and the host are unchanged.
--
-- Sources: Habitat §3.3 Eq. 1, §4.2 Eq. 3, and its implementation's
-- small-kernel and no-metrics branches (shared/reference digest §1.2).
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gpus.lua")

local P = reverie.params{
  to = {default = "", doc = "destination GPU, a key of lib/gpus.lua (H100-SXM, A100-SXM4-80GB, L4, ...)"},
  from = {default = "", doc = "origin GPU key when the trace does not name its GPU (default: from the trace)"},
  intensity = {default = 100, min = 0.01, doc = "assumed FLOP per DRAM byte of GEMM/conv kernels (Habitat Eq. 3 input)"},
  memory_gamma = {default = 1, min = 0, max = 1, doc = "memory-boundedness of non-GEMM/conv kernels (1 = bandwidth-bound)"},
  tf32_convs = {default = true, doc = "FP32 convolutions use TF32 where the destination has it and the origin did not"},
  tf32_matmul = {default = false, doc = "FP32 GEMMs use TF32 likewise"},
  compute_math = {default = "auto", doc = "math of GEMM/conv kernels: auto (from the name), fp32, tf32, fp16, bf16, fp8"},
  scale_communication = {default = false, doc = "also wave-scale NCCL/RCCL kernels and peer copies"},
  cross_vendor = {default = false, doc = "allow NVIDIA <-> AMD (the kernels differ; results are rough)"},
}

local function fail(msg) error(msg, 2) end

if P.to == "" then
  fail("set the destination GPU with --set to=KEY (known: " .. G.keys() .. ")")
end
local dest = G.by_key(P.to)
if not dest then fail("unknown GPU '" .. P.to .. "' (known: " .. G.keys() .. ")") end

-- The origin: --set from, else the trace's first GPU. The trace's own
-- occupancy limits win over the table (they describe the actual part).
local origin
local devices = graph:devices()
if P.from ~= "" then
  origin = G.by_key(P.from)
  if not origin then fail("unknown GPU '" .. P.from .. "' (known: " .. G.keys() .. ")") end
  origin = G.copy(origin)
else
  -- The GPU the trace's streams ran on (a trace lists every visible GPU).
  local d = devices[1]
  local streams = graph:resources("stream")
  for _, dev in ipairs(devices) do
    if streams[1] and dev.id == streams[1].device then d = dev end
  end
  if not d or d.name == "" then
    fail("the trace does not name its GPU; set it with --set from=KEY (known: " .. G.keys() .. ")")
  end
  local entry = G.by_device_name(d.name)
  if not entry then
    fail("GPU '" .. d.name .. "' is not in lib/gpus.lua; set --set from=KEY (known: " ..
         G.keys() .. ")")
  end
  origin = G.copy(entry)
  origin.name = d.name
  if d.max_threads_per_sm > 0 then origin.max_threads_per_sm = d.max_threads_per_sm end
  if d.registers_per_sm > 0 and origin.vendor == "nvidia" then origin.registers_per_sm = d.registers_per_sm end
  if d.shared_memory_per_sm_kb > 0 then origin.shared_memory_per_sm_kb = d.shared_memory_per_sm_kb end
  if d.sm_count > 0 and d.sm_count ~= origin.sm_count then
    -- A MIG slice or another SKU: keep per-SM throughput, use the trace's SMs.
    reverie.log(string.format("trace reports %d SMs, lib/gpus.lua %s has %d: using %d", d.sm_count,
                              entry.key, origin.sm_count, d.sm_count))
    for k, v in pairs(origin.tflops) do origin.tflops[k] = v * d.sm_count / origin.sm_count end
    origin.sm_count = d.sm_count
  end
end
if origin.vendor ~= dest.vendor and not P.cross_vendor then
  fail(string.format("%s (%s) and %s (%s) run different kernels; wave scaling assumes " ..
                     "the same ones (--set cross_vendor=true to try anyway)",
                     origin.key, origin.vendor, dest.key, dest.vendor))
end

-- Kernel math from its name. Order matters: tf32 and fp8 names also carry
-- tensor-core shape tags.
local FP8 = {"fp8", "e4m3", "e5m2"}
local TF32 = {"tf32", "tensorop_s1688", "tensorop_s16816"}
-- nvjet: cuBLASLt's Hopper/Blackwell GEMMs, whose names carry no data type;
-- taken as half precision, what they mostly run (set compute_math otherwise).
local HALF = {"h884", "h1688", "h16816", "884", "1688", "16816", "hmma", "gmma", "f16", "bf16",
              "bfloat16", "fp16", "half", "tensorop", "nvjet"}
local CONV = {"conv", "scudnn", "winograd", "wgrad", "dgrad", "fprop", "implicit"}
local MATHS = {auto = true, fp32 = true, tf32 = true, fp16 = true, bf16 = true, fp8 = true}
if not MATHS[P.compute_math] then
  fail("compute_math must be auto, fp32, tf32, fp16, bf16 or fp8, got '" .. P.compute_math .. "'")
end
local function math_of(name)
  if P.compute_math ~= "auto" then return P.compute_math end
  if C.name_has(name, FP8) then return "fp8" end
  if C.name_has(name, TF32) then return "tf32" end
  if C.name_has(name, HALF) then return C.name_has(name, {"bf16", "bfloat16"}) and "bf16" or "fp16" end
  return "fp32"
end

-- The math `g` runs `math` with: itself when it has a peak for it, else what
-- the hardware would fall back to.
local function supported_math(g, math)
  local t = g.tflops
  if t[math] then return math end
  if math == "bf16" and t.fp16 then return "fp16" end
  if math == "fp8" and (t.fp16 or t.bf16) then return t.fp16 and "fp16" or "bf16" end
  return "fp32"
end

-- Habitat Eq. 3: gamma from intensity x and the ridge point R = P/D.
local function gamma_for(g, math)
  local ridge = g.tflops[math] * 1000 / g.memory_bandwidth_gbs  -- FLOP per byte
  local x = P.intensity
  if x < ridge then return 1 - 0.5 * x / ridge end
  return 0.5 * ridge / x
end

local kernels = graph:select{kind = "kernel"}
local comm = kernels:select{class = "communication"}
local compute = (kernels & C.compute_kernels(graph)) - comm
local memory = kernels - compute - comm
local total = {kernels = 0, before = 0, after = 0, single_wave = 0, unknown = 0}
local function add(label, st)
  total.kernels = total.kernels + st.kernels
  total.before = total.before + st.before_ns
  total.after = total.after + st.after_ns
  total.single_wave = total.single_wave + st.single_wave
  total.unknown = total.unknown + st.unknown_geometry
  if st.kernels > 0 then
    reverie.log(string.format("  %-28s %6d kernels  %10.3f -> %10.3f ms (%.2fx)", label, st.kernels,
                              st.before_ns / 1e6, st.after_ns / 1e6,
                              st.after_ns > 0 and st.before_ns / st.after_ns or 0))
  end
end

-- GEMM / conv kernels, grouped by (origin math, destination math); the math
-- is decided once per distinct kernel name.
local groups = {}
for name, sel in pairs(compute:group_by("name")) do
  local m = math_of(name)
  local om, dm = supported_math(origin, m), supported_math(dest, m)
  if om == "fp32" and dm == "fp32" and dest.tflops.tf32 and not origin.tflops.tf32 then
    local is_conv = C.name_has(name, CONV)
    if (is_conv and P.tf32_convs) or (not is_conv and P.tf32_matmul) then dm = "tf32" end
  end
  local key = om .. ">" .. dm
  if groups[key] then
    groups[key].sel = groups[key].sel | sel
  else
    groups[key] = {om = om, dm = dm, sel = sel}
  end
end
local keys = {}
for k in pairs(groups) do keys[#keys + 1] = k end
table.sort(keys)
reverie.log(string.format("%s -> %s (wave scaling; GEMM/conv intensity %g FLOP/B)", origin.name or origin.key,
                          dest.key, P.intensity))
for _, k in ipairs(keys) do
  local grp = groups[k]
  local o, d = G.copy(origin), G.copy(dest)
  o.peak_tflops, d.peak_tflops = o.tflops[grp.om], d.tflops[grp.dm]
  local gamma = gamma_for(dest, grp.dm)
  add(string.format("GEMM/conv %s->%s g=%.2f", grp.om, grp.dm, gamma),
      grp.sel:retarget_gpu{from = o, to = d, gamma = gamma})
end
add(string.format("other kernels g=%.2f", P.memory_gamma),
    memory:retarget_gpu{from = origin, to = dest, gamma = P.memory_gamma, math = "fp32"})
if P.scale_communication then
  add("communication g=1", comm:retarget_gpu{from = origin, to = dest, gamma = 1, math = "fp32"})
end

-- Copies and memsets by the link they use.
local function scale_copies(sel, ratio, label)
  if #sel == 0 then return end
  local before = sel:total_duration()
  sel:scale(ratio)
  reverie.log(string.format("  %-28s %6d tasks    %10.3f -> %10.3f ms", label, #sel, before / 1e6,
                            sel:total_duration() / 1e6))
end
local host = graph:select{kind = "memcpy", name = {"htod", "dtoh", "htoh"}}
scale_copies(host, origin.pcie_gbs / dest.pcie_gbs, "host copies (PCIe)")
scale_copies(graph:select{kind = "memcpy", name = "dtod"} | graph:select{kind = "memset"},
             origin.memory_bandwidth_gbs / dest.memory_bandwidth_gbs, "device copies, memsets")
if P.scale_communication then
  scale_copies(graph:select{kind = "memcpy", name = "ptop"},
               origin.memory_bandwidth_gbs / dest.memory_bandwidth_gbs, "peer copies")
end

reverie.log(string.format("  kernels: %d scaled, %.3f -> %.3f ms (%.2fx); %d in one wave on both GPUs, " ..
                          "%d without launch geometry", total.kernels, total.before / 1e6, total.after / 1e6,
                          total.after > 0 and total.before / total.after or 0, total.single_wave, total.unknown))
if total.kernels > 0 and total.unknown * 2 > total.kernels then
  reverie.log("  note: most kernels lack grid/block sizes in this trace; they were scaled by whole-GPU ratios")
end
if #comm > 0 and not P.scale_communication then
  reverie.log(string.format("  %d communication kernels kept as measured (--set scale_communication=true " ..
                            "to scale them)", #comm))
end
