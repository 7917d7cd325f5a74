local t = graph:select{kind = "kernel"}[1]
t.duration_ns = t.duration_ns * 2
t.gap_ns = 100
t.layer = "model.block.0"
t.phase = "forward"
t.name = t.name .. "_renamed"
print(t.id, t.kind, t.resource.name, t.iteration, t.geometry and t.geometry.blocks, tostring(t))
for _, p in ipairs(t:parents()) do print(p.name) end
for _, c in ipairs(t:children("launch")) do print(c.name) end
