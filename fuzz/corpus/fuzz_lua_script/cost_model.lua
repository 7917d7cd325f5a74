-- The hardware model's bindings: the table, the model, retiming, copies.
local ok, m = pcall(graph.cost_model, graph, {gpu = "A100-SXM4-80GB"})
print(ok, type(reverie.gpu("H100-SXM")), #reverie.gpus(), reverie.match_gpu("NVIDIA PG509-210"))
local k = graph:select{kind = "kernel"}
print(k:retime{work = 2, gpu = "A100-SXM4-80GB"}.kernels)
print(k:retime{dtype = "bf16", to = "H100-SXM", gpu = "A100-SXM4-80GB"}.after_ns)
print(graph:copy_ns("htod_pageable", 1e6, {gpu = "A100-SXM4-80GB", to = "MI300X"}))
print(graph:kernel_ns{class = "gemm", flops = 1e12, bytes = 1e9, math = "fp16", matrix = true,
                      gpu = "A100-SXM4-80GB"})
for t in k:tasks() do local w = t.work; if w then print(w.flops, graph:op_inputs(w.op_id)) end end
