local function f() while true do end end
while true do xpcall(f, function(e) while true do end end) end
