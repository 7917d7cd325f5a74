local P = reverie.params{
  factor = {default = 2, doc = "speed-up", min = 1},
  workers = {default = 4, doc = "ranks", integer = true},
  mode = {default = "ring", doc = "algorithm"},
}
graph:select{kind = "kernel"}:shrink(P.factor)
reverie.log(P.mode, P.workers)
