package accounts

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFormatMinor(t *testing.T) {
	cases := []struct {
		minor int64
		exp   int
		want  string
	}{
		{123456, 2, "1234.56"},
		{5, 0, "5"},
		{1, 3, "0.001"},
		{0, 2, "0.00"},
		{0, 0, "0"},
		{10, 2, "0.10"},
		{100, 2, "1.00"},
		{30, 2, "0.30"},
		{-1, 2, "-0.01"},
		{-123456, 2, "-1234.56"},
		{1000, 3, "1.000"},
		{math.MaxInt64, 0, "9223372036854775807"},
		{math.MaxInt64, 2, "92233720368547758.07"},
		{math.MinInt64, 2, "-92233720368547758.08"},
		{math.MinInt64, 3, "-9223372036854775.808"},
		{math.MaxInt64, 18, "9.223372036854775807"},
		{1, 18, "0.000000000000000001"},
	}
	for _, c := range cases {
		got := FormatMinor(c.minor, c.exp)
		if got != c.want {
			t.Errorf("FormatMinor(%d, %d) = %q, want %q", c.minor, c.exp, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("FormatMinor(%d, %d) = %q is not a JSON number", c.minor, c.exp, got)
		}
	}
}

func TestAmountJSONIsABareNumberWithTheCurrencyDecimals(t *testing.T) {
	eur, _ := LookupCurrency("EUR")
	jpy, _ := LookupCurrency("JPY")
	kwd, _ := LookupCurrency("KWD")
	body := map[string]any{
		"eur":   Amount{Minor: 10 + 20, Currency: eur}, // 0.1 + 0.2, in cents
		"big":   Amount{Minor: 123456, Currency: eur},
		"jpy":   Amount{Minor: 5, Currency: jpy},
		"kwd":   Amount{Minor: 1, Currency: kwd},
		"limit": Amount{Minor: math.MaxInt64, Currency: eur},
	}
	got, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"big":1234.56,"eur":0.30,"jpy":5,"kwd":0.001,"limit":92233720368547758.07}`
	if string(got) != want {
		t.Fatalf("JSON = %s\nwant   %s", got, want)
	}
}

func TestCurrencyTable(t *testing.T) {
	want := map[string]int{"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3}
	for code, exp := range want {
		c, ok := LookupCurrency(code)
		if !ok || c.Exponent != exp || c.Code != code {
			t.Errorf("LookupCurrency(%q) = %+v, %v; want exponent %d", code, c, ok, exp)
		}
	}
	for _, code := range []string{"", "eur", "XXX", "EURO"} {
		if _, ok := LookupCurrency(code); ok {
			t.Errorf("LookupCurrency(%q) accepted an unknown code", code)
		}
	}
	for code, exp := range currencies {
		if exp > MaxExponent {
			t.Errorf("%s has exponent %d above MaxExponent", code, exp)
		}
	}
}
