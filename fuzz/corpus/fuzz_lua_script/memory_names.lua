local big = string.rep("n", 1 << 20)
local i = 0
for t in graph:all():tasks() do i = i + 1; t.name = big .. i end
