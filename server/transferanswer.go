package server

import (
	"encoding/json"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/accounts"
)

// writeTransfer answers a transfer with the bytes c.JSON would write for
// v (encoding/json's Encoder: HTML-escaped strings, a closing newline),
// built by hand: the reflective encoder, with the MarshalJSON calls of
// the amount and currency, was 4-5 % of Facade's CPU per transfer
// (bench/run.sh PERF=1). ?pretty, which Echo answers indented, and any
// value the hand-built form does not cover take c.JSON itself.
// transferanswer_test.go checks both give the same bytes.
func writeTransfer(c echo.Context, code int, v transferView) error {
	if c.Request().URL.RawQuery != "" {
		if _, pretty := c.QueryParams()["pretty"]; pretty {
			return writeJSON(c, code, v)
		}
	}
	var buf [320]byte
	b, ok := appendTransferView(buf[:0], v)
	if !ok {
		return writeJSON(c, code, v)
	}
	return writeEncodedJSON(c, code, b)
}

// appendTransferView appends v as encoding/json's Encoder writes it, or
// reports false when it cannot promise the same bytes.
func appendTransferView(b []byte, v transferView) ([]byte, bool) {
	exp := v.Amount.Currency.Exponent
	if exp < 0 || exp > 18 {
		return b, false // Amount.MarshalJSON's error
	}
	if y := v.CreatedAt.Year(); y < 0 || y > 9999 {
		return b, false // time.Time.MarshalJSON's error
	}
	b = append(b, `{"transfer_id":`...)
	b = appendJSONString(b, v.TransferID)
	b = append(b, `,"from_account_id":`...)
	b = appendJSONString(b, v.FromAccountID)
	b = append(b, `,"to_account_id":`...)
	b = appendJSONString(b, v.ToAccountID)
	b = append(b, `,"amount":`...)
	b = accounts.AppendMinor(b, v.Amount.Minor, exp)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, v.Currency.Code)
	b = append(b, `,"created_at":"`...)
	b = v.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if v.Reference != "" {
		b = append(b, `,"reference":`...)
		b = appendJSONString(b, v.Reference)
	}
	b = append(b, "}\n"...)
	return b, true
}

// appendJSONString appends s quoted as encoding/json writes it: printable
// ASCII other than " \ < > & as is, anything else through json.Marshal
// (which escapes HTML as the Encoder does).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
