-- One direct decision on a GCRA bucket (ratelimit.go, ask, Spend, Peek):
-- take one request only if the bucket allows it. KEYS[1]: the bucket (its
-- theoretical arrival time, in microseconds of Redis's clock). ARGV:
-- emission interval (us), tolerance (burst x emission, us), and 0 to only
-- look (Peek: whether one would be taken, nothing written).
-- Returns {1 if taken, how far the bucket runs ahead of now (us)}. Redis's
-- clock serves every instance, so their clocks need not agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission, tolerate, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end
if tat + emission - now > tolerate then
  return {0, tat - now}
end
if cost == 0 then
  return {1, tat - now}
end
tat = tat + emission
redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
return {1, tat - now}
