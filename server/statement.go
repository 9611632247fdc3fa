package server

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/csvcell"
)

const defaultStatementLimit = 20

type statementLine struct {
	TransferID   string            `json:"transfer_id"`
	Direction    string            `json:"direction"`
	Counterparty string            `json:"counterparty_account_id"`
	Amount       accounts.Amount   `json:"amount"`
	BalanceAfter *accounts.Amount  `json:"balance_after,omitempty"` // the account's balance right after it
	Currency     accounts.Currency `json:"currency"`
	CreatedAt    time.Time         `json:"created_at"`
	Reference    string            `json:"reference,omitempty"`
}

type statementView struct {
	AccountID string          `json:"account_id"`
	Transfers []statementLine `json:"transfers"`
	Next      string          `json:"next,omitempty"` // the next (older) page's path, when the range goes on
}

// statementRange reads the statement's query for the account in the path,
// in the order every statement answer checks it (docs/contract.md §5):
// the query first (400), then view_account (403, whatever the cursor: it
// is opened only for a caller who may view the account), then the sealed
// cursor, which opens only for this caller on this account.
func (h *accountHandlers) statementRange(c echo.Context) (facade.AccountID, accounts.StatementQuery, error) {
	q, cursor, err := statementQuery(c.QueryParams())
	if err != nil {
		return facade.AccountID{}, q, err
	}
	id, err := h.viewableAccount(c)
	if err != nil {
		return facade.AccountID{}, q, err
	}
	if cursor != "" {
		at, err := h.accounts.OpenStatementCursor(c.Request().Context(), principal(c).ID, id, cursor)
		if err != nil {
			return facade.AccountID{}, q, err
		}
		q.Before = &at
	}
	return id, q, nil
}

// getStatement answers a page of an account's statement, newest first
// (docs/contract.md §5): ?limit=, ?from= and ?to= (RFC 3339 dates or
// instants, inclusive), and the sealed ?cursor= of the previous page's
// next, checked as statementRange says. With Accept: text/csv the whole range streams as a spreadsheet
// (statementCSV).
func (h *accountHandlers) getStatement(c echo.Context) error {
	id, q, err := h.statementRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	page, err := h.accounts.Statement(ctx, id, q)
	if err != nil {
		return err
	}
	view := statementView{AccountID: id.String(), Transfers: make([]statementLine, 0, len(page.Entries))}
	for _, e := range page.Entries {
		view.Transfers = append(view.Transfers, statementLine{
			TransferID: e.TransferID, Direction: string(e.Direction), Counterparty: e.Counterparty,
			Amount: e.SignedAmount(), BalanceAfter: e.BalanceAfterAmount(), Currency: e.Currency,
			CreatedAt: e.CreatedAt.UTC(), Reference: e.Reference,
		})
	}
	if page.Next != nil {
		sealed, err := h.accounts.SealStatementCursor(ctx, principal(c).ID, id, *page.Next)
		if err != nil {
			return err
		}
		view.Next = statementPath(id, c.QueryParams(), sealed)
	}
	return c.JSON(http.StatusOK, view)
}

// statementPath is the path of the page after this one: the same query
// with the new cursor.
func statementPath(id facade.AccountID, query url.Values, cursor string) string {
	next := url.Values{"cursor": {cursor}}
	for _, k := range []string{"limit", "from", "to"} {
		if v := query.Get(k); v != "" {
			next.Set(k, v)
		}
	}
	return "/rs/account/" + url.PathEscape(id.String()) + "/transfers?" + next.Encode()
}

// statementParams are the query parameters a statement takes.
var statementParams = map[string]bool{"limit": true, "cursor": true, "from": true, "to": true}

// statementQuery reads a statement's query: each parameter at most once
// and none other (a misspelt ?form= would otherwise show the whole
// history as if it were the range), limit 1 to MaxStatementLimit, from
// and to dates or instants with from not after to. It returns the cursor
// unopened: that needs the account, after authorization.
func statementQuery(query url.Values) (accounts.StatementQuery, string, error) {
	for name, vals := range query {
		switch {
		case !statementParams[name]:
			return accounts.StatementQuery{}, "", facade.Refuse(facade.ErrBadParameter, name, facade.ReasonUnknownParameter)
		case len(vals) > 1:
			return accounts.StatementQuery{}, "", facade.Refuse(facade.ErrBadParameter, name, facade.ReasonRepeated)
		}
	}
	limit, err := statementLimit(query.Get("limit"))
	if err != nil {
		return accounts.StatementQuery{}, "", err
	}
	q := accounts.StatementQuery{Limit: limit}
	if q.From, err = parseRangeTime("from", query.Get("from")); err != nil {
		return accounts.StatementQuery{}, "", err
	}
	if q.To, err = parseRangeTime("to", query.Get("to")); err != nil {
		return accounts.StatementQuery{}, "", err
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.From.After(q.To) {
		return accounts.StatementQuery{}, "", facade.RefuseEach(facade.ErrBadParameter, facade.ReasonReversed, "from", "to")
	}
	return q, query.Get("cursor"), nil
}

// parseRangeTime reads from or to: "" is no bound; an RFC 3339 instant is
// itself; a date (2026-03-01) is its first microsecond for from and its
// last for to (the whole day, in UTC), so a month is from=2026-03-01 and
// to=2026-03-31.
func parseRangeTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if len(v) == len(time.DateOnly) {
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return time.Time{}, facade.Refuse(facade.ErrBadParameter, name, facade.ReasonNotDate)
		}
		if name == "to" {
			d = d.AddDate(0, 0, 1).Add(-time.Microsecond)
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, facade.Refuse(facade.ErrBadParameter, name, facade.ReasonNotDate)
	}
	return t.UTC(), nil
}

func statementLimit(q string) (int, error) {
	return pageLimit(q, defaultStatementLimit, accounts.MaxStatementLimit)
}

// statementColumns is the header of a statement downloaded as CSV
// (docs/contract.md §5). amount is unsigned, direction gives its sign, so
// that no number starts with "-" and every cell a spreadsheet sums stays a
// number; balance_after is empty for a transfer recorded before balances
// were kept.
var statementColumns = []string{"date", "direction", "counterparty", "amount", "currency", "balance_after", "reference"}

// getStatementCSV streams the statement's range (?from=, ?to=; the whole
// history without them) as CSV, newest first, reading it a page at a time
// so that a long history never sits in memory. Every cell goes through
// csvcell.Safe, as the gradebook's do: counterparty ids may start with
// "-" or "@", and a reference is whatever its sender wrote. The checks
// and their order are statementRange's; a cursor starts the file there.
func (h *accountHandlers) getStatementCSV(c echo.Context) error {
	id, q, err := h.statementRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	q.Limit = accounts.MaxStatementLimit
	page, err := h.accounts.Statement(ctx, id, q) // the first page before any byte: a 404 is still a 404
	if err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	hdr.Set(echo.HeaderContentDisposition, `attachment; filename="`+statementFileName(id, c.QueryParams())+`"`)
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	w := csv.NewWriter(c.Response())
	_ = w.Write(statementColumns)
	for {
		for _, e := range page.Entries {
			_ = w.Write(statementRow(e))
		}
		if w.Flush(); w.Error() != nil || page.Next == nil {
			return w.Error() // after the header is sent, an error is the connection's: logged only
		}
		q.Before = page.Next
		if page, err = h.accounts.Statement(ctx, id, q); err != nil {
			return err
		}
	}
}

// statementRow is one transfer as a CSV row, every cell made safe.
func statementRow(e accounts.StatementEntry) []string {
	after := ""
	if b := e.BalanceAfterAmount(); b != nil {
		after = b.String()
	}
	row := []string{
		e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), string(e.Direction), e.Counterparty,
		accounts.Amount{Minor: e.Amount, Currency: e.Currency}.String(), e.Currency.Code, after, e.Reference,
	}
	for i := range row {
		row[i] = csvcell.Safe(row[i])
	}
	return row
}

// statementFileName names the download after the account and its range:
// 1001-statement-2026-03-01-2026-03-31.csv. Account ids and the checked
// range hold no character that needs quoting.
func statementFileName(id facade.AccountID, q map[string][]string) string {
	name := id.String() + "-statement"
	for _, k := range []string{"from", "to"} {
		if v := q[k]; len(v) == 1 && len(v[0]) == len("2006-01-02") {
			name += "-" + v[0]
		}
	}
	return name + ".csv"
}
