package server

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
)

// accountHandlers answer the account routes (docs/contract.md §5): the
// caller's accounts, an account, its balance and statement, and
// transfers. They reach the account store and authz, nothing else.
type accountHandlers struct {
	gate
	accounts *accounts.Store
	// maxTransfer is the largest transfer in major units (Config.MaxTransfer).
	maxTransfer int64
}

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

// viewableAccount parses the id and checks view_account before any read.
func (h *accountHandlers) viewableAccount(c echo.Context) (facade.AccountID, error) {
	id, err := pathID(c, accountParam, facade.ParseAccountID)
	if err != nil {
		return facade.AccountID{}, err
	}
	return id, h.authorize(c, question{op: "account.view",
		allow:  func(p facade.Principal) bool { return h.az.CanViewAccount(p, id) },
		target: func() string { return "account:" + id.String() }})
}

func (h *accountHandlers) getBalance(c echo.Context) error {
	id, err := h.viewableAccount(c)
	if err != nil {
		return err
	}
	a, err := h.accounts.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, balanceView{AccountID: a.ID.String(), Balance: a.BalanceAmount(), Currency: a.Currency})
}

func (h *accountHandlers) getAccount(c echo.Context) error {
	id, err := h.viewableAccount(c)
	if err != nil {
		return err
	}
	a, err := h.accounts.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	limit := h.maxTransfer
	return c.JSON(http.StatusOK, accountView{AccountID: a.ID.String(), Owner: a.Owner, Currency: a.Currency,
		Balance: a.BalanceAmount(), CreatedAt: a.CreatedAt.UTC(), TransferLimit: &limit})
}

// listAccounts answers the caller's accounts: every stored account on
// which it holds view_account (wildcard grants included), in id order,
// paged with ?limit=N and the sealed ?cursor= of the previous page's next
// (docs/contract.md §5): a cursor never names an account, and the walk
// starts only where the service left it, never where a caller chooses.
func (h *accountHandlers) listAccounts(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultAccountPage, maxPageLimit)
	if err != nil {
		return err
	}
	if _, ok := c.QueryParams()["after"]; ok {
		return facade.Refuse(facade.ErrBadParameter, "after", facade.ReasonUnknownParameter)
	}
	ctx, p := c.Request().Context(), principal(c)
	if !h.az.Holdings(p).Accounts {
		// No account grant at all: nothing to walk, and no cursor that
		// would say how many accounts others hold (docs/contract.md §5).
		return c.JSON(http.StatusOK, accountListView{Accounts: []accountView{}})
	}
	var after facade.AccountID // the zero id: from the first
	if cursor := c.QueryParam("cursor"); cursor != "" {
		if after, err = h.accounts.OpenCursor(ctx, p.ID, cursor); err != nil {
			return err
		}
	}
	ids, last, more, err := h.viewableAccountIDs(c, after, limit)
	if err != nil {
		return err
	}
	list, err := h.accounts.GetMany(c.Request().Context(), ids)
	if err != nil {
		return err
	}
	view := accountListView{Accounts: make([]accountView, 0, len(list))}
	for _, a := range list {
		view.Accounts = append(view.Accounts, accountView{AccountID: a.ID.String(), Owner: a.Owner, Currency: a.Currency,
			Balance: a.BalanceAmount(), CreatedAt: a.CreatedAt.UTC()})
	}
	if more {
		cursor, err := h.accounts.SealCursor(ctx, p.ID, last)
		if err != nil {
			return err
		}
		view.Next = "/rs/account?" + url.Values{"cursor": {cursor}, "limit": {strconv.Itoa(limit)}}.Encode()
	}
	return c.JSON(http.StatusOK, view)
}

// viewableAccountIDs walks the account index after `after` until it has
// limit ids the caller may view or has looked at accountScanBudget ids.
// last is the last id looked at; more says the walk stopped before the end.
func (h *accountHandlers) viewableAccountIDs(c echo.Context, after facade.AccountID, limit int) (ids []facade.AccountID, last facade.AccountID, more bool, err error) {
	p, last := principal(c), after
	for scanned := 0; scanned < accountScanBudget; {
		batch, err := h.accounts.IDsAfter(c.Request().Context(), last, accounts.MaxIDsPage)
		if err != nil {
			return nil, facade.AccountID{}, false, err
		}
		for _, id := range batch {
			scanned++
			last = id
			if h.az.ListAccount(p, id) {
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
