package server

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/accounts"
)

// transferViews covers what the hand-built answer must write exactly as
// encoding/json does: every exponent, signs and extremes of the amount,
// times with and without fractions, and strings that need escaping.
func transferViews() []transferView {
	at := time.Date(2026, 11, 23, 21, 40, 5, 123456000, time.UTC)
	var out []transferView
	for _, exp := range []int{0, 2, 3, 18} {
		for _, minor := range []int64{0, 1, -1, 5, 123456, math.MaxInt64, math.MinInt64} {
			cur := accounts.Currency{Code: "EUR", Exponent: exp}
			out = append(out, transferView{
				TransferID: "0123456789abcdef0123456789abcdef", FromAccountID: "1001", ToAccountID: "acct.B_2@x-y",
				Amount: accounts.Amount{Minor: minor, Currency: cur}, Currency: cur, CreatedAt: at,
			})
		}
	}
	for _, s := range []string{"", `a"b`, `a\b`, "<&>", "tab\there", "é", "\u2028", "\xff", "nul\x00"} {
		cur := accounts.Currency{Code: s, Exponent: 2}
		out = append(out, transferView{
			TransferID: s, FromAccountID: s, ToAccountID: s,
			Amount: accounts.Amount{Minor: 42, Currency: cur}, Currency: cur, CreatedAt: at,
		}, transferView{
			TransferID: "t", FromAccountID: "a", ToAccountID: "b",
			Amount: accounts.Amount{Minor: 42, Currency: cur}, Currency: cur, CreatedAt: at, Reference: s,
		})
	}
	for _, t := range []time.Time{{}, time.Unix(0, 0).UTC(), at.Truncate(time.Second), at.Add(100 * time.Microsecond), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)} {
		cur := accounts.Currency{Code: "KWD", Exponent: 3}
		out = append(out, transferView{TransferID: "t", FromAccountID: "a", ToAccountID: "b",
			Amount: accounts.Amount{Minor: 7, Currency: cur}, Currency: cur, CreatedAt: t})
	}
	return out
}

// A transfer's answer is byte for byte what encoding/json's Encoder (which
// c.JSON uses) writes for the same view.
func TestTransferAnswerMatchesEncodingJSON(t *testing.T) {
	for _, v := range transferViews() {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(v); err != nil {
			t.Fatalf("encoding/json refused %+v: %v", v, err)
		}
		got, ok := appendTransferView(nil, v)
		if !ok || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("answer for %+v:\n got %q (ok=%v)\nwant %q", v, got, ok, want.Bytes())
		}
	}
}

// What the hand-built form cannot promise (an exponent Amount refuses, a
// year time refuses) goes to c.JSON, as does ?pretty: status, headers and
// body are c.JSON's own.
func TestTransferAnswerFallsBackToEchoJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	eur := accounts.Currency{Code: "EUR", Exponent: 2}
	good := transferView{TransferID: "t", FromAccountID: "a", ToAccountID: "b", Amount: accounts.Amount{Minor: 1, Currency: eur}, Currency: eur, CreatedAt: at}
	badExp := good
	badExp.Amount.Currency.Exponent = 19
	badYear := good
	badYear.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	e := echo.New()
	for _, tc := range []struct {
		target string
		v      transferView
	}{
		{"/x", good}, {"/x?pretty", good}, {"/x?a=1&pretty=0", good}, {"/x?a=1", good},
		{"/x", badExp}, {"/x", badYear},
	} {
		answer := func(write func(echo.Context) error) (*httptest.ResponseRecorder, error) {
			rec := httptest.NewRecorder()
			c := e.NewContext(httptest.NewRequest(http.MethodPost, tc.target, nil), rec)
			return rec, write(c)
		}
		got, gotErr := answer(func(c echo.Context) error { return writeTransfer(c, http.StatusCreated, tc.v) })
		want, wantErr := answer(func(c echo.Context) error { return c.JSON(http.StatusCreated, tc.v) })
		if (gotErr == nil) != (wantErr == nil) || got.Code != want.Code ||
			got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || got.Body.String() != want.Body.String() {
			t.Errorf("%s %+v: got %d %q %q err %v; c.JSON %d %q %q err %v", tc.target, tc.v,
				got.Code, got.Header().Get("Content-Type"), got.Body, gotErr,
				want.Code, want.Header().Get("Content-Type"), want.Body, wantErr)
		}
	}
}
