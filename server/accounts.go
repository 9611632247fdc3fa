package server

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/tracing"
)

const defaultStatementLimit = 20

// The account list (GET /rs/account) walks the stored accounts in id order
// and keeps those the caller may view. defaultAccountPage is a page's
// default size; accountScanBudget bounds the ids one request looks at, so
// a caller who may see few of a million accounts costs a bounded amount:
// when the budget runs out first, the page is shorter and next continues
// from where the walk stopped.
const (
	defaultAccountPage = 25
	accountScanBudget  = 10 * accounts.MaxIDsPage
)

type accountListView struct {
	Accounts []accountView `json:"accounts"`
	Next     string        `json:"next,omitempty"` // the next page's path, when there may be one
}

type balanceView struct {
	AccountID string            `json:"account_id"`
	Balance   accounts.Amount   `json:"balance"`
	Currency  accounts.Currency `json:"currency"`
}

type accountView struct {
	AccountID string            `json:"account_id"`
	Owner     string            `json:"owner"`
	Currency  accounts.Currency `json:"currency"`
	Balance   accounts.Amount   `json:"balance"`
	CreatedAt time.Time         `json:"created_at"`
	// TransferLimit is the largest single transfer (FACADE_MAX_TRANSFER,
	// major units), on the account record only: so that a client never
	// offers a transfer it knows will be refused.
	TransferLimit *int64 `json:"transfer_limit,omitempty"`
}

type transferView struct {
	TransferID    string            `json:"transfer_id"`
	FromAccountID string            `json:"from_account_id"`
	ToAccountID   string            `json:"to_account_id"`
	Amount        accounts.Amount   `json:"amount"`
	Currency      accounts.Currency `json:"currency"`
	CreatedAt     time.Time         `json:"created_at"`
	Reference     string            `json:"reference,omitempty"`
}

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

// viewableAccount parses the id and checks view_account before any read.
func (s *Server) viewableAccount(c echo.Context) (facade.AccountID, error) {
	id, err := pathID(c, accountParam, facade.ParseAccountID)
	if err != nil {
		return facade.AccountID{}, err
	}
	span := tracing.Authorize(c.Request().Context(), "account.view")
	allowed := s.authz.CanViewAccount(principal(c), id)
	tracing.Allowed(span, allowed)
	if !allowed {
		return facade.AccountID{}, s.deny(c, "account.view", "account:"+id.String())
	}
	return id, nil
}

func (s *Server) getBalance(c echo.Context) error {
	id, err := s.viewableAccount(c)
	if err != nil {
		return err
	}
	a, err := s.accounts.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, balanceView{AccountID: a.ID.String(), Balance: a.BalanceAmount(), Currency: a.Currency})
}

func (s *Server) getAccount(c echo.Context) error {
	id, err := s.viewableAccount(c)
	if err != nil {
		return err
	}
	a, err := s.accounts.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	limit := s.cfg.MaxTransfer
	return writeJSON(c, http.StatusOK, accountView{AccountID: a.ID.String(), Owner: a.Owner, Currency: a.Currency,
		Balance: a.BalanceAmount(), CreatedAt: a.CreatedAt.UTC(), TransferLimit: &limit})
}

// listAccounts answers the caller's accounts: every stored account on
// which it holds view_account (wildcard grants included), in id order,
// paged with ?limit=N and the sealed ?cursor= of the previous page's next
// (docs/contract.md §5): a cursor never names an account, and the walk
// starts only where the service left it, never where a caller chooses.
func (s *Server) listAccounts(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultAccountPage, maxPageLimit)
	if err != nil {
		return err
	}
	if _, ok := c.QueryParams()["after"]; ok {
		return facade.Refuse(facade.ErrBadParameter, "after", facade.ReasonUnknownParameter)
	}
	ctx, p := c.Request().Context(), principal(c)
	if !s.authz.Holdings(p).Accounts {
		// No account grant at all: nothing to walk, and no cursor that
		// would say how many accounts others hold (docs/contract.md §5).
		return writeJSON(c, http.StatusOK, accountListView{Accounts: []accountView{}})
	}
	var after facade.AccountID // the zero id: from the first
	if cursor := c.QueryParam("cursor"); cursor != "" {
		if after, err = s.accounts.OpenCursor(ctx, p.ID, cursor); err != nil {
			return err
		}
	}
	ids, last, more, err := s.viewableAccountIDs(c, after, limit)
	if err != nil {
		return err
	}
	list, err := s.accounts.GetMany(c.Request().Context(), ids)
	if err != nil {
		return err
	}
	view := accountListView{Accounts: make([]accountView, 0, len(list))}
	for _, a := range list {
		view.Accounts = append(view.Accounts, accountView{AccountID: a.ID.String(), Owner: a.Owner, Currency: a.Currency,
			Balance: a.BalanceAmount(), CreatedAt: a.CreatedAt.UTC()})
	}
	if more {
		cursor, err := s.accounts.SealCursor(ctx, p.ID, last)
		if err != nil {
			return err
		}
		view.Next = "/rs/account?" + url.Values{"cursor": {cursor}, "limit": {strconv.Itoa(limit)}}.Encode()
	}
	return writeJSON(c, http.StatusOK, view)
}

// viewableAccountIDs walks the account index after `after` until it has
// limit ids the caller may view or has looked at accountScanBudget ids.
// last is the last id looked at; more says the walk stopped before the end.
func (s *Server) viewableAccountIDs(c echo.Context, after facade.AccountID, limit int) (ids []facade.AccountID, last facade.AccountID, more bool, err error) {
	p, last := principal(c), after
	for scanned := 0; scanned < accountScanBudget; {
		batch, err := s.accounts.IDsAfter(c.Request().Context(), last, accounts.MaxIDsPage)
		if err != nil {
			return nil, facade.AccountID{}, false, err
		}
		for _, id := range batch {
			scanned++
			last = id
			if s.authz.ListAccount(p, id) {
				ids = append(ids, id)
				if len(ids) == limit {
					return ids, last, true, nil
				}
			}
		}
		if len(batch) < accounts.MaxIDsPage {
			return ids, last, false, nil
		}
	}
	return ids, last, true, nil
}

// statementRange reads the statement's query for the account in the path,
// in the order every statement answer checks it (docs/contract.md §5):
// the query first (400), then view_account (403, whatever the cursor: it
// is opened only for a caller who may view the account), then the sealed
// cursor, which opens only for this caller on this account.
func (s *Server) statementRange(c echo.Context) (facade.AccountID, accounts.StatementQuery, error) {
	q, cursor, err := statementQuery(c.QueryParams())
	if err != nil {
		return facade.AccountID{}, q, err
	}
	id, err := s.viewableAccount(c)
	if err != nil {
		return facade.AccountID{}, q, err
	}
	if cursor != "" {
		at, err := s.accounts.OpenStatementCursor(c.Request().Context(), principal(c).ID, id, cursor)
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
func (s *Server) getStatement(c echo.Context) error {
	id, q, err := s.statementRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	page, err := s.accounts.Statement(ctx, id, q)
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
		sealed, err := s.accounts.SealStatementCursor(ctx, principal(c).ID, id, *page.Next)
		if err != nil {
			return err
		}
		view.Next = statementPath(id, c.QueryParams(), sealed)
	}
	return writeJSON(c, http.StatusOK, view)
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
		return accounts.StatementQuery{}, "", &facade.Error{Code: facade.ErrBadParameter.Code, Invalid: []facade.Invalid{
			{Parameter: "from", Reason: facade.ReasonReversed}, {Parameter: "to", Reason: facade.ReasonReversed}}}
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

// transfer parses ids and amount, checks the Idempotency-Key and the
// optional body (400), checks `transfer` on the from account and `transfer` or
// `receive` on the to account (403: destination-refused when only the
// destination is refused, so a person checks the number), then runs the
// one atomic step.
func (s *Server) transfer(c echo.Context) error {
	from, err := pathID(c, fromParam, facade.ParseAccountID)
	if err != nil {
		return err
	}
	to, err := pathID(c, toParam, facade.ParseAccountID)
	if err != nil {
		return err
	}
	amount, err := accounts.ParseTransferAmount(c.Param("amount"), s.cfg.MaxTransfer)
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
	span := tracing.Authorize(c.Request().Context(), "transfer")
	allowed := s.authz.CanTransfer(p, from, to)
	tracing.Allowed(span, allowed)
	if !allowed {
		err := s.deny(c, "transfer", "account:"+from.String()+"->account:"+to.String())
		if s.authz.MayDebit(p, from) {
			err = facade.ErrDestinationRefused
		}
		return err
	}
	t, replayed, err := s.accounts.Transfer(c.Request().Context(), accounts.TransferRequest{
		From: from, To: to, Amount: amount, IdempotencyKey: key, Principal: p.ID, Reference: ref,
	})
	if err != nil {
		return err
	}
	if replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return writeTransfer(c, http.StatusCreated, transferView{
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
