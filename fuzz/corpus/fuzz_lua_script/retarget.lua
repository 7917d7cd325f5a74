local gpus = reverie.include("lib/gpus.lua")
local from = {name = "A100", sm_count = 108, max_threads_per_sm = 2048, max_blocks_per_sm = 32,
  registers_per_sm = 65536, shared_memory_per_sm_kb = 164, clock_mhz = 1410,
  memory_bandwidth_gbs = 2039, peak_tflops = 19.5}
local to = {name = "T4", sm_count = 40, max_threads_per_sm = 1024, max_blocks_per_sm = 16,
  registers_per_sm = 65536, shared_memory_per_sm_kb = 64, clock_mhz = 1590,
  memory_bandwidth_gbs = 320, peak_tflops = 8.1}
local s = graph:select{kind = "kernel"}:retarget_gpu{from = from, to = to, gamma = 0.5}
print(s.kernels, s.before_ns, s.after_ns, type(gpus))
