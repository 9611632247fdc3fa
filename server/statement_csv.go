package server

import (
	"encoding/csv"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/csvcell"
)

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
func (s *Server) getStatementCSV(c echo.Context) error {
	id, q, err := s.statementRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	q.Limit = accounts.MaxStatementLimit
	page, err := s.accounts.Statement(ctx, id, q) // the first page before any byte: a 404 is still a 404
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+statementFileName(id, c.QueryParams())+`"`)
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
		if page, err = s.accounts.Statement(ctx, id, q); err != nil {
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
