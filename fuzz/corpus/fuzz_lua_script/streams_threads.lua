local s = graph:add_stream{device = 0, name = "side"}
local th = graph:add_thread("loader")
local w = graph:insert{name = "decode", resource = th, duration_us = 50}
local k = graph:insert{kind = "kernel", name = "prefetch", resource = s, duration_us = 5,
                       launch_after = w}
print(s.native_id, th.kind, w.name, k.name, #s:tasks(), s:first(), th:last())
