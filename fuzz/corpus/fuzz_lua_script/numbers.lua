local k = graph:select{kind = "kernel"}
print(pcall(k.add_duration, k, math.maxinteger))
print(pcall(k.set_duration, k, 9.2e18))
print(pcall(k.scale, k, 1e300))
print(pcall(function() k[1].iteration = 1 << 40 end))
print(pcall(graph.select, graph, {name_regex = "^(a|a)*$"}))
error({code = 42})
