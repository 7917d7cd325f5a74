-- The hardware model's bindings given what a script should not give them:
-- wrong types, NaN, huge and negative numbers, long names, caught refusals.
local long = string.rep("x", 1 << 20)
print(pcall(graph.cost_model, graph, {gpu = long}))
print(pcall(graph.cost_model, graph, 5), pcall(graph.gpu, graph, {gpu = {}}))
print(pcall(graph.copy_ns, graph, long, 1), pcall(graph.copy_ns, graph, "dtod", 0/0))
print(pcall(graph.kernel_ns, graph, {class = long, flops = -1, bytes = math.huge}))
print(pcall(graph.op_inputs, graph, math.maxinteger), pcall(graph.op_inputs, graph, 1.5))
print(pcall(graph:all().retime, graph:all(), {work = 0/0, dtype = long, to = 7}))
print(reverie.gpu(long), reverie.match_gpu(string.rep("tesla v100 ", 1000)))
print(pcall(reverie.work_per_step, {factor = 0/0, samples = math.mininteger}))
print(pcall(reverie.nothing_to_change, "\27[2J"), pcall(reverie.refuse, long))
print(getmetatable(graph), pcall(function() getmetatable(graph).__index = nil end))
