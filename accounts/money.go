// Package accounts is Facade's money domain (docs/contract.md §5): currencies with
// their ISO 4217 exponents, amounts held as int64 minor units and written to
// JSON without ever passing through a float, the parser for amounts given in
// a URL, and the Redis store whose Transfer moves money in one atomic Lua
// step, exactly once per Idempotency-Key.
//
// Authorization is not done here: callers have already decided that the
// principal may touch the accounts named in a request.
package accounts

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/facade-dev/facade"
)

// Currency is an ISO 4217 currency: its code and its exponent, the number of
// decimal digits of its minor unit (EUR 2: 1 EUR = 100 cents; JPY 0).
// The zero value is not a currency; use LookupCurrency.
type Currency struct {
	Code     string
	Exponent int
}

// MaxExponent is the largest exponent in the table below. It bounds the
// decimals any amount may carry before its currency is known, and keeps every
// 15-digit major amount representable in int64 minor units.
const MaxExponent = 3

// currencies is the ISO 4217 table of the currencies Facade accepts.
var currencies = map[string]int{
	// exponent 0
	"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "UGX": 0, "PYG": 0,
	"XOF": 0, "XAF": 0, "XPF": 0, "RWF": 0, "KMF": 0, "DJF": 0, "GNF": 0, "VUV": 0,
	// exponent 2
	"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "CAD": 2, "AUD": 2, "NZD": 2,
	"SEK": 2, "NOK": 2, "DKK": 2, "PLN": 2, "CZK": 2, "HUF": 2, "RON": 2,
	"BGN": 2, "TRY": 2, "CNY": 2, "HKD": 2, "SGD": 2, "INR": 2, "BRL": 2,
	"MXN": 2, "ZAR": 2, "ILS": 2, "AED": 2, "SAR": 2, "THB": 2, "TWD": 2,
	"PHP": 2, "MYR": 2, "IDR": 2, "EGP": 2, "NGN": 2, "KES": 2, "UAH": 2,
	// exponent 3
	"KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3, "TND": 3, "LYD": 3, "IQD": 3,
}

// LookupCurrency returns the currency with the given ISO 4217 code
// (upper case, as stored), or false when Facade does not know it.
func LookupCurrency(code string) (Currency, bool) {
	exp, ok := currencies[code]
	if !ok {
		return Currency{}, false
	}
	return Currency{Code: code, Exponent: exp}, true
}

// known reports whether c is exactly an entry of the table.
func (c Currency) known() bool {
	k, ok := LookupCurrency(c.Code)
	return ok && k == c
}

// MarshalJSON writes the currency as its code, as clients see it.
func (c Currency) MarshalJSON() ([]byte, error) { return json.Marshal(c.Code) }

// ErrOverflow means a sum does not fit int64 minor units. Money never wraps.
var ErrOverflow = errors.New("accounts: amount overflows int64 minor units")

// errBadExponent means an exponent outside what a decimal int64 can carry.
var errBadExponent = errors.New("accounts: exponent out of range")

// Amount is a sum of money: Minor units of Currency. The zero value is zero
// of no currency, which formats as "0".
type Amount struct {
	Minor    int64
	Currency Currency
}

// String formats a as a decimal with exactly Currency.Exponent decimals.
func (a Amount) String() string { return FormatMinor(a.Minor, a.Currency.Exponent) }

// MarshalJSON writes a as a bare JSON number (1234.56, 5, 0.001), built
// from the integer digits: no float rounding can creep in.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Currency.Exponent < 0 || a.Currency.Exponent > 18 {
		return nil, errBadExponent
	}
	return AppendMinor(nil, a.Minor, a.Currency.Exponent), nil
}

// FormatMinor writes minor units as a decimal number with exp decimals:
// FormatMinor(123456, 2) = "1234.56", FormatMinor(5, 0) = "5",
// FormatMinor(1, 3) = "0.001", FormatMinor(-1, 2) = "-0.01".
// A negative exp is treated as 0.
func FormatMinor(minor int64, exp int) string { return string(AppendMinor(nil, minor, exp)) }

// AppendMinor appends FormatMinor(minor, exp) to dst. It works on the
// unsigned magnitude, so math.MinInt64 formats correctly too.
func AppendMinor(dst []byte, minor int64, exp int) []byte {
	magnitude := uint64(minor)
	if minor < 0 {
		dst = append(dst, '-')
		magnitude = -magnitude // two's complement: exact even for MinInt64
	}
	digits := strconv.AppendUint(nil, magnitude, 10)
	if exp <= 0 {
		return append(dst, digits...)
	}
	// Left-pad so there is at least one digit before the point.
	for len(digits) <= exp {
		digits = append([]byte{'0'}, digits...)
	}
	point := len(digits) - exp
	dst = append(dst, digits[:point]...)
	dst = append(dst, '.')
	return append(dst, digits[point:]...)
}

// pow10 returns 10^exp, or ErrOverflow beyond int64.
func pow10(exp int) (int64, error) {
	if exp < 0 {
		return 0, errBadExponent
	}
	p := int64(1)
	for range exp {
		if p > math.MaxInt64/10 {
			return 0, ErrOverflow
		}
		p *= 10
	}
	return p, nil
}

// mulAdd returns a*b + c for non-negative operands, or ErrOverflow.
func mulAdd(a, b, c int64) (int64, error) {
	if b != 0 && a > math.MaxInt64/b {
		return 0, ErrOverflow
	}
	if a*b > math.MaxInt64-c {
		return 0, ErrOverflow
	}
	return a*b + c, nil
}

// badAmount is the error every refused amount becomes (400), naming the
// rule it broke (docs/contract.md §2: the body's errors list).
func badAmount(param string, reason facade.Reason) error {
	return facade.Refuse(facade.ErrBadAmount, param, reason)
}
