-- cuda_graphs.lua: CUDA Graphs: capture a training step once, replay it with
-- a single launch (torch.cuda.graphs, torch.compile mode="reduce-overhead"),
-- so the per-kernel CPU cost is gone.
--
-- Model. In the captured phases (`phases`, the whole step by default), a
-- graph replay makes none of the CUDA runtime calls the eager step made
-- (kernel launches, async memsets, the queries around them) and runs none of
-- the framework code that issued them:
-- - every captured call takes no CPU time;
-- - the own CPU time of the aten ops that issued captured calls (dispatch,
--   checks, allocation: their op tasks, depgraph/builder_cpu_time.cc) goes;
-- - with `remove_framework` (default), so does the framework time between two
--   captured calls (the Python of the module between ops, which a replay
--   skips); framework time that borders an uncaptured call (a sync, the
--   input copy) stays, since the replay still waits for it;
-- - CPU work outside the captured phases stays whole (a main-thread data
--   loader's ops issue no runtime call: the replay waits for them).
-- One cudaGraphLaunch per step, as long as the trace's median kernel launch,
-- goes before the step's first captured call. GPU work is unchanged: the same
-- kernels run in the same order (replays also remove the launch gaps between
-- kernels, which the stream gaps of the trace already hold only where the
-- GPU was not waiting for the CPU).
--
-- Memory: unchanged (a graph's private pool is not modelled): `predict`'s
-- peak is the baseline's allocations in the predicted order, and says it is
-- an estimate for that reason (graph:note_memory_estimate).
-- Preconditions: the trace does not replay CUDA graphs already
-- (graph:facts().cuda_graphs: cudaGraphLaunch calls), else nothing to
-- change; a step with no runtime call in the captured phases has nothing to
-- capture either.
-- Assumptions: the step is capturable (static shapes, no host syncs inside:
-- synchronizing calls and memory copies, e.g. of the input batch, stay and
-- keep their time, and so do memory management (cudaMalloc, cudaFree, host
-- allocation) and module loading, which capture does not allow and a replay
-- does not remove); on traces without op spans (cpu_op) the framework time
-- is the calls' gaps, zeroed between captured calls as before. Ignores the
-- one-time capture cost and the memory the graph pool holds.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  phases = {default = "forward,backward,update", doc = "comma-separated phases captured in the graph"},
  remove_framework = {default = true,
                      doc = "remove the framework (Python) time between captured calls"},
}

local cg = graph:facts().cuda_graphs
if cg.used then
  reverie.nothing_to_change(string.format("the trace already replays CUDA graphs (%.1f graph " ..
                                          "launches per step) [%s: %s]", cg.count, cg.source, cg.how))
end

local phases, in_phases = {}, {}
for p in P.phases:gmatch("[^,%s]+") do
  phases[#phases + 1] = p
  in_phases[p] = true
end
local calls = graph:select{kind = "cpu_api", phase = phases}
local kept = graph:select{kind = "cpu_api", name = {"Synchronize", "Memcpy", "EventRecord", "StreamWaitEvent"}}
-- Memory management and module loading are not the launch path a replay
-- removes: cudaMalloc/cudaFree are not allowed while a stream is captured
-- (they synchronize), and a library that frees its workspace each call
-- (MIOpen's hipFree, 3.3 s of TraceLens' MI300X ResNet-18 step) or a first
-- step that loads modules pays it whether or not the kernels are replayed.
local unmanaged = graph:select{kind = "cpu_api", phase = phases,
                               name = {"Malloc", "Free", "HostAlloc", "HostRegister", "HostUnregister",
                                       "MemGetInfo", "ModuleLoad", "LibraryLoad"}}
local captured = calls - kept - unmanaged
local in_graph = {}
for t in captured:tasks() do in_graph[t.id] = true end

-- One replay launch per step, before the step's first captured call.
local launch_ns = graph:launch_model().kernel_launch_ns
local firsts = {}
for _, step in ipairs(C.steps(graph)) do
  local first = nil
  for _, ph in ipairs({"forward", "backward", "update"}) do
    for _, t in ipairs(step[ph]) do
      local l = t:launcher()
      if l and in_graph[l.id] and (first == nil or l.id < first.id) then first = l end
    end
  end
  if first then firsts[#firsts + 1] = first end
end

-- The CPU tasks between each captured call and the next call on its thread:
-- op time of captured ops goes; framework time goes when both ends are
-- captured (and remove_framework is set). Only CPU work in the captured
-- phases: a replay still waits for the rest (a main-thread data loader's
-- CPU ops issue no runtime call, so its time lies between the last captured
-- call of one step and the first of the next).
local op_ns, framework_ns = 0, 0
local one_time_ns = 0
for t in captured:tasks() do
  -- A launch's one-time cost (module loading, lib/common.lua) is paid
  -- whether or not the kernel is later replayed.
  local keep = t.name:find("Launch") and C.one_time_ns(graph, t) or 0
  one_time_ns = one_time_ns + keep
  t.duration_ns = keep
  local between, nxt, border = {}, t:next(), false
  while nxt and nxt.kind == "cpu_work" do
    if in_phases[nxt.phase] then
      between[#between + 1] = nxt
    else
      border = true
    end
    nxt = nxt:next()
  end
  local both = nxt ~= nil and in_graph[nxt.id] and not border
  for _, w in ipairs(between) do
    if w.op_id ~= nil then
      op_ns = op_ns + w.duration_ns
      w.duration_ns = 0
    elseif both and P.remove_framework and not w.name:find("^ProfilerStep#") then
      framework_ns = framework_ns + w.duration_ns
      w.duration_ns = 0
    end
  end
  if both and P.remove_framework then
    framework_ns = framework_ns + t.gap_ns
    t.gap_ns = 0
  end
end
-- Op time before a step's first captured call (the head of its op).
for t in captured:tasks() do
  local prev = t:prev()
  while prev and prev.kind == "cpu_work" and prev.op_id ~= nil and prev.duration_ns > 0 and
        in_phases[prev.phase] do
    op_ns = op_ns + prev.duration_ns
    prev.duration_ns = 0
    prev = prev:prev()
  end
end
if captured:empty() then
  reverie.nothing_to_change("no runtime call in the captured phases (" .. P.phases .. ")")
end
for _, f in ipairs(firsts) do
  graph:insert{kind = "cpu_api", name = "cudaGraphLaunch", before = f, duration_ns = launch_ns}
end
local n = math.max(1, #firsts)
reverie.log(string.format("per step: %.0f runtime calls captured; %.1f us of op time and %.1f us " ..
                          "of framework time removed; one cudaGraphLaunch of %.1f us",
                          #captured / n, op_ns / n / 1e3, framework_ns / n / 1e3, launch_ns / 1e3))
C.log_one_time(one_time_ns, "a capture")
if not unmanaged:empty() then
  reverie.log(string.format("kept: %.1f memory-management or module-loading calls per step (%.1f us: " ..
                            "cudaMalloc/cudaFree and the like, which a replay does not remove and " ..
                            "capture does not allow; a step they dominate is a warm-up step or a " ..
                            "library freeing its workspace)",
                            #unmanaged / n, unmanaged:total_duration() / n / 1e3))
end
graph:note_memory_estimate("cuda_graphs.lua does not model a CUDA graph's private memory pool, " ..
                           "which keeps the captured step's allocations reserved between replays")
