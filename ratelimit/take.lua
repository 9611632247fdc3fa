-- One GCRA bucket. KEYS[1]: the bucket (its theoretical arrival time, in
-- microseconds of Redis's clock). ARGV: emission interval (us), tolerance
-- (burst x emission, us), n requests, mode.
--   mode 1: take n only if the bucket allows them (a direct decision);
--   mode 0: add n unconditionally (a settlement: they were admitted).
-- Returns {1 if taken, how far the bucket runs ahead of now (us)}. Redis's
-- clock serves every instance, so their clocks need not agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission, tolerate, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end
local taken = 1
if ARGV[4] == '1' and tat + n * emission - now > tolerate then
  taken, n = 0, 0
end
if n > 0 then
  tat = tat + n * emission
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
end
return {taken, tat - now}
