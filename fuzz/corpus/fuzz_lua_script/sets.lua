local a = graph:select{kind = "kernel"}
local b = graph:select{phase = "forward"}
print(#(a | b), #(a & b), #(a - b), a:contains(b:first() or a[1]), a:empty())
print(#a:filter(function(t) return t.duration_ns > 1000 end), a:total_duration())
print(#a:launches(), #graph:from_tasks(a:list()), #a:select{name_regex = "^void"})
