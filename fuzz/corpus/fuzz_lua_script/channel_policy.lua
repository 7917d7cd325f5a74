local ch = graph:add_channel("ring")
local last
for i, t in ipairs(graph:select{phase = "backward", kind = "kernel"}:list()) do
  last = graph:insert{kind = "comm", name = "allreduce" .. i, resource = ch, duration_us = 10 * i,
                      bytes = 1 << 20}
  graph:add_edge(t, last, {kind = "comm"})
  last.priority = -i
end
graph:set_policy(function(task, ready) return task.priority * 1000 + ready end)
local tl = graph:simulate()
print(tl.mean_iteration_ns, tl.makespan_ns)
