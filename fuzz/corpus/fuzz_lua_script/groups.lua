local by = graph:all():group_by("layer")
local n = 0
for layer, sel in pairs(by) do n = n + #sel end
for _, key in ipairs{"iteration", "phase", "resource", "name", "kind"} do graph:all():group_by(key) end
print(n, #graph:layers(), #graph:resources("stream"))
