local k = graph:select{kind = "kernel"}
local ok, err = pcall(function() graph:add_edge(k[#k], k[1]) end)
graph:add_edges{{k[1], k[#k], kind = "user", delay_ns = 5}}
print(ok, err, graph:remove_edge(k[1], k[#k]))
graph:validate()
print(graph:changes().edges_added)
