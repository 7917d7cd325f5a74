local tl = graph:simulate()
local all = graph:all()
local a, b = tl:span(all)
print(a, b, tl:latest(all), tl:earliest(all), #tl:order(graph:select{kind = "kernel"}))
for _, it in ipairs(tl.iterations) do print(it.start_ns, it.duration_ns) end
