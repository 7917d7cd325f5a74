-- issue 29, D20: the handles' metatables are locked proxies
local handles = {graph, graph:task(1), graph:resources()[1], graph:all(), graph:simulate()}
for _, h in ipairs(handles) do
  local p = getmetatable(h)
  print(pcall(function() p.__gc = function() while true do end end end))
  print(pcall(function() p.__index = function() return 1 end end))
  rawset(p, "__gc", function() while true do end end)
end
for i = 1, 20 do local t = graph:task(1) end
collectgarbage()
local ch = graph:add_channel("c")
for i = 1, 3 do graph:insert{kind = "comm", name = "c" .. i, resource = ch, duration_ns = 10} end
graph:set_policy(function(task, ready) pcall(function() getmetatable(task).__gc = print end) return ready end)
