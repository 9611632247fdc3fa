-- One transfer, all or nothing (docs/contract.md §5). Redis runs a script without
-- interleaving any other command, and every check below happens before the
-- first write, so a refused transfer writes nothing.
--
-- KEYS[1] source account     KEYS[2] destination account
-- KEYS[3] ledger stream      KEYS[4] source statement   KEYS[5] destination statement
-- KEYS[6] record of this transfer id
-- KEYS[7] idempotency record (absent when the request carries no key)
-- ARGV[1] transfer id        ARGV[2] source id          ARGV[3] destination id
-- ARGV[4] idempotency record lifetime, seconds
-- ARGV[5..8] the amount in minor units for a currency exponent of 0..3, or ""
--            when the amount has more decimals than that exponent allows
--
-- Returns {replayed 0|1, transfer id, amount, currency, exponent, created µs}.
-- Refusals are error replies whose first word is a FACADE_* code.
--
-- Amounts and balances stay decimal strings: Lua numbers are doubles, exact
-- only to 2^53, so comparisons are done on canonical digit strings and
-- arithmetic by HINCRBY (int64, refuses to overflow).

local tid, from, to = ARGV[1], ARGV[2], ARGV[3]

-- A retry of this very call (go-redis resends a command whose reply was
-- lost): it already happened, answer the same again.
local done = redis.call('HMGET', KEYS[6], 'amount', 'currency', 'exponent', 'created')
if done[1] then
  return {0, tid, done[1], done[2], done[3], done[4]}
end

if from == to then return redis.error_reply('FACADE_SAME_ACCOUNT') end

local src = redis.call('HMGET', KEYS[1], 'currency', 'exponent', 'balance')
if not src[1] then return redis.error_reply('FACADE_NOT_FOUND') end
local exponent = tonumber(src[2])
if exponent == nil or exponent < 0 or exponent > 3 or not src[3] then
  return redis.error_reply('FACADE_CORRUPT')
end
local amount = ARGV[5 + exponent]
if amount == '' then return redis.error_reply('FACADE_BAD_AMOUNT') end

-- Idempotency: the first answer for this key, or a refusal when the key
-- was used for another request. Compared on minor units, so "5" and
-- "5.00" EUR are the same request.
local idem = KEYS[7]
if idem then
  local first = redis.call('HMGET', idem, 'from', 'to', 'amount', 'tid', 'currency', 'exponent', 'created')
  if first[4] then
    if first[1] ~= from or first[2] ~= to or first[3] ~= amount then
      return redis.error_reply('FACADE_IDEMPOTENCY_REUSE')
    end
    return {1, first[4], first[3], first[5], first[6], first[7]}
  end
end

local dst = redis.call('HMGET', KEYS[2], 'currency', 'balance')
if not dst[1] then return redis.error_reply('FACADE_NOT_FOUND') end
if dst[1] ~= src[1] then return redis.error_reply('FACADE_CURRENCY_MISMATCH') end

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
if not covers(src[3], amount) then
  return redis.error_reply('FACADE_INSUFFICIENT_FUNDS')
end

-- The credit must not overflow int64. Doubles are exact to about 2^53 only,
-- so refuse well before the limit (9.2e18 against 9.223e18, a margin far
-- above the rounding error): money never wraps, also on Redis look-alikes
-- whose HINCRBY does not check (miniredis, used by the demo).
local held = tonumber(dst[2])
if held == nil then return redis.error_reply('FACADE_CORRUPT') end
if held + tonumber(amount) > 9.2e18 then
  return redis.error_reply('FACADE_BALANCE_OVERFLOW')
end

-- Credit first: with the check above it cannot fail, and should it anyway
-- (a real Redis refuses to overflow), nothing has been written yet. The
-- debit cannot fail: the balance covers the amount.
local credited = redis.pcall('HINCRBY', KEYS[2], 'balance', amount)
if type(credited) == 'table' and credited.err then
  return redis.error_reply('FACADE_BALANCE_OVERFLOW')
end
redis.call('HINCRBY', KEYS[1], 'balance', '-' .. amount)

local now = redis.call('TIME')
local created = now[1] .. string.format('%06d', tonumber(now[2]))
local currency = src[1]

redis.call('HSET', KEYS[6], 'from', from, 'to', to, 'amount', amount,
  'currency', currency, 'exponent', src[2], 'created', created)
redis.call('XADD', KEYS[3], '*', 'transfer', tid, 'from', from, 'to', to,
  'amount', amount, 'currency', currency, 'created', created)
redis.call('LPUSH', KEYS[4], tid)
redis.call('LPUSH', KEYS[5], tid)
if idem then
  redis.call('HSET', idem, 'from', from, 'to', to, 'amount', amount, 'tid', tid,
    'currency', currency, 'exponent', src[2], 'created', created)
  redis.call('EXPIRE', idem, ARGV[4])
end
return {0, tid, amount, currency, src[2], created}
