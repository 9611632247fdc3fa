-- A batch of transfers, applied one after another, each all or nothing on
-- its own (docs/contract.md §5): a refused transfer writes nothing and does
-- not stop the ones after it. Redis runs the whole script without
-- interleaving any other command; every check of a transfer happens before
-- its first write, and its writes cannot fail once the checks passed.
--
-- KEYS[1] ledger stream, KEYS[2] the statement format (rollout.go), then
-- each transfer's keys, in order:
--   source account, destination account, source history, destination
--   history (the sorted sets, rollout.go), source lines, destination
--   lines (the streams, lines.go), record of this transfer id,
--   idempotency record (only when the request carries a key)
-- ARGV[1] idempotency record lifetime, seconds
-- then 9 arguments per transfer:
--   number of its keys (7, or 8 with an idempotency record), transfer id,
--   source id, destination id, then the amount in minor units for a
--   currency exponent of 0..3, or "" when the amount has more decimals
--   than that exponent allows, then the reference ("" for none)
--
-- Returns the batch's creation time (Redis's clock in µs, "" when no
-- transfer of it happened), then one reply per transfer, in order:
--   - a transfer that happened now: its exponent digit and currency code
--     ("2EUR"); the caller holds its id and its amount for that exponent;
--   - one that had happened (a resent call, or an Idempotency-Key seen
--     before): {replayed 0|1, transfer id, amount, currency, exponent,
--     created µs} as first recorded;
--   - a refusal: the FACADE_* code as a string.
-- Each value of a reply costs Redis a conversion, hence the short form of
-- the common case (docs/performance.md).
--
-- Lua numbers are doubles, exact only to 2^53. A balance and an amount of
-- at most 15 digits (below 10^15, well inside that) are moved as numbers
-- in the script's memory, and each account touched is written once, at
-- the end of the batch. Anything larger stays a decimal string: compared
-- on canonical digit strings, moved by HINCRBY (int64, refuses to
-- overflow), one call per transfer.

local ledger, ttl = KEYS[1], ARGV[1]

-- Where statement lines go (rollout.go, docs/operations.md "Upgrading"):
-- the sorted sets the build before the streams reads, until the format
-- key says every instance writes the streams. A store that has never
-- applied a transfer has no history such a build could read.
local streams = redis.call('GET', KEYS[2]) == 'stream'
if not streams and redis.call('EXISTS', ledger) == 0 then
  redis.call('SET', KEYS[2], 'stream')
  streams = true
end
local lines = streams and 4 or 2 -- offset of the source's statement key

-- What each call into Redis costs is most of a transfer's cost, so a batch
-- reads each account once (and keeps its balance from HINCRBY's answer,
-- or in memory), writes each balance once at the end, looks for resent
-- transfer records with one EXISTS, and pushes to each statement once at
-- the end, in the same order as one push per transfer would. Nothing
-- outside the script sees the difference: Redis runs it without
-- interleaving, and writes its effects to the AOF and replicas as one
-- MULTI/EXEC block. (What each saved call is worth: docs/performance.md.)
--
-- key -> {currency, exponent, balance string, num = the balance as a
-- number while it is moved in memory, dirty = not yet written}, false
-- when missing.
local accounts = {}
local dirtyOrder = {} -- keys of accounts moved in memory, first moved first

-- exact is s as a number when it is a canonical integer of at most 15
-- digits (exact as a double, with room for sums), else nil.
local function exact(s)
  if s and string.find(s, '^%-?%d+$') and #s - (string.byte(s, 1) == 45 and 1 or 0) <= 15 then
    return tonumber(s)
  end
  return nil
end

local function account(key)
  local a = accounts[key]
  if a == nil then
    local v = redis.call('HMGET', key, 'currency', 'exponent', 'balance')
    a = v[1] and v or false
    if a then a.num = exact(a[3]) end
    accounts[key] = a
  elseif a and not a[3] then
    a[3] = redis.call('HGET', key, 'balance')
  end
  return a
end

-- write stores a balance moved in memory.
local function write(key, a)
  if a.dirty then
    redis.call('HSET', key, 'balance', string.format('%.0f', a.num))
    a.dirty = false
  end
end

-- toStrings ends in-memory moves on an account: its balance is written,
-- and later transfers of the batch use the string path.
local function toStrings(key, a)
  if a.num then
    write(key, a)
    a[3] = string.format('%.0f', a.num)
    a.num = nil
  end
end

-- credit and debit in memory; the account is written at the end.
local function add(key, a, n)
  a.num = a.num + n
  if not a.dirty then
    a.dirty = true
    dirtyOrder[#dirtyOrder + 1] = key
  end
end

-- moved keeps an account's new balance, HINCRBY's answer. Redis hands
-- integers to Lua as doubles, exact below 2^53 only: beyond that the
-- balance is read again when next needed.
local function moved(a, balance)
  if balance > -9007199254740992 and balance < 9007199254740992 then
    a[3] = string.format('%.0f', balance)
  else
    a[3] = false
  end
end
local pushes, pushOrder = {}, {} -- statement key -> transfer ids, oldest first
local function push(key, tid)
  local list = pushes[key]
  if not list then
    list = {}
    pushes[key] = list
    pushOrder[#pushOrder + 1] = key
  end
  list[#list + 1] = tid
end

-- Redis's clock, read once per batch: the transfers of one batch happen in
-- the same atomic step.
local created
local function now()
  if not created then
    local t = redis.call('TIME')
    created = t[1] .. string.format('%06d', tonumber(t[2]))
  end
  return created
end

-- amount <= balance, on canonical non-negative digit strings: the longer
-- is larger, else the first differing digit decides (bytes, not the
-- locale-dependent string order).
local function covers(balance, amt)
  if string.byte(balance, 1) == 45 then return false end -- '-'
  if #balance ~= #amt then return #balance > #amt end
  for i = 1, #amt do
    local b, a = string.byte(balance, i), string.byte(amt, i)
    if b ~= a then return b > a end
  end
  return true
end

-- record writes what a transfer leaves besides balances: its record (with
-- its reference and both balances after it, for the statements), its
-- ledger entry, its statement lines, its idempotency record.
local function record(tid, from, to, amount, ref, srcAfter, dstAfter, src, idem, srcStmt, dstStmt, recordKey)
  local at, currency = now(), src[1]
  redis.call('HSET', recordKey, 'from', from, 'to', to, 'amount', amount,
    'currency', currency, 'exponent', src[2], 'created', at, 'ref', ref,
    'from_after', srcAfter, 'to_after', dstAfter)
  redis.call('XADD', ledger, '*', 'transfer', tid, 'from', from, 'to', to,
    'amount', amount, 'currency', currency, 'created', at)
  push(srcStmt, tid)
  push(dstStmt, tid)
  if idem then
    redis.call('HSET', idem, 'from', from, 'to', to, 'amount', amount, 'tid', tid,
      'currency', currency, 'exponent', src[2], 'created', at, 'ref', ref)
    redis.call('EXPIRE', idem, ttl)
  end
end

-- apply runs one transfer whose keys start at KEYS[k] and arguments at
-- ARGV[a]; it returns its reply or its refusal code. resent says that some
-- transfer record of the batch exists already.
local function apply(k, a, resent)
  local srcKey, dstKey, recordKey = KEYS[k], KEYS[k + 1], KEYS[k + 6]
  local srcStmt, dstStmt = KEYS[k + lines], KEYS[k + lines + 1]
  local idem
  if ARGV[a] == '8' then idem = KEYS[k + 7] end
  local tid, from, to, ref = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 8]

  -- A retry of this very call (go-redis resends a command whose reply was
  -- lost): it already happened, answer the same again.
  if resent then
    local done = redis.call('HMGET', recordKey, 'amount', 'currency', 'exponent', 'created')
    if done[1] then
      return {0, tid, done[1], done[2], done[3], done[4]}
    end
  end

  if from == to then return 'FACADE_SAME_ACCOUNT' end

  local src = account(srcKey)
  if not src then return 'FACADE_NOT_FOUND' end
  local exponent = tonumber(src[2])
  if exponent == nil or exponent < 0 or exponent > 3 or not src[3] then
    return 'FACADE_CORRUPT'
  end
  local amount = ARGV[a + 4 + exponent]
  if amount == '' then return 'FACADE_BAD_AMOUNT' end

  -- Idempotency: the first answer for this key, or a refusal when the key
  -- was used for another request. Compared on minor units, so "5" and
  -- "5.00" EUR are the same request; the reference is part of it (a
  -- record written before references existed has none).
  if idem then
    local first = redis.call('HMGET', idem, 'from', 'to', 'amount', 'tid', 'currency', 'exponent', 'created', 'ref')
    if first[4] then
      if first[1] ~= from or first[2] ~= to or first[3] ~= amount or (first[8] or '') ~= ref then
        return 'FACADE_IDEMPOTENCY_REUSE'
      end
      return {1, first[4], first[3], first[5], first[6], first[7]}
    end
  end

  local dst = account(dstKey)
  if not dst then return 'FACADE_NOT_FOUND' end
  if dst[1] ~= src[1] then return 'FACADE_CURRENCY_MISMATCH' end

  -- In memory when both balances and the amount are small enough that the
  -- credit stays below 2^53; else on strings, as Redis holds them.
  -- (Amounts are canonical: Facade formats them, transfer.go.)
  local amt = #amount <= 15 and tonumber(amount)
  if amt and src.num and dst.num and dst.num + amt < 9007199254740992 then
    if src.num < amt then return 'FACADE_INSUFFICIENT_FUNDS' end
    record(tid, from, to, amount, ref, string.format('%.0f', src.num - amt),
      string.format('%.0f', dst.num + amt), src, idem, srcStmt, dstStmt, recordKey)
    -- Last: a Redis error above (data Facade did not write) leaves the
    -- balances as they were.
    add(dstKey, dst, amt)
    add(srcKey, src, -amt)
    return src[2] .. src[1]
  end
  toStrings(srcKey, src)
  toStrings(dstKey, dst)
  if not covers(src[3], amount) then return 'FACADE_INSUFFICIENT_FUNDS' end

  -- The credit must not overflow int64. Doubles are exact to about 2^53
  -- only, so refuse well before the limit (9.2e18 against 9.223e18, a
  -- margin far above the rounding error): money never wraps, also on Redis
  -- look-alikes whose HINCRBY does not check (miniredis, used by the demo).
  local held = tonumber(dst[3])
  if held == nil then return 'FACADE_CORRUPT' end
  if held + tonumber(amount) > 9.2e18 then return 'FACADE_BALANCE_OVERFLOW' end

  -- Credit first: with the check above it cannot fail, and should it
  -- anyway (a real Redis refuses to overflow), nothing of this transfer
  -- has been written yet. The debit cannot fail: the balance covers the
  -- amount.
  local credited = redis.pcall('HINCRBY', dstKey, 'balance', amount)
  if type(credited) == 'table' and credited.err then return 'FACADE_BALANCE_OVERFLOW' end
  moved(dst, credited)
  moved(src, redis.call('HINCRBY', srcKey, 'balance', '-' .. amount))

  record(tid, from, to, amount, ref, src[3] or redis.call('HGET', srcKey, 'balance'),
    dst[3] or redis.call('HGET', dstKey, 'balance'), src, idem, srcStmt, dstStmt, recordKey)
  return src[2] .. src[1]
end

-- One EXISTS over every transfer record of the batch: 0 unless this call
-- is a resend of one that ran.
local records, k = {}, 3
for a = 2, #ARGV, 9 do
  records[#records + 1] = KEYS[k + 6]
  k = k + tonumber(ARGV[a])
end
local resent = redis.call('EXISTS', unpack(records)) > 0

-- A Redis error inside one transfer (a key of another type, data Facade
-- did not write) refuses that transfer alone, as FACADE_CORRUPT, and the
-- batch goes on.
local replies = {''}
k = 3
for a = 2, #ARGV, 9 do
  local ok, reply = pcall(apply, k, a, resent)
  if not ok then reply = 'FACADE_CORRUPT' end
  replies[#replies + 1] = reply
  k = k + tonumber(ARGV[a])
end
for _, key in ipairs(dirtyOrder) do
  write(key, accounts[key])
end
-- Each account's lines of the batch go to its stream as one entry, ids
-- oldest first, whose id is the batch's time in µs (lines.go): one XADD
-- an account, appended at the end of the stream. Should Redis's clock
-- have gone back since the stream's newest entry, Redis refuses that id
-- and the entry goes right after the newest one instead, so the stream
-- stays in order; the lines keep their own time in their records.
local function append(key, tids)
  local line = table.concat(tids, ' ')
  local added = redis.pcall('XADD', key, created .. '-*', 't', line)
  if type(added) ~= 'table' then return end
  local newest = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)[1]
  if not newest then error(added) end
  redis.call('XADD', key, string.match(newest[1], '^%d+') .. '-*', 't', line)
end

-- Until the rollout is done, the sorted set the build before the streams
-- reads: scored by the transfer's time in µs, made strictly increasing
-- per account (a transfer scores its creation time, or one more than the
-- account's newest entry when that is not less: transfers of one batch
-- share their time). The scores stay exact: µs since 1970 are below 2^53
-- until the year 2255.
local function score(key, tids)
  local newest = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
  local prev = tonumber(newest[2]) or 0
  local at = tonumber(created)
  local args = {}
  for _, tid in ipairs(tids) do
    local s = at
    if s <= prev then s = prev + 1 end
    prev = s
    args[#args + 1] = string.format('%.0f', s)
    args[#args + 1] = tid
  end
  redis.call('ZADD', key, unpack(args))
end

for _, key in ipairs(pushOrder) do
  if streams then append(key, pushes[key]) else score(key, pushes[key]) end
end
replies[1] = created or ''
return replies
