-- amp.lua: Automatic Mixed Precision, torch.autocast with fp16 + GradScaler
-- or bf16 (Daydream §5.1, Algorithm 2, evaluated in §6.2 with Apex AMP,
-- errors below 13%; extended here with what autocast really launches).
--
-- Model.
-- 1. Kernel speed: the cost model (transforms/cost_model.h, docs/LUA_API.md
--    "The hardware model"; Daydream's Algorithm 2 with the hardware in it).
--    GEMM, convolution and attention kernels (the kernel classes of
--    depgraph/kernel_class.h) run in `dtype` on tensor cores, at the GPU
--    table's peak for that math (a part without such units runs what it
--    has: V100 and T4 have no bf16 units, so bf16 runs in fp32 there); the
--    fp32 tensors they read and write halve, and so do those of the other
--    forward/backward kernels that run in half under autocast: a tensor's
--    dtype is followed along each stream (the kernel before one stands for
--    its input's producer): ops on autocast's float32 list (pow,
--    layer_norm, softmax, the losses, ...) and what follows them until an
--    eligible op stay in fp32 and keep their time, the backward follows the
--    forward's dtypes; each kernel's measured time moves along its class's
--    efficiency curve fitted on the trace (time = fixed + slope x roofline:
--    a small kernel keeps most of its time, a large compute-bound GEMM gains
--    the peak ratio, an FP32 GEMM that already ran as TF32 gains 2x, not
--    16x; a memory kernel saves its bytes only at the share of its time
--    they explain at the peak bandwidth, so batch norm, far from it, keeps
--    most of its time). A kernel whose op recorded no shapes is placed on its class's
--    curve by its own time. `compute_speedup` / `memory_speedup` replace the
--    model by a fixed factor when set (0 = from the model).
--    AMP keeps FP32 master weights: weight-update kernels keep their time
--    unless `include_update`; copies and memsets keep theirs unless
--    `include_memcpy` (inputs arrive in FP32; then they take the model's
--    time for half the bytes).
-- 2. Autocast casts (`cast_kernels`, on by default for a training step).
--    Autocast runs an eligible op (linear / matmul / conv / bmm: the aten ops
--    of the compute kernels' launches when the trace records ops, else the
--    compute kernels themselves) in half precision, so it casts:
--    - each op's FP32 weight once per forward (autocast caches weight casts
--      inside the forward), and the weight gradient back to FP32 in the
--      backward (the cast's backward); its bias likewise, where it takes
--      one (addmm, baddbmm, linear, conv: every floating argument is cast);
--    - the op's input when it is fp32 (the kernel before it on its stream
--      ran in fp32, or it is the step's first eligible op), and that cast's
--      backward (after the op's backward compute kernel).
--    Each cast is an element-wise kernel that reads FP32 and writes half
--    (6 bytes per element of the weight or input, from the op's recorded
--    shapes), as long as the model says such a kernel takes on this GPU
--    (graph:kernel_ns), else the trace's median element-wise kernel; with a
--    launch call and the CPU cost of the aten op that issues it
--    (`with_op = "aten::_to_copy"`): the trace's own median for that op
--    (graph:op_cost; an fp32 run casts CPU-side tensors too, whole chains
--    of _to_copy, empty_strided and copy_ that issue no call), else the
--    median own time of the trace's ops that launch one element-wise kernel
--    (one pointwise dispatch, transforms/ops.h). A cast's backward is also
--    an autograd node (ToCopyBackward0): it adds the engine's median time
--    per node, the own time of the trace's `evaluate_function` ops. So the
--    kernel count and the CPU time grow as they do under autocast.
-- 3. GradScaler (`grad_scaler`, default on for fp16 training): per step,
--    scale(loss) multiplies the loss (one element-wise kernel after the
--    forward); step() unscales every gradient and checks for inf/NaN
--    (`_amp_foreach_non_finite_check_and_unscale_`, one pass over the
--    gradients: as long as the step's median update kernel), then reads the
--    found-inf flag on the host (`.item()`: a device-to-host copy and a
--    synchronize, so the CPU waits for the backward to finish before the
--    optimizer); update() adjusts the scale (`_amp_update_scale_`, one small
--    kernel). Each has its launch and op cost as above.
-- 4. Library choices in half precision, as the H100 traces show them:
--    cuDNN's tensor-core convolutions read NHWC, so an NCHW model's
--    convolution inputs are transposed first (`layout_transposes`: one
--    nchwToNhwc kernel per forward convolution, two per backward one, the
--    tensor's half bytes in and out on the element-wise curve); in bf16
--    PyTorch runs batch norm in its own kernels rather than cuDNN's, whose
--    speed the fp32 trace cannot show: cuDNN's batch-norm kernels keep their
--    fp32 time there (the measured ones took 1.24x it).
-- Memory: with `profile_memory` and addresses (else left as recorded), the
-- allocations a kernel that now runs in half wrote (graph:allocations'
-- producer) halve, rounded up to the allocator's 512-byte blocks, where
-- they are activations, their gradients or temporaries (allocated in the
-- forward, or in the backward and freed there, within the step); weight
-- gradients and optimizer state stay FP32 (autocast keeps the FP32 weights
-- as the masters: nothing is added for them). Each cast's half copy of a weight
-- or an input (from the op's recorded shapes) is allocated at the cast and
-- kept until the op's backward is launched, as autograd saves it.
-- Preconditions (graph:facts().precision): the GEMM, convolution and
-- attention kernels run in fp32 or tf32 (or their type is unknown). When
-- they already run in fp16, bf16 or fp8 there is nothing to change (autocast
-- or a half-precision model is on), unless `force`, which applies the model
-- to the trace as it is (fp16 <-> bf16, or what stayed in fp32). Nothing to
-- change either when the trace records no kernel at all, or when a script
-- earlier in the run converted compute kernels (marked " [bf16]").
-- What it ignores: casts of buffers and of outputs that leave autocast
-- regions; ops that autocast runs in FP32 but that were already FP32
-- (no cast needed); the casts up to fp32 of half inputs of float32-list ops
-- (GPT-2's pow: whether an input is half depends on type promotion, e.g. a
-- residual add of fp32 and half is fp32, which a trace of the fp32 run does
-- not show, and guessing it from the stream placed 3x the casts measured);
-- part of a cast's CPU, and not all of one kind: on GPT-2's H100 host
-- (docs/ACCURACY.md) the fp32 run's CPU-side _to_copy (17.0-18.4 us) stands
-- for a GPU cast's chain that took 19.8 us (aten::to's own 2-4 us around it
-- is not counted), and the median backward node (11-15 us) for a
-- ToCopyBackward0 node that took 9-10 us at the same host speed (the
-- median node does more); the transposes of convolution results back to
-- NCHW, and all transposes on a trace without op spans (convolutions are
-- found by their ops); any larger batch the smaller activations allow;
-- kernels libraries pick differently in half precision (their speed is
-- what the efficiency curve stands for: the share of peak the trace's
-- kernels reach is assumed on tensor cores too).
local C = reverie.include("lib/common.lua")
local A = reverie.include("lib/autocast.lua")

local training = not graph:select{kind = "kernel", phase = "backward"}:empty()
local P = reverie.params{
  dtype = {default = "fp16", doc = "half type: fp16 (with GradScaler) or bf16 (without)"},
  compute_speedup = {default = 0, min = 0, doc = "fixed speedup of GEMM/conv/attention kernels (0 = from the model)"},
  memory_speedup = {default = 0, min = 0, doc = "fixed speedup of every other forward/backward kernel " ..
                      "(0 = from the model)"},
  include_update = {default = false, doc = "also speed up weight-update kernels (FP16 optimizer)"},
  include_memcpy = {default = false, doc = "also halve memcpy / memset durations"},
  cast_kernels = {default = "auto", doc = "insert autocast's cast kernels (and their CPU cost): " ..
                    "auto (a training step), true, false"},
  layout_transposes = {default = true, doc = "insert cuDNN's NCHW -> NHWC transposes of convolution " ..
                         "inputs (the tensor cores read NHWC)"},
  grad_scaler = {default = "auto", doc = "GradScaler kernels and sync per step: auto (fp16 training), true, false"},
  gpu = {default = "", doc = "the trace's GPU as a key of the GPU table when the trace lacks deviceProperties"},
  force = {default = false, doc = "apply even when the compute kernels already run in half precision"},
}
local precision = graph:facts().precision
local no_kernels = C.no_gpu_kernels(graph)
if no_kernels then reverie.nothing_to_change(no_kernels .. ": nothing to run in half precision") end
if precision.half_or_lower and not P.force then
  reverie.nothing_to_change(string.format("the compute kernels already run in %s (%.0f%% of their " ..
                                          "time) [%s: %s]; --set force=true applies the model anyway",
                                          precision.compute, precision.share * 100, precision.source,
                                          precision.how))
end
-- A script before this one in the run already converted kernels (the cost
-- model marks them " [bf16]"): the facts are the trace's, so they say fp32.
local converted = C.compute_kernels(graph):filter(function(t)
  local to = t.converted
  return to == "fp16" or to == "bf16" or to == "fp8"
end)
if not converted:empty() and not P.force then
  reverie.nothing_to_change(string.format("a script earlier in this run already converted %d compute " ..
                                          "kernels to half precision; --set force=true applies the " ..
                                          "model again", converted:count()))
end
if P.dtype ~= "fp16" and P.dtype ~= "bf16" then error("dtype must be fp16 or bf16, got " .. P.dtype) end
local use_scaler = P.grad_scaler == "true" or (P.grad_scaler == "auto" and P.dtype == "fp16" and training)
local cast_kernels = P.cast_kernels == "true" or (P.cast_kernels == "auto" and training)

local gpu_key = P.gpu ~= "" and P.gpu or nil
-- The model needs the trace's GPU; fixed factors (both given) do not.
local fixed = P.compute_speedup > 0 and P.memory_speedup > 0
local have_model, model = pcall(graph.cost_model, graph, {gpu = gpu_key})
if not have_model then
  if not fixed then
    reverie.refuse(tostring(model) .. "; or give --set compute_speedup=X memory_speedup=Y")
  end
  model = {gpu = "the trace's GPU (no model: fixed factors)"}
end
local ELIGIBLE_OPS = {"aten::linear", "aten::matmul", "aten::mm", "aten::addmm", "aten::bmm",
                      "aten::baddbmm", "aten::conv*", "aten::_convolution", "aten::cudnn_convolution*"}

-- Estimates from the unchanged trace.
local elementwise_ns = C.median_duration(graph:select{kind = "kernel", class = "elementwise"}, 2000)
local update_ns = C.median_duration(graph:select{kind = "kernel", phase = "update"}, elementwise_ns)
-- What a cast costs the CPU, from the trace (lib/autocast.lua).
local op_ns, node_ns = A.cast_cpu_ns(graph)

-- The forward eligible ops: one entry per op (its first compute kernel),
-- with whether its input needs a cast.
local eligible_ids = {}
for t in graph:select{kind = "kernel", op = ELIGIBLE_OPS}:tasks() do eligible_ids[t.id] = true end
local any_ops = next(eligible_ids) ~= nil

-- Autocast's float32 list (PyTorch's autocast op reference, "CUDA ops that
-- can autocast to float32"), by aten op stem: in the forward these run in
-- fp32 whatever their input, and so does what follows them until the next
-- eligible op casts.
local FP32_OPS = {}
for _, n in ipairs{"pow", "softmax", "log_softmax", "softmin", "layer_norm", "group_norm", "norm",
                   "normalize", "exp", "expm1", "log", "log10", "log1p", "log2", "sum", "prod", "cumsum",
                   "cumprod", "rsqrt", "reciprocal", "erfinv", "acos", "asin", "cosh", "sinh", "tan",
                   "softplus", "renorm", "dist", "cdist", "pdist", "cosine_similarity",
                   "cosine_embedding_loss", "cross_entropy", "cross_entropy_loss", "nll_loss", "nll_loss2d",
                   "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
                   "binary_cross_entropy_with_logits", "poisson_nll_loss", "margin_ranking_loss",
                   "hinge_embedding_loss", "soft_margin_loss", "multilabel_margin_loss",
                   "multi_margin_loss", "triplet_margin_loss"} do
  FP32_OPS[n] = true
end
local function op_stem(name)
  local s = name:gsub("^aten::", ""):gsub("^_+", ""):gsub("^native_", "")
  return (s:gsub("_forward$", ""))
end
-- Whether the op that launched kernel t, or one around it, is on the list.
local function runs_fp32(t)
  local op = t.op
  while op do
    if FP32_OPS[op_stem(op.name)] then return true end
    op = op.parent and graph:op(op.parent) or nil
  end
  return false
end

-- The dtype of every forward and backward kernel of a step under autocast,
-- and its eligible forward ops (one entry per op: its first compute kernel,
-- with whether its input needs a cast). A tensor's dtype is followed along
-- each stream (the kernel before one on its stream stands for the producer
-- of its input, which a trace without tensor identities does not record):
-- - forward: an eligible compute kernel runs in half; an op on the float32
--   list in fp32; any other kernel in the dtype of the kernel before it
--   (element-wise ops run in their input's type), fp32 at the start; an
--   eligible op whose input is fp32 casts it;
-- - backward: gradients have their forward tensors' dtypes: a compute
--   kernel's gradient is half, cast back to fp32 after the backward of an
--   op whose input was cast (the cast's backward); other kernels run in the
--   dtype of the kernel before them.
local function plan(step)
  local ops, seen, half, last = {}, {}, {}, {}
  for _, t in ipairs(step.forward) do
    if t.kind == "kernel" then
      local rid = t.resource.id
      local compute = C.is_compute(t)
      local op = t.op
      local key = (any_ops and op) and op.id or t.id
      local eligible = compute and (not any_ops or eligible_ids[t.id] == true)
      if eligible then
        if not seen[key] then
          seen[key] = true
          ops[#ops + 1] = {kernel = t, input_cast = not last[rid]}
        end
        half[t.id] = true
      elseif runs_fp32(t) then
        half[t.id] = false
      else
        half[t.id] = last[rid] == true
      end
      last[rid] = half[t.id]
    end
  end
  local bwd_compute = {}
  for _, t in ipairs(step.backward) do
    if C.is_compute(t) then
      bwd_compute[#bwd_compute + 1] = t
    end
  end
  local cast_back = {}
  for j, e in ipairs(ops) do
    local k = C.mirror(j, #ops, #bwd_compute)
    e.backward = k and bwd_compute[k] or nil
    if e.backward and e.input_cast then cast_back[e.backward.id] = true end
  end
  last = {}
  for _, t in ipairs(step.backward) do
    if t.kind == "kernel" then
      local rid = t.resource.id
      if C.is_compute(t) then
        half[t.id] = true
        last[rid] = not cast_back[t.id]
      else
        half[t.id] = last[rid] == true
        last[rid] = half[t.id]
      end
    end
  end
  return ops, half
end

-- The weight's and the input's element counts of an eligible op, from its
-- recorded shapes (1-based argument positions), or nil.
local WEIGHT_ARG = {["aten::linear"] = 2, ["aten::addmm"] = 3, ["aten::mm"] = 2, ["aten::matmul"] = 2,
                    ["aten::bmm"] = 2, ["aten::baddbmm"] = 3}
local INPUT_ARG = {["aten::linear"] = 1, ["aten::addmm"] = 2, ["aten::mm"] = 1, ["aten::matmul"] = 1,
                   ["aten::bmm"] = 1, ["aten::baddbmm"] = 2}
local elements = A.elements
-- The bias, where the op takes one: autocast casts every floating-point
-- argument of an eligible op, so a bias is cast like the weight (and, a
-- parameter, cast back in the backward). GPT-2's Conv1D layers (addmm with
-- a bias) show it: 96 weight and bias casts and 48 bias ToCopyBackward0 a
-- step in the bf16 H100 trace.
local BIAS_ARG = {["aten::linear"] = 3, ["aten::addmm"] = 1, ["aten::baddbmm"] = 1}
local function cast_sizes(t)
  local op = t.op
  while op do
    local name = op.name
    local w, x, b = WEIGHT_ARG[name], INPUT_ARG[name], BIAS_ARG[name]
    if not w and name:find("conv") then w, x, b = 2, 1, 3 end
    if w then
      local inputs = graph:op_inputs(op.id)
      if not inputs then return nil end
      return elements(inputs[w]), elements(inputs[x]), elements(inputs[b])
    end
    op = op.parent and graph:op(op.parent) or nil
  end
  return nil
end
-- A cast reads fp32 and writes half: 6 bytes an element.
local function cast_ns(n)
  if not n or not have_model then return elementwise_ns end
  return math.floor(graph:kernel_ns{class = "elementwise", bytes = 6 * n, flops = n, gpu = gpu_key} + 0.5)
end

-- A forward cast is one aten::_to_copy; a backward one (after `anchor`)
-- also its autograd node.
local function cast(anchor, name, phase, n, after)
  local _, launch = graph:insert{kind = "kernel", name = name, before = not after and anchor or nil,
                                 after = after and anchor or nil, duration_ns = cast_ns(n), phase = phase,
                                 with_op = after and "ToCopyBackward0" or "aten::_to_copy",
                                 op_ns = after and op_ns + node_ns or op_ns}
  return launch
end

-- A half copy of n elements, made at a forward cast's launch and kept for
-- the op's backward (its launch frees it; without one, the op's own). An
-- input's copy is a batch tensor: a later batch change resizes it.
local HALF_BYTES = 2
local cast_copies, cast_copy_bytes = 0, 0
local function cast_copy(e, launch, n, batch)
  if not n or not launch then return end
  local until_call = (e.backward and e.backward:launcher()) or e.kernel:launcher()
  if not until_call then return end
  local bytes = math.ceil(n * HALF_BYTES / 512) * 512
  graph:allocate{bytes = bytes, at = launch, free_at = until_call, device = e.kernel.resource.device,
                 batch = batch}
  cast_copies, cast_copy_bytes = cast_copies + 1, cast_copy_bytes + bytes
end

-- Allocations with their frees matched (profile_memory with addresses).
local allocations = graph:allocations()
local has_memory = false
for _, a in ipairs(allocations) do
  if a.freed_at and a.device >= 0 then has_memory = true; break end
end

local steps = C.steps(graph)
local plans, half = {}, {}
for i, step in ipairs(steps) do
  local ops, h = plan(step)
  plans[i] = ops
  for id, v in pairs(h) do half[id] = v end
end
local casts, scaler_kernels, syncs, bias_casts = 0, 0, 0, 0
if cast_kernels then
  for i in ipairs(steps) do
    for _, e in ipairs(plans[i]) do
      local weight_n, input_n, bias_n = cast_sizes(e.kernel)
      -- An input is an activation: at the batch the kernels now run
      -- (batch_size.lua earlier in the run); weights and biases are not.
      if input_n then input_n = input_n * graph:batch() end
      local w = cast(e.kernel, "cast weight to " .. P.dtype .. " (autocast)", "forward", weight_n)
      casts = casts + 1
      if bias_n then
        local b = cast(e.kernel, "cast bias to " .. P.dtype .. " (autocast)", "forward", bias_n)
        casts, bias_casts = casts + 1, bias_casts + 1
        if has_memory then cast_copy(e, b, bias_n) end
        if e.backward then
          cast(e.backward, "cast bias grad to fp32 (autocast backward)", "backward", bias_n, true)
          casts = casts + 1
        end
      end
      if e.input_cast then
        local x = cast(e.kernel, "cast input to " .. P.dtype .. " (autocast)", "forward", input_n)
        casts = casts + 1
        if has_memory then cast_copy(e, x, input_n, true) end
      end
      if has_memory then cast_copy(e, w, weight_n) end
      -- The casts' backward: after the op's backward compute kernel.
      if e.backward then
        cast(e.backward, "cast weight grad to fp32 (autocast backward)", "backward", weight_n, true)
        casts = casts + 1
        if e.input_cast then
          cast(e.backward, "cast input grad to fp32 (autocast backward)", "backward", input_n, true)
          casts = casts + 1
        end
      end
    end
  end
end

-- Half-precision outputs: what a kernel that now runs in half writes is
-- half the bytes: activations and their gradients, and the forward's
-- temporaries (allocations of the forward, and of the backward freed in
-- it). Weight
-- gradients and optimizer state stay FP32 (AMP's master copies): only
-- what the step frees again is resized.
local halved, halved_from, halved_to = 0, 0, 0
local halves = {}  -- id -> bytes, resized in one call (one pass over the memory events)
for _, a in ipairs(allocations) do
  local p = a.producer
  local in_step = a.freed_at ~= nil and a.freed_at.step == a.step
  if has_memory and a.device >= 0 and p and half[p.id] and in_step and
     (a.phase == "forward" or (a.phase == "backward" and a.freed_in == "backward")) then
    local to = math.max(512, math.ceil(a.bytes / 2 / 512) * 512)
    if to < a.bytes then
      halves[a.id] = to
      halved, halved_from, halved_to = halved + 1, halved_from + a.bytes, halved_to + to
    end
  end
end
graph:resize_allocation(halves)

-- Speeds (after the casts were placed, so the casts keep FP32-read speed).
local scope = P.include_update and nil or {"unknown", "forward", "backward", "data_loading", "other"}
local kernels = graph:select{kind = "kernel", phase = scope} -
                graph:select{kind = "kernel", name = "(autocast"}
local compute = kernels:select{class = C.COMPUTE}
local memory = kernels - compute - kernels:select{class = "communication"}
-- Forward/backward kernels that stay in fp32 under autocast (plan above)
-- keep their time; the rest of the step's kernels (outside forward and
-- backward, or not in a step) are taken to run in half.
local kept_fp32 = {}
for t in memory:tasks() do
  if half[t.id] == false then kept_fp32[#kept_fp32 + 1] = t end
end
local fp32_sel = graph:from_tasks(kept_fp32)
memory = memory - fp32_sel
-- cuDNN's batch norm in bf16: PyTorch's batch-norm backend rule leaves
-- cuDNN for a bfloat16 input (fp16 keeps it), and its own kernels
-- (batch_norm_collect_statistics, _transform_input, _backward) do not
-- reach cuDNN's bandwidth: on the H100 pairs they took 15.0 ms a step
-- where the fp32 run's cuDNN kernels took 12.1 ms. Their speed is nothing
-- the trace shows, so they keep their fp32 time rather than gain the
-- halved bytes (still optimistic there; docs/ACCURACY.md).
local native_bn = graph:none()
if P.dtype == "bf16" and P.memory_speedup <= 0 then
  native_bn = memory:select{name = "cudnn::bn_"}
  memory = memory - native_bn
end
local before_compute, before_memory = compute:total_duration(), memory:total_duration()
local unaligned = 0
if P.compute_speedup > 0 then
  compute:shrink(P.compute_speedup)
else
  unaligned = compute:retime{dtype = P.dtype, gpu = gpu_key}.unaligned
end
if P.memory_speedup > 0 then
  memory:shrink(P.memory_speedup)
else
  memory:retime{dtype = P.dtype, gpu = gpu_key}
end
if P.include_memcpy then
  -- Half the bytes: the model's time for the copy's kind, as a ratio.
  local KIND = {HtoD = "htod_", DtoH = "dtoh_"}
  for t in graph:select{kind = "memcpy", phase = scope}:tasks() do
    local dir = t.name:find("HtoD") and "HtoD" or (t.name:find("DtoH") and "DtoH" or nil)
    local kind = dir and (KIND[dir] .. (t.name:find("Pinned") and "pinned" or "pageable")) or "dtod"
    local full = have_model and graph:copy_ns(kind, t.bytes, {gpu = gpu_key}) or 0
    if t.bytes > 0 and full > 0 then
      t.duration_ns = math.floor(t.duration_ns * graph:copy_ns(kind, t.bytes / 2, {gpu = gpu_key}) / full + 0.5)
    else
      t.duration_ns = t.duration_ns // 2
    end
  end
  graph:select{kind = "memset", phase = scope}:shrink(2)
end

if use_scaler then
  for _, step in ipairs(steps) do
    local consumer = nil
    local last_bwd = #step.backward > 0 and step.pos[step.backward[#step.backward].id] or 0
    for _, t in ipairs(step.update) do
      if t.kind == "kernel" and step.pos[t.id] > last_bwd then consumer = t; break end
    end
    local last_fwd = step.forward[#step.forward]
    if consumer and last_fwd then
      graph:insert{kind = "kernel", name = "scale loss: mul (GradScaler)", after = last_fwd,
                   duration_ns = elementwise_ns, with_op = "aten::mul", op_ns = op_ns}
      -- Unscale, then found_inf.item() (copy the flag to the host and wait
      -- for it), all before the optimizer's first launch on the CPU.
      local first_call = consumer:launcher()
      local before_call = first_call and first_call:prev() or nil
      local unscale, unscale_call = graph:insert{
        kind = "kernel", name = "_amp_foreach_non_finite_check_and_unscale_ (GradScaler)",
        before = consumer, duration_ns = update_ns, launch_after = before_call,
        with_op = "aten::_amp_foreach_non_finite_check_and_unscale_", op_ns = op_ns}
      local copy, copy_call = graph:insert{kind = "memcpy", name = "Memcpy DtoH (found_inf.item())",
                                           after = unscale, duration_ns = 2000, bytes = 4,
                                           launch_name = "cudaMemcpyAsync", launch_after = unscale_call}
      local wait = graph:insert{kind = "cpu_api", name = "cudaStreamSynchronize (found_inf.item())",
                                after = copy_call, duration_ns = graph:launch_model().memcpy_launch_ns}
      graph:add_edge(copy, wait, {kind = "sync", on_cycle = "skip"})
      graph:insert{kind = "kernel", name = "_amp_update_scale_ (GradScaler)",
                   after = step.update[#step.update], duration_ns = elementwise_ns,
                   with_op = "aten::_amp_update_scale_", op_ns = op_ns}
      scaler_kernels = scaler_kernels + 3
      syncs = syncs + 1
    end
  end
end

local function speed(before, after) return after > 0 and before / after or 0 end
reverie.log(string.format("%s on %s: %d GEMM/conv/attention kernels %.1f -> %.1f us (%.2fx), %d other " ..
                          "kernels in half %.1f -> %.1f us (%.2fx)%s, %d kept in fp32 (%.1f us: " ..
                          "autocast's float32 list and what follows it); %d autocast casts " ..
                          "(%d of them biases; %.1f us CPU each, %.1f us more in the backward: its " ..
                          "autograd node); GradScaler: %d kernels, %d syncs",
                          P.dtype, have_model and C.runs_on(graph, gpu_key) or model.gpu, #compute, before_compute / 1e3, compute:total_duration() / 1e3,
                          speed(before_compute, compute:total_duration()), #memory, before_memory / 1e3,
                          memory:total_duration() / 1e3, speed(before_memory, memory:total_duration()),
                          (P.compute_speedup > 0 or P.memory_speedup > 0) and " (fixed factors given)" or
                            " (cost model)",
                          #kept_fp32, fp32_sel:total_duration() / 1e3, casts, bias_casts, op_ns / 1e3, node_ns / 1e3, scaler_kernels,
                          syncs))
if unaligned > 0 then
  reverie.log(string.format("%d GEMM kernels have a dimension that is not a multiple of 16 bytes in %s " ..
                            "(a vocabulary of 50257, say): they keep %s's vector rate, not the tensor " ..
                            "cores' (pad the dimension to a multiple of 8 to get it)",
                            unaligned, P.dtype, P.dtype))
end
-- cuDNN's layout transposes of NCHW convolution inputs (lib/autocast.lua).
local transposes, transpose_ns = 0, 0
if P.layout_transposes and P.compute_speedup <= 0 then
  transposes, transpose_ns = A.layout_transposes(graph, compute:select{class = "conv"},
                                                 {dtype = P.dtype, model = have_model, gpu = gpu_key,
                                                  fallback_ns = elementwise_ns})
end
local n_steps = math.max(1, #steps)
if transposes > 0 then
  reverie.log(string.format("%.0f cuDNN layout transposes a step added (%.1f us: the NCHW inputs of " ..
                            "convolutions on tensor cores, which read NHWC; torch.channels_last avoids " ..
                            "them; the transposes of results back to NCHW are not added)",
                            transposes / n_steps, transpose_ns / n_steps / 1e3))
end
if not native_bn:empty() then
  reverie.log(string.format("%.0f cuDNN batch-norm kernels a step keep their fp32 time (%.1f us): in bf16 " ..
                            "PyTorch runs batch norm in its own kernels, not cuDNN's, whose speed the " ..
                            "trace does not show", #native_bn / n_steps,
                            native_bn:total_duration() / n_steps / 1e3))
end
if has_memory then
  reverie.log(string.format("memory: per step %.0f tensors written in half %.2f -> %.2f MiB; %.0f cast " ..
                            "copies kept for the backward %.2f MiB", halved / n_steps,
                            halved_from / n_steps / 1048576, halved_to / n_steps / 1048576,
                            cast_copies / n_steps, cast_copy_bytes / n_steps / 1048576))
else
  reverie.log("memory: unchanged: the trace records no allocations with their frees (profile_memory with addresses)")
end
