local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")
print(type(C), type(G), G.source(graph))
