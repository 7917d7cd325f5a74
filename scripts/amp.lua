-- amp.lua: Automatic Mixed Precision (Daydream §5.1, Algorithm 2; evaluated
-- in §6.2 with NVIDIA Apex AMP, errors below 13%).
--
-- Model. FP16 halves the bytes every kernel moves and lets GEMMs and
-- convolutions use Tensor Cores. Following Daydream, compute-bound kernels
-- (GEMM / convolution: sgemm, scudnn, winograd, ...; lib/common.lua C.COMPUTE)
-- get `compute_speedup` (3x: NVIDIA's "up to 3x on the most compute-intensive
-- workloads" [58]) and every other kernel `memory_speedup` (2x: half the bytes
-- for memory-bound kernels). CPU work is unchanged, which is why the
-- end-to-end speedup is far below 3x when the CPU or the launch rate binds
-- (Daydream Fig. 6). Memcpys and memsets keep their duration (inputs arrive
-- in FP32; `include_memcpy` changes that).
--
-- Assumptions and deviations from Algorithm 2 (which scales every GPU task):
-- - AMP keeps FP32 master weights, so weight-update kernels stay FP32 unless
--   `include_update` is set.
-- - Optional overheads Algorithm 2 leaves out: `cast_kernels` inserts one cast
--   kernel (with its launch call) before each compute-bound forward kernel,
--   as Apex O1 casts weights per op; `grad_scaler` inserts GradScaler's
--   unscale and update-scale kernels before each step's weight update. Their
--   durations are the median existing element-wise kernel (cast, update-scale)
--   and the median weight-update kernel (the unscale reads every gradient
--   once, like one update pass).
-- - Requires Tensor Cores (Volta or newer) for the 3x; on older GPUs set
--   compute_speedup to about 2.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  compute_speedup = {default = 3, min = 1, doc = "speedup of compute-bound (GEMM/conv) kernels"},
  memory_speedup = {default = 2, min = 1, doc = "speedup of every other (memory-bound) kernel"},
  include_update = {default = false, doc = "also speed up weight-update kernels (FP16 optimizer)"},
  include_memcpy = {default = false, doc = "also halve memcpy / memset durations"},
  cast_kernels = {default = false, doc = "insert an FP16 cast kernel before each compute-bound forward kernel"},
  grad_scaler = {default = false, doc = "insert GradScaler's unscale + update-scale kernels per step"},
}

local scope = {}
if not P.include_update then scope.phase = {"unknown", "forward", "backward", "data_loading", "other"} end
local kernels = graph:select{kind = "kernel", phase = scope.phase}
local compute = kernels & C.compute_kernels(graph)
local memory = kernels - compute

-- Estimate the inserted kernels from the trace before anything changes (only
-- when asked: a median walks every element-wise kernel).
local elementwise_ns, update_ns = 0, 0
if P.cast_kernels or P.grad_scaler then
  elementwise_ns = C.median_duration(graph:select{kind = "kernel", name = C.ELEMENTWISE}
                                     - C.compute_kernels(graph), 2000)
  update_ns = C.median_duration(graph:select{kind = "kernel", phase = "update"}, elementwise_ns)
end

compute:shrink(P.compute_speedup)
memory:shrink(P.memory_speedup)
if P.include_memcpy then
  graph:select{kind = {"memcpy", "memset"}, phase = scope.phase}:shrink(2)
end

local casts, scalers = 0, 0
if P.cast_kernels then
  -- Casts run at FP16 speed like any other element-wise kernel.
  for t in (compute & graph:select{phase = "forward"}):tasks() do
    graph:insert{kind = "kernel", name = "cast_fp32_to_fp16 (amp)", before = t,
                 duration_ns = math.floor(elementwise_ns / P.memory_speedup)}
    casts = casts + 1
  end
end
if P.grad_scaler then
  for _, step in ipairs(C.steps(graph)) do
    local first = C.kernels(step.update)[1]
    if first then
      graph:insert{kind = "kernel", name = "_amp_foreach_non_finite_check_and_unscale_ (amp)",
                   before = first, duration_ns = update_ns}
      graph:insert{kind = "kernel", name = "_amp_update_scale_ (amp)", before = first,
                   duration_ns = elementwise_ns}
      scalers = scalers + 2
    end
  end
end

reverie.log(string.format("%d compute-bound kernels / %g, %d other kernels / %g; %d casts, %d scaler kernels inserted",
                          #compute, P.compute_speedup, #memory, P.memory_speedup, casts, scalers))
