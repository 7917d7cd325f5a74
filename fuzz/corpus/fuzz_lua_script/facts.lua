print(#graph:parameters(), #graph:gradient_buckets(), #graph:collectives(), graph:world_size())
for _, d in ipairs(graph:devices()) do print(d.name, d.sm_count) end
local m = graph:launch_model()
print(m.kernel_launch_ns, m.samples)
