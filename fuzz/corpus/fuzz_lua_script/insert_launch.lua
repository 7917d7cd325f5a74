local k = graph:select{kind = "kernel"}[1]
local gpu, launch = graph:insert{kind = "kernel", name = "cast_fp16", after = k, duration_us = 3}
print(gpu.name, launch and launch.name, gpu:launcher())
