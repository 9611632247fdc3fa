package accounts

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed transfer.lua
var transferSource string

// transferScript applies a batch of transfers, each atomic and independent
// of the others (transfer.lua). It is sent as EVALSHA, and as EVAL once
// when the server (or a new cluster shard) has not cached it, so there is
// nothing to load at start-up.
var transferScript = redis.NewScript(transferSource)

// Batches of concurrent transfers: one script call applies up to
// maxTransferBatch of them, with at most transferBatches calls in flight.
// Most of a transfer's cost inside Redis is its call's own overhead, so
// batches save Redis most of it (docs/performance.md has the figures). One
// call in flight: the transfers that arrive meanwhile all wait for the
// next, so batches are larger than with two calls taking turns, and each
// call costs Facade a write and a read.
const (
	transferBatches  = 1
	maxTransferBatch = 64
)

// transferCall is one transfer waiting for its batch: the script's keys
// and arguments for it, then its reply (transfer.lua's forms) or the
// error of the whole call.
type transferCall struct {
	keys  []string
	args  []any
	reply any
	err   error
}

// applyTransfers runs one batch in one script call and hands each call its
// own reply. A call that fails as a whole (Redis unreachable) fails every
// transfer of the batch alike: each may or may not have happened, as a
// lone call that lost its reply, and a retry with the same
// Idempotency-Key tells.
func (s *Store) applyTransfers(ctx context.Context, batch []*transferCall) {
	nkeys, nargs := 2, 1
	for _, c := range batch {
		nkeys += len(c.keys)
		nargs += 1 + len(c.args)
	}
	keys := make([]string, 2, nkeys)
	keys[0], keys[1] = ledgerKey(), formatKey()
	args := make([]any, 1, nargs)
	args[0] = int64(IdempotencyTTL / time.Second)
	for _, c := range batch {
		keys = append(keys, c.keys...)
		args = append(args, len(c.keys))
		args = append(args, c.args...)
	}
	replies, err := transferScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err == nil && len(replies) != 1+len(batch) {
		err = corrupt("transfer batch of " + strconv.Itoa(len(batch)) + " answered " + strconv.Itoa(len(replies)))
	}
	for i, c := range batch {
		if err != nil {
			c.err = err
			continue
		}
		c.reply = expandReply(c, replies[0], replies[1+i])
	}
}

// applied is a transfer that happened in this call, from the script's
// short reply ("2EUR": exponent digit, currency) and what the caller sent.
type applied struct {
	tid, amount, currency, created string
	exponent                       int
}

// expandReply turns the script's short reply for a transfer that happened
// now into an applied; refusals and earlier transfers stay as they are
// (transfer.lua lists the forms).
func expandReply(c *transferCall, created, reply any) any {
	short, ok := reply.(string)
	if !ok || short == "" || short[0] < '0' || short[0] > '0'+MaxExponent {
		return reply
	}
	exp := int(short[0] - '0')
	tid, _ := c.args[0].(string)
	amount, _ := c.args[3+exp].(string)
	at, _ := created.(string)
	return applied{tid: tid, amount: amount, currency: short[1:], created: at, exponent: exp}
}
