local k = graph:select{kind = "kernel", name = "*gemm*"}
k:scale(0.5)
graph:select{phase = "backward", kind = "gpu"}:shrink(2)
print(#k, graph:task_count())
