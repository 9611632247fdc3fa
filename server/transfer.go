package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
)

type transferView struct {
	TransferID    string            `json:"transfer_id"`
	FromAccountID string            `json:"from_account_id"`
	ToAccountID   string            `json:"to_account_id"`
	Amount        accounts.Amount   `json:"amount"`
	Currency      accounts.Currency `json:"currency"`
	CreatedAt     time.Time         `json:"created_at"`
	Reference     string            `json:"reference,omitempty"`
}

// transfer parses ids and amount, checks the Idempotency-Key and the
// optional body (400), checks `transfer` on the from account and `transfer` or
// `receive` on the to account (403: destination-refused when only the
// destination is refused, so a person checks the number), then runs the
// one atomic step.
func (h *accountHandlers) transfer(c echo.Context) error {
	from, err := pathID(c, fromParam, facade.ParseAccountID)
	if err != nil {
		return err
	}
	to, err := pathID(c, toParam, facade.ParseAccountID)
	if err != nil {
		return err
	}
	amount, err := accounts.ParseTransferAmount(c.Param("amount"), h.maxTransfer)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(c.Request().Header)
	if err != nil {
		return err
	}
	ref, err := transferReference(c)
	if err != nil {
		return err
	}
	p := principal(c)
	if err := h.authorize(c, question{op: "transfer",
		allow:  func(p facade.Principal) bool { return h.az.CanTransfer(p, from, to) },
		target: func() string { return "account:" + from.String() + "->account:" + to.String() }}); err != nil {
		if h.az.MayDebit(p, from) {
			return facade.ErrDestinationRefused
		}
		return err
	}
	t, replayed, err := h.accounts.Transfer(c.Request().Context(), accounts.TransferRequest{
		From: from, To: to, Amount: amount, IdempotencyKey: key, Principal: p.ID, Reference: ref,
	})
	if err != nil {
		return err
	}
	if replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return c.JSON(http.StatusCreated, transferView{
		TransferID: t.ID, FromAccountID: t.From, ToAccountID: t.To,
		Amount: t.AmountValue(), Currency: t.Currency, CreatedAt: t.CreatedAt.UTC(), Reference: t.Reference,
	})
}

// transferBody is a transfer's optional JSON body.
type transferBody struct {
	Reference *string `json:"reference"`
}

// transferReference reads the optional body {"reference": "..."} once and
// decodes it once: no body (the common case, read without allocating), an
// empty one whatever its Content-Type, or {} is no reference; a body that
// has bytes must be application/json (415).
func transferReference(c echo.Context) (string, error) {
	r := c.Request()
	if r.Body == nil || r.Body == http.NoBody {
		return "", nil
	}
	body, err := readBody(r)
	if err != nil {
		return "", err
	}
	if len(body) == 0 {
		return "", nil
	}
	if err := requireContentType(r, echo.MIMEApplicationJSON); err != nil {
		return "", err
	}
	var b transferBody
	if err := decodeObject(body, &b); err != nil {
		return "", err
	}
	if b.Reference == nil {
		return "", nil
	}
	return *b.Reference, accounts.ValidateReference(*b.Reference)
}

// idempotencyKey returns the header's value, "" when absent; a header that
// is present but empty or malformed is 400.
func idempotencyKey(h http.Header) (string, error) {
	vals := h.Values("Idempotency-Key")
	if len(vals) == 0 {
		return "", nil
	}
	if len(vals) > 1 {
		return "", facade.ErrBadIdempotencyKey
	}
	if err := accounts.ValidateIdempotencyKey(vals[0]); err != nil {
		return "", err
	}
	return vals[0], nil
}
