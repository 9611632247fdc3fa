-- A settlement of many GCRA buckets at once (ratelimit.go, settle): one
-- call for a whole group of keys instead of one per key, so Redis pays
-- a script call's own overhead once per group and interval.
-- KEYS: the buckets (their theoretical arrival times, in microseconds of
-- Redis's clock), all with the same hash tag. ARGV[1]: emission interval
-- (us); ARGV[1 + i]: how many requests this instance admitted on KEYS[i]
-- since its last settlement, added unconditionally (they were admitted).
-- Returns, per key, how far its bucket runs ahead of now (us), as every
-- instance left it: Redis's clock serves every instance, so their clocks
-- need not agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local tats = redis.call('MGET', unpack(KEYS))
local ahead = {}
for i, key in ipairs(KEYS) do
  local tat = tonumber(tats[i] or 0) or 0
  if tat < now then tat = now end
  local n = tonumber(ARGV[i + 1])
  if n > 0 then
    tat = tat + n * emission
    redis.call('SET', key, string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
  end
  ahead[i] = tat - now
end
return ahead
