local removed, edges = graph:select{kind = "memcpy"}:remove()
local sync = graph:select{name = "Synchronize"}
if #sync > 0 then graph:remove(sync[1]) end
print(removed, edges)
