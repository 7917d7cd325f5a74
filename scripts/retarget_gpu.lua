-- retarget_gpu.lua: what if this training step ran on another GPU?
-- (Habitat, Yu et al. USENIX ATC'21, run inside the graph simulator as the
-- Habitat digest's §1.6 suggests, so CPU overhead, launch rate and overlap
-- are kept where Habitat sums kernel times.)
--
--   reverie predict trace.json.gz --script retarget_gpu --set to=H100-SXM
--
-- Model: the cost model (transforms/cost_model.h; docs/LUA_API.md "The
-- hardware model"). Each kernel's roofline time is its work (FLOPs and
-- bytes from its op's recorded shapes) at the GPU's peaks (the GPU table,
-- hardware/gpu_table.cc: peak FLOP/s of the kernel's math on tensor cores
-- or CUDA cores, memory bandwidth), divided by the share of the GPU its
-- grid can use (wave quantization with each GPU's SMs and occupancy
-- limits). The kernel class's efficiency curve, fitted on the trace's own
-- kernels (time = fixed + slope x roofline), carries the measured time:
--     T_dest = T_origin x (fixed + slope x R_dest) / (fixed + slope x R_origin)
-- so a kernel reaches the same share of the destination's roofline as of
-- the origin's at its size, and latency-bound kernels keep their time. A
-- kernel whose op recorded no shapes is placed on its class's curve by its
-- own time and scaled by compute peaks (GEMM / convolution / attention) or
-- by memory bandwidth (the others). Habitat's wave scaling (sel:retarget_gpu)
-- remains a primitive for scripts that want it.
-- - Math: read from the kernel's name (tf32, bf16, f16, fp8, sgemm, ...),
--   else its op's input type; a GPU without units for it runs what it has
--   (hardware::EffectiveMath: bf16 on Volta runs in fp32, fp8 on Ampere in
--   bf16). PyTorch lets cuDNN run FP32 convolutions as TF32 by default
--   (torch.backends.cudnn.allow_tf32): `tf32_convs` applies that where the
--   destination has TF32 and the origin did not; `tf32_matmul` does the same
--   for GEMMs (off by default, like torch.backends.cuda.matmul.allow_tf32).
--   `compute_math` makes the destination run GEMM / convolution / attention
--   kernels in that math instead.
-- - Host<->device copies take the model's time for their kind on the
--   destination's host link (the origin's achieved share of its link kept),
--   device copies and memsets scale with memory bandwidth; peer copies and
--   NCCL / RCCL kernels keep their time unless `scale_communication` (then
--   by the scale-up links' ratio: NVLink / Infinity Fabric, else PCIe).
-- - CPU work and launch calls keep their time: same host, same framework.
--
-- Memory: unchanged (the same allocations on the other GPU); `predict`
-- checks the fit against `to`'s memory (reverie.runs_on).
-- Preconditions: `to` names a row of the GPU table; the trace's GPU is in
-- the table (else `from`); nothing to change when `to` is that GPU (and
-- `compute_math` is auto) or when the trace records no kernel; crossing
-- vendors is refused unless `cross_vendor` (see below).
-- After an earlier GPU change in the same run, the kernels start from the
-- GPU they were moved to (graph:gpu() says which, graph:set_gpu records
-- it): H100 -> T4 -> H100 gives the trace's times back, and a later
-- amp.lua uses the new GPU's peaks.
--
-- Assumptions and limits.
-- - The same kernels run on both GPUs at the same share of their peaks.
--   Libraries pick other kernels per architecture, and across vendors no
--   kernel is shared: crossing vendors is refused unless `cross_vendor`, and
--   then the result assumes AMD's libraries reach the share of peak NVIDIA's
--   did (they often do not: docs/ACCURACY.md, X2).
-- - Peaks are datasheet figures at the boost clock; clocks a power limit
--   lowers are not modelled.
-- - Data-parallel communication and the host are unchanged.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  to = {default = "", doc = "destination GPU, a key of the GPU table (reverie.gpus(): H100-SXM, " ..
          "A100-SXM4-80GB, L4, MI300X, ...)"},
  from = {default = "", doc = "origin GPU key when the trace does not name its GPU (default: from the trace)"},
  tf32_convs = {default = true, doc = "FP32 convolutions use TF32 where the destination has it and the origin did not"},
  tf32_matmul = {default = false, doc = "FP32 GEMMs use TF32 likewise"},
  compute_math = {default = "auto", doc = "math of GEMM/conv/attention kernels on the destination: " ..
                    "auto (as on the origin), fp32, tf32, fp16, bf16, fp8"},
  scale_communication = {default = false, doc = "also scale NCCL/RCCL kernels and peer copies by the links"},
  cross_vendor = {default = false, doc = "allow NVIDIA <-> AMD (the kernels differ; results are rough)"},
}

local function fail(msg) error(msg, 2) end

if P.to == "" then
  fail("set the destination GPU with --set to=KEY (known: " .. table.concat(reverie.gpus(), ", ") .. ")")
end
local dest = reverie.gpu(P.to)
if not dest then
  fail("unknown GPU '" .. P.to .. "' (known: " .. table.concat(reverie.gpus(), ", ") .. ")")
end
-- The prediction runs on `to`: `predict` checks its memory against that GPU's.
reverie.runs_on(P.to)
local MATHS = {auto = true, fp32 = true, tf32 = true, fp16 = true, bf16 = true, fp8 = true}
if not MATHS[P.compute_math] then
  fail("compute_math must be auto, fp32, tf32, fp16, bf16 or fp8, got '" .. P.compute_math .. "'")
end
local from_key = P.from ~= "" and P.from or nil
if from_key and not reverie.gpu(from_key) then
  fail("unknown GPU '" .. from_key .. "' (known: " .. table.concat(reverie.gpus(), ", ") .. ")")
end
local origin = graph:gpu{gpu = from_key}
if origin.vendor ~= dest.vendor and not P.cross_vendor then
  reverie.refuse(string.format("%s (%s) and %s (%s) run different kernels; the model assumes the same ones " ..
                     "(--set cross_vendor=true to try anyway)", origin.key, origin.vendor, dest.key,
                     dest.vendor))
end

local moved = origin.moved
if origin.key == dest.key and P.compute_math == "auto" then
  reverie.nothing_to_change(string.format(moved and "an earlier script already moved the kernels to %s (%s)" or
                                          "the trace already ran on %s (%s)", dest.key,
                                          origin.device_name ~= "" and origin.device_name or dest.name))
end

local kernels = graph:select{kind = "kernel"}
local no_kernels = C.no_gpu_kernels(graph)
if no_kernels then reverie.nothing_to_change(no_kernels .. ": nothing runs on the GPU to move") end
local comm = kernels:select{class = "communication"}
local compute = kernels:select{class = {"gemm", "conv", "attention"}}
local other = kernels - compute - comm

-- FP32 kernels that PyTorch would run as TF32 on the destination.
local tf32 = graph:none()
-- Only where no GPU this program ran on could have used TF32: an fp32
-- kernel on a GPU with TF32 says the program turned it off (H100 -> T4 ->
-- H100 keeps the trace's fp32).
local traced = reverie.gpu(origin.trace_gpu)
if P.compute_math == "auto" and dest.matrix_tflops.tf32 and not origin.matrix_tflops.tf32 and
    not traced.matrix_tflops.tf32 then
  local plain = compute:filter(function(t)
    local w = t.work
    local math = w and w.math or "fp32"
    return math == "fp32"
  end)
  if P.tf32_convs then tf32 = tf32 | plain:select{class = "conv"} end
  if P.tf32_matmul then tf32 = tf32 | plain:select{class = {"gemm", "attention"}} end
end

reverie.log(string.format("%s (%s%s) -> %s (%s): cost model, efficiency curves fitted on the trace",
                          origin.device_name ~= "" and origin.device_name or origin.key, origin.key,
                          moved and ", where an earlier script moved the kernels" or "",
                          dest.key, dest.name))
local total = {kernels = 0, before = 0, after = 0, with_work = 0}
local function add(label, st)
  total.kernels = total.kernels + st.kernels
  total.before = total.before + st.before_ns
  total.after = total.after + st.after_ns
  total.with_work = total.with_work + st.with_work
  if st.kernels > 0 then
    reverie.log(string.format("  %-34s %6d kernels  %10.3f -> %10.3f ms (%.2fx)", label, st.kernels,
                              st.before_ns / 1e6, st.after_ns / 1e6,
                              st.after_ns > 0 and st.before_ns / st.after_ns or 0))
  end
end
local spec = {to = dest.key, gpu = from_key}
if P.compute_math ~= "auto" then
  add("GEMM/conv/attention -> " .. P.compute_math,
      compute:retime{to = dest.key, gpu = from_key, dtype = P.compute_math})
else
  add("GEMM/conv/attention fp32->tf32", tf32:retime{to = dest.key, gpu = from_key, dtype = "tf32"})
  add("GEMM/conv/attention", (compute - tf32):retime(spec))
end
add("other kernels", other:retime(spec))

-- Copies and memsets by the link they use.
local function scale_copies(sel, ratio, label)
  if #sel == 0 then return end
  local before = sel:total_duration()
  sel:scale(ratio)
  reverie.log(string.format("  %-34s %6d tasks    %10.3f -> %10.3f ms", label, #sel, before / 1e6,
                            sel:total_duration() / 1e6))
end
local host = graph:select{kind = "memcpy", name = {"htod", "dtoh"}}
if #host > 0 then
  local before = host:total_duration()
  for t in host:tasks() do
    local pinned = t.name:find("Pinned") ~= nil
    local kind = (t.name:find("HtoD") and "htod_" or "dtoh_") .. (pinned and "pinned" or "pageable")
    local here = graph:copy_ns(kind, t.bytes, {gpu = from_key})
    local there = graph:copy_ns(kind, t.bytes, {gpu = from_key, to = dest.key})
    if here > 0 then t.duration_ns = math.floor(t.duration_ns * there / here + 0.5) end
  end
  reverie.log(string.format("  %-34s %6d tasks    %10.3f -> %10.3f ms", "host copies (PCIe)", #host,
                            before / 1e6, host:total_duration() / 1e6))
end
local memory_ratio = origin.memory_bandwidth_gbs / dest.memory_bandwidth_gbs
scale_copies(graph:select{kind = "memcpy", name = "dtod"} | graph:select{kind = "memset"}, memory_ratio,
             "device copies, memsets")
local function link(g) return g.scaleup_gbs > 0 and g.scaleup_gbs or g.pcie_gbs end
if P.scale_communication then
  local ratio = link(origin) / link(dest)
  scale_copies(graph:select{kind = "memcpy", name = "ptop"}, ratio, "peer copies")
  scale_copies(comm, ratio, "communication kernels")
end

graph:set_gpu(dest.key)
reverie.log(string.format("  kernels: %d retimed (%d with work from recorded shapes), %.3f -> %.3f ms (%.2fx)",
                          total.kernels, total.with_work, total.before / 1e6, total.after / 1e6,
                          total.after > 0 and total.before / total.after or 0))
if total.kernels > 0 and total.with_work * 2 < total.kernels then
  reverie.log("  note: most kernels' ops recorded no shapes (record_shapes off): they were placed on " ..
              "their class's efficiency curve by their own time")
end
if #comm > 0 and not P.scale_communication then
  reverie.log(string.format("  %d communication kernels kept as measured (--set scale_communication=true " ..
                            "to scale them)", #comm))
end
