local s = string.rep("a", 30) .. "b"
print(s:find("a-b"), s:match("^(a+)(b)$"), s:gsub("a", "x", 3))
for w in ("k1,k2,k3"):gmatch("[^,]+") do print(w) end
print(string.format("%5.2f %d %s %q", 1.5, 7, "x", "y\n"), utf8.len("héllo"), #table.concat({1, 2, 3}, ","))
