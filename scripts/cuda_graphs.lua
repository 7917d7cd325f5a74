-- cuda_graphs.lua: CUDA Graphs: capture a training step once, replay it with
-- a single launch (torch.cuda.graphs), so the per-kernel CPU launch overhead
-- is gone.
--
-- Model. In the captured phases (`phases`, the whole step by default), every
-- CUDA runtime call that a graph replay does not make — kernel launches,
-- async memsets and the queries around them — takes no CPU time, and the
-- framework time between two such calls (their gap: Python and dispatcher
-- work the replay skips) goes too. One cudaGraphLaunch call per step, as long
-- as the trace's median kernel launch, is inserted before the step's first
-- captured call. GPU work is unchanged: the same kernels run in the same
-- order.
-- Assumptions: the step is capturable (static shapes, no host syncs inside:
-- synchronizing calls and memory copies, e.g. of the input batch, stay and
-- keep their time and gaps); a gap that ends at an uncaptured call (the data
-- loader, a sync) is kept, since the replay still waits for it.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  phases = {default = "forward,backward,update", doc = "comma-separated phases captured in the graph"},
  keep_gaps = {default = false, doc = "keep the framework time between captured calls"},
}

local phases = {}
for p in P.phases:gmatch("[^,%s]+") do phases[#phases + 1] = p end
local calls = graph:select{kind = "cpu_api", phase = phases}
local kept = graph:select{kind = "cpu_api", name = {"Synchronize", "Memcpy", "EventRecord", "StreamWaitEvent"}}
local captured = calls - kept
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

local zeroed_gaps = 0
for t in captured:tasks() do
  t.duration_ns = 0
  local nxt = t:next()
  if not P.keep_gaps and nxt and in_graph[nxt.id] then
    t.gap_ns = 0
    zeroed_gaps = zeroed_gaps + 1
  end
end
for _, f in ipairs(firsts) do
  graph:insert{kind = "cpu_api", name = "cudaGraphLaunch", before = f, duration_ns = launch_ns}
end
reverie.log(string.format("%d runtime calls captured (%d gaps removed); %d cudaGraphLaunch calls of %.1f us",
                          #captured, zeroed_gaps, #firsts, launch_ns / 1e3))
