package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// IdempotencyTTL is how long the first answer for an Idempotency-Key is kept.
const IdempotencyTTL = 24 * time.Hour

// TransferRequest is a transfer as the client asked for it, parsed by the
// caller (the accounts and the amount) and authorized.
type TransferRequest struct {
	From, To       facade.AccountID
	Amount         TransferAmount
	IdempotencyKey string // "" when the request carries none
	Principal      string // the caller; idempotency keys are scoped to it
	// Reference is the payer's words for the transfer ("Rent March"), ""
	// for none: stored with it, shown on both statements, and part of
	// the request an Idempotency-Key stands for.
	Reference string
}

// Transfer is a transfer that happened. Amount is in minor units of Currency;
// CreatedAt is the Redis server's clock when the transfer was applied.
type Transfer struct {
	ID, From, To string
	Amount       int64
	Currency     Currency
	CreatedAt    time.Time
	Reference    string // "" for none
}

// AmountValue returns the transfer's amount as an Amount, ready for JSON.
func (t Transfer) AmountValue() Amount { return Amount{Minor: t.Amount, Currency: t.Currency} }

// ValidateIdempotencyKey checks an Idempotency-Key header value: 1 to 255
// visible ASCII characters (%x21-7E). Callers pass "" to Transfer for "no
// header"; a header that is present but empty should be refused with this.
func ValidateIdempotencyKey(k string) error {
	if len(k) < 1 || len(k) > 255 {
		return badIdempotencyKey()
	}
	for i := range len(k) {
		if k[i] < 0x21 || k[i] > 0x7e {
			return badIdempotencyKey()
		}
	}
	return nil
}

func badIdempotencyKey() error {
	return facade.ErrBadIdempotencyKey
}

// MaxReferenceLength is the most characters a transfer's reference has
// (docs/contract.md §5), as a bank statement line holds.
const MaxReferenceLength = 140

// ValidateReference checks a transfer's reference: 1 to
// MaxReferenceLength printable characters of valid UTF-8 (no control or
// format character: a reference is shown on two people's statements, and
// a right-to-left override would make it read as something else).
func ValidateReference(ref string) error {
	if ref == "" || !utf8.ValidString(ref) || utf8.RuneCountInString(ref) > MaxReferenceLength {
		return facade.Refuse(facade.ErrBadReference, "reference", facade.ReasonMalformed)
	}
	for _, r := range ref {
		if !unicode.IsPrint(r) && r != ' ' {
			return facade.Refuse(facade.ErrBadReference, "reference", facade.ReasonMalformed)
		}
	}
	return nil
}

// Transfer moves req.Amount from req.From to req.To in one atomic Redis
// step: checks, debit, credit, ledger entry, statement entries and the
// idempotency record all happen together or not at all.
//
// Errors, in the order they are checked:
//   - ErrBadIdempotencyKey, ErrBadReference;
//   - ErrSameAccount: From == To;
//   - ErrNotFound: either account is missing;
//   - ErrIdempotencyReuse, ErrCurrencyMismatch, ErrInsufficientFunds,
//     ErrBadAmount when the amount has more decimals than the source's
//     currency (checked inside the script, once the currency is read),
//     ErrBalanceLimit (the credit would take the destination above 9.2e18
//     minor units, near the int64 limit);
//   - ErrStoreUnavailable when Redis cannot be reached. The
//     transfer may or may not have happened: retry with the same
//     Idempotency-Key to find out without moving money twice.
//
// With an Idempotency-Key already used by this principal for the same
// from, to and amount (in minor units: "5" and "5.00" EUR are the same),
// it returns the first transfer unchanged with replayed=true and moves no
// money. Only successful transfers are recorded: a refused attempt does not
// use up its key.
func (s *Store) Transfer(ctx context.Context, req TransferRequest) (t Transfer, replayed bool, err error) {
	defer func() { s.audit(ctx, req.attempt(), t, replayed, err) }()
	if err := validateTransfer(req); err != nil {
		return Transfer{}, false, err
	}
	tid := newTransferID()
	call := &transferCall{keys: transferKeys(req, tid), args: transferArgs(req, tid)}
	s.transfers.Do(ctx, call)
	if call.err != nil {
		return Transfer{}, false, scriptError(call.err)
	}
	return decodeTransfer(req, call.reply)
}

// validateTransfer runs every check that needs no data, cheapest first.
// The accounts and the amount arrive parsed (TransferRequest).
func validateTransfer(req TransferRequest) error {
	if req.IdempotencyKey != "" {
		if err := ValidateIdempotencyKey(req.IdempotencyKey); err != nil {
			return err
		}
	}
	if req.Reference != "" {
		if err := ValidateReference(req.Reference); err != nil {
			return err
		}
	}
	if req.From == req.To {
		return facade.ErrSameAccount
	}
	return nil
}

// transferKeys lists one transfer's keys in the script's documented order.
func transferKeys(req TransferRequest, tid string) []string {
	from, to := req.From.String(), req.To.String()
	keys := []string{
		accountKey(from), accountKey(to),
		historyKey(from), historyKey(to), linesKey(from), linesKey(to), transferKey(tid),
	}
	if req.IdempotencyKey != "" {
		keys = append(keys, idempotencyKey(req.Principal, req.IdempotencyKey))
	}
	return keys
}

// transferArgs lists one transfer's arguments after its key count.
func transferArgs(req TransferRequest, tid string) []any {
	args := make([]any, 0, 3+MaxExponent+2)
	args = appendAmountByExponent(append(args, tid, req.From.String(), req.To.String()), req.Amount)
	return append(args, req.Reference)
}

// appendAmountByExponent appends the amount in minor units of each
// possible exponent (0..3), "" where it is too precise, so the script
// applies the source currency's rule by picking one: the precision rule
// lives only in TransferAmount.Minor, and no extra round trip reads the
// currency first.
func appendAmountByExponent(out []any, amount TransferAmount) []any {
	for exp := 0; exp <= MaxExponent; exp++ {
		minor, ok := amount.Minor(exp)
		if !ok {
			out = append(out, "")
			continue
		}
		out = append(out, strconv.FormatInt(minor, 10))
	}
	return out
}

// newTransferID returns 128 random bits in hex: unique and unguessable.
func newTransferID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// decodeTransfer reads one transfer's reply: an applied, {replayed, id,
// amount, currency, exponent, created µs}, or the FACADE_* code of its
// refusal.
func decodeTransfer(req TransferRequest, reply any) (Transfer, bool, error) {
	if a, ok := reply.(applied); ok {
		return decodeFields(req, 0, [5]string{a.tid, a.amount, a.currency, strconv.Itoa(a.exponent), a.created})
	}
	if code, ok := reply.(string); ok {
		if refusal, ok := scriptRefusals[code]; ok {
			return Transfer{}, false, refusal
		}
		return Transfer{}, false, corrupt("transfer refused with " + clip(code))
	}
	fields, _ := reply.([]any)
	if len(fields) != 6 {
		return Transfer{}, false, corrupt("transfer reply has " + strconv.Itoa(len(fields)) + " fields")
	}
	replayed, _ := fields[0].(int64)
	var f [5]string
	for i := range f {
		f[i], _ = fields[i+1].(string)
	}
	return decodeFields(req, replayed, f)
}

// decodeFields reads id, amount, currency, exponent and created µs.
func decodeFields(req TransferRequest, replayed int64, f [5]string) (Transfer, bool, error) {
	amount, err1 := strconv.ParseInt(f[1], 10, 64)
	exp, err2 := strconv.Atoi(f[3])
	created, err3 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || f[0] == "" {
		return Transfer{}, false, corrupt("transfer reply")
	}
	// The reference is the request's: a replay answers only a request
	// whose reference is the first one's (transfer.lua).
	return Transfer{
		ID: f[0], From: req.From.String(), To: req.To.String(), Amount: amount,
		Currency: Currency{Code: f[2], Exponent: exp}, CreatedAt: time.UnixMicro(created).UTC(),
		Reference: req.Reference,
	}, replayed == 1, nil
}

// scriptRefusals maps the script's FACADE_* refusal codes to client
// errors; any other code (FACADE_CORRUPT) is an internal error.
var scriptRefusals = map[string]*facade.Error{
	"FACADE_NOT_FOUND":          facade.ErrNotFound,
	"FACADE_BAD_AMOUNT":         facade.Refuse(facade.ErrBadAmount, amountParam, facade.ReasonTooPrecise), // the script's one amount check
	"FACADE_SAME_ACCOUNT":       facade.ErrSameAccount,
	"FACADE_CURRENCY_MISMATCH":  facade.ErrCurrencyMismatch,
	"FACADE_INSUFFICIENT_FUNDS": facade.ErrInsufficientFunds,
	"FACADE_IDEMPOTENCY_REUSE":  facade.ErrIdempotencyReuse,
	"FACADE_BALANCE_OVERFLOW":   facade.ErrBalanceLimit,
}

// scriptError turns a failed script call into a client error: 503 when
// Redis cannot be reached, else 500. The Redis text never reaches the
// client; the cause is kept for the log.
func scriptError(err error) error {
	return redisdb.Error(err)
}

// outcome names a transfer result for the metric and the audit line: the
// error's code, never its sentence, so rewording a message keeps the metric.
func outcome(replayed bool, err error) string {
	switch {
	case err == nil && replayed:
		return "replayed"
	case err == nil:
		return "created"
	}
	return string(facade.CodeOf(err))
}

// attempt is a transfer as its audit line names it: as written.
type attempt struct {
	principal, from, to, amount string
	keyed                       bool // the request carried an Idempotency-Key
}

func (req TransferRequest) attempt() attempt {
	return attempt{principal: req.Principal, from: req.From.String(), to: req.To.String(),
		amount: req.Amount.String(), keyed: req.IdempotencyKey != ""}
}

// audit records every attempt: the metric, and one log line with
// audit=true naming who asked for what and what happened.
func (s *Store) audit(ctx context.Context, req attempt, t Transfer, replayed bool, err error) {
	result := outcome(replayed, err)
	s.metrics.Transfers.WithLabelValues(result).Inc()
	var buf [10]slog.Attr
	attrs := append(buf[:0],
		slog.Bool("audit", true),
		slog.String("principal", req.principal),
		slog.String("from", clip(req.from)),
		slog.String("to", clip(req.to)),
		slog.String("amount", clip(req.amount)),
		slog.String("outcome", result),
		slog.Bool("idempotency_key", req.keyed))
	level := slog.LevelInfo
	if err == nil {
		attrs = append(attrs, slog.String("transfer_id", t.ID),
			slog.Int64("amount_minor", t.Amount), slog.String("currency", t.Currency.Code))
	} else if errors.Is(err, facade.ErrInternal) || errors.Is(err, facade.ErrStoreUnavailable) {
		level = slog.LevelError
		attrs = append(attrs, slog.Any("error", err))
	}
	// The record goes to the handler directly: Logger.LogAttrs would also
	// walk the stack for the caller's program counter (runtime.Callers),
	// which no handler of the service writes.
	h := s.log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	rec := slog.NewRecord(s.now(), level, "transfer", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// clip bounds text in the log. Parsed ids are at most 64 bytes and
// amounts 19, so it cuts nothing a parse accepted; it keeps an audit line
// bounded whatever text reaches it.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
