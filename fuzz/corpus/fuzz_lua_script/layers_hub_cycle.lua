-- issue 29, D24/D25/D33: dotted layer paths, a hub removed, an edge that closes a cycle
local t = graph:select{kind = "kernel"}:first()
t.layer = string.rep("a.", 31) .. "b"
print(pcall(function() t.layer = string.rep("a.", 40) .. "b" end))
print(pcall(function() t.layer = string.rep("x", 2000) end))
local c1, c2, c3 = graph:add_channel("p"), graph:add_channel("h"), graph:add_channel("c")
local hub = graph:insert{kind = "comm", name = "hub", resource = c2, duration_ns = 1}
local e = {}
for i = 1, 30 do
  e[#e + 1] = {graph:insert{kind = "comm", name = "a", resource = c1, duration_ns = 1}, hub}
  e[#e + 1] = {hub, graph:insert{kind = "comm", name = "b", resource = c3, duration_ns = 1}}
end
graph:add_edges(e)
print(graph:remove(hub))
local k = graph:select{kind = "kernel"}
graph:add_edge(k[1], k[2])
print(graph:add_edge(k[2], k[1], {kind = "sync", on_cycle = "skip"}))
