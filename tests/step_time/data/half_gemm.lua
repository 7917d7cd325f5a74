-- Every kernel twice as fast (the fixtures' "fast GPU").
graph:select{kind = "kernel"}:shrink(2)
