-- identity.lua: changes nothing. The prediction is the baseline: use it to
-- compare two measured runs of the same program (the noise floor,
-- `reverie validate RUN1 RUN2 --script identity`) and to check that every
-- command reports the same step time for an unchanged graph.
-- Preconditions: none.
local _ = graph
reverie.log("no change")
