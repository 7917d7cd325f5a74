-- lib/autocast.lua: what autocast, and the libraries under it, add to a
-- training step, as amp.lua models it (its header says why each holds).
-- Load with `local A = reverie.include("lib/autocast.lua")`.
local C = reverie.include("lib/common.lua")
local A = {}

-- The elements of a recorded argument with one tensor shape, or nil.
function A.elements(arg)
  if not arg or #arg.shapes ~= 1 then return nil end
  local n = 1
  for _, d in ipairs(arg.shapes[1]) do n = n * d end
  return n
end

-- What a cast costs the CPU, in ns: `op_ns` for the aten op (a forward
-- cast) and `node_ns` more for a backward one, its autograd node.
-- - op_ns: the trace's own aten::_to_copy when it has one (an fp32 run
--   casts on the CPU side too: its chain, empty_strided and copy_ included,
--   is the same dispatch), else the median own time of the trace's ops that
--   launch one element-wise kernel (a cast is one such dispatch), else 0 (a
--   trace without op spans).
-- - node_ns: a cast's backward is an autograd node of its own
--   (ToCopyBackward0): the engine's time per node, the median own time of
--   the trace's `evaluate_function` ops (the backward's nodes, outside the
--   ops they run), else 0.
function A.cast_cpu_ns(graph)
  local op_ns = graph:op_cost("aten::_to_copy")
  if not op_ns then
    local own, seen = {}, {}
    for k in graph:select{kind = "kernel", class = "elementwise"}:tasks() do
      local l = k:launcher()
      local id = l and l.op_id
      if id and not seen[id] then
        seen[id] = true
        own[#own + 1] = graph:op(id).own_ns
      end
    end
    op_ns = C.median(own) or 0
  end
  local own, seen = {}, {}
  for k in graph:select{kind = "kernel", phase = "backward"}:tasks() do
    local l = k:launcher()
    local op = l and l.op
    while op do
      if op.name:find("^autograd::engine::evaluate_function: ") then
        if not seen[op.id] then
          seen[op.id] = true
          own[#own + 1] = op.own_ns
        end
        break
      end
      op = op.parent and graph:op(op.parent) or nil
    end
  end
  return op_ns, C.median(own) or 0
end

-- cuDNN's tensor-core convolutions read NHWC tensors: a convolution on
-- NCHW ones (an fp32 kernel named for NCHW or for no layout) has its
-- activation input transposed first, in a kernel of cuDNN's (nchwToNhwc):
-- one per forward convolution (x) and two per backward one (dgrad reads dy,
-- wgrad x), 159 a step on ResNet-50 against 158 in its bf16 and fp16 H100
-- traces. A convolution whose kernels already run NHWC (named "nhwc" and
-- not "nchw") has its transposes in the trace. Each reads and writes its
-- tensor in half (4 bytes an element, from the op's recorded shapes), timed
-- by the model's element-wise curve (`opts.model`; else
-- `opts.fallback_ns`), with a launch. Not added: the results transposed
-- back to NCHW (68 a step there, 1.0 of the 3.5 ms of transposes).
-- `conv`: the convolution kernels; `opts`: {dtype, model, gpu, fallback_ns}.
-- Returns how many were inserted and their total time (ns).
function A.layout_transposes(graph, conv, opts)
  local nhwc, first = {}, {}
  for t in conv:tasks() do
    local op = t.op
    if op then
      local name = t.name:lower()
      if name:find("nhwc", 1, true) and not name:find("nchw", 1, true) then nhwc[op.id] = true end
      if not first[op.id] then first[op.id] = t end
    end
  end
  local ordered = {}
  for id, t in pairs(first) do
    if not nhwc[id] then ordered[#ordered + 1] = t end
  end
  table.sort(ordered, function(a, b) return a.id < b.id end)
  local count, total = 0, 0
  for _, t in ipairs(ordered) do
    local inputs = graph:op_inputs(t.op.id) or {}
    local args = t.op.name:find("backward", 1, true) and {1, 2} or {1}
    for _, i in ipairs(args) do
      -- Activations: at the batch the kernels now run (graph:batch()).
      local n = A.elements(inputs[i])
      if n then n = n * graph:batch() end
      local ns = (n and opts.model) and math.floor(graph:kernel_ns{class = "elementwise", bytes = 4 * n,
                                                                    flops = 0, gpu = opts.gpu} + 0.5)
                 or opts.fallback_ns
      graph:insert{kind = "kernel", name = "nchwToNhwc (cuDNN, " .. opts.dtype .. " tensor-core layout)",
                   before = t, duration_ns = ns, phase = t.phase}
      count, total = count + 1, total + ns
    end
  end
  return count, total
end

return A
