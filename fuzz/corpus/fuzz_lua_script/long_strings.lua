-- issue 29, D23/D24: building, comparing and passing long strings
local s = ""
for i = 1, 3000 do s = s .. "x" end
local a = string.rep("c", 1 << 16)
local b = a:sub(1, -2) .. "d"
local n = 0
for i = 1, 100 do if a < b then n = n + 1 end if a == b then n = n - 1 end end
local t = graph:select{kind = "kernel"}:first()
t.name = a
print(pcall(graph.task, graph, string.rep("0", 1 << 12) .. "1"))
print(pcall(string.rep, "x", 1 << 25))
print(tonumber(string.rep(" ", 100) .. "7"), #s, n)
print(pcall(graph.select, graph, {name = {string.rep("a*", 20000), string.rep("b", 60000)}}))
