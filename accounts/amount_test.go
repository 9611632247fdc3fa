package accounts

import (
	"errors"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

const testMax = 1_000_000 // FACADE_MAX_TRANSFER default

var (
	eur = Currency{Code: "EUR", Exponent: 2}
	usd = Currency{Code: "USD", Exponent: 2}
	jpy = Currency{Code: "JPY", Exponent: 0}
	kwd = Currency{Code: "KWD", Exponent: 3}
)

// badAmounts are refused in any currency (docs/contract.md §5).
var badAmounts = []string{
	"-5", "0", "0.00", "0.000", "1e3", "NaN", "Infinity", "-Infinity", "01", "00.5", "+5",
	" 5", "5 ", "5.", ".5", "1,5", "1.5.0", "５", "1０", "0x10", "1_000", "5\n", "",
	"12345678901234567890", "1234567890123456", "1000000.01", "1000001", "999999999999999",
	"5.0000", "1.0001", "٥",
}

// minorIn takes an amount as the service does, in minor units of cur:
// parsed by ParseTransferAmount (the HTTP layer), then held to the
// currency's precision by TransferAmount.Minor (the transfer step, once
// the source account's currency is known), refused as the script's
// FACADE_BAD_AMOUNT is.
func minorIn(s string, cur Currency, maxMajor int64) (int64, error) {
	a, err := ParseTransferAmount(s, maxMajor)
	if err != nil {
		return 0, err
	}
	minor, ok := a.Minor(cur.Exponent)
	if !ok {
		return 0, scriptRefusals["FACADE_BAD_AMOUNT"]
	}
	return minor, nil
}

func TestAmountRefusesMalformedInAnyCurrency(t *testing.T) {
	for _, s := range badAmounts {
		for _, cur := range []Currency{eur, jpy, kwd} {
			if minor, err := minorIn(s, cur, testMax); !isBadAmount(err) {
				t.Errorf("minorIn(%q, %s) = %d, %v; want ErrBadAmount", s, cur.Code, minor, err)
			}
		}
		if err := transferAmountErr(s, testMax); !isBadAmount(err) {
			t.Errorf("ParseTransferAmount(%q) = %v; want ErrBadAmount", s, err)
		}
	}
}

func TestAmountPrecisionFollowsTheCurrency(t *testing.T) {
	cases := []struct {
		s    string
		cur  Currency
		want int64 // 0: refused
	}{
		{"5", eur, 500},
		{"5.5", eur, 550},
		{"5.50", eur, 550},
		{"5.00", eur, 500},
		{"0.01", eur, 1},
		{"1234.56", eur, 123456},
		{"1.001", eur, 0},
		{"5.000", eur, 0}, // digits as written, not value: too precise for EUR
		{"5", jpy, 5},
		{"5.0", jpy, 0},
		{"5.5", jpy, 0},
		{"0.001", kwd, 1},
		{"1.5", kwd, 1500},
		{"0.0001", kwd, 0},
		{"1000000", eur, 100_000_000},
		{"1000000.00", eur, 100_000_000},
		{"1000000.01", eur, 0},
		{"999999.99", eur, 99_999_999},
		{"1000000", jpy, 1_000_000},
	}
	for _, c := range cases {
		got, err := minorIn(c.s, c.cur, testMax)
		switch {
		case c.want == 0 && !isBadAmount(err):
			t.Errorf("minorIn(%q, %s) = %d, %v; want bad amount", c.s, c.cur.Code, got, err)
		case c.want != 0 && (err != nil || got != c.want):
			t.Errorf("minorIn(%q, %s) = %d, %v; want %d", c.s, c.cur.Code, got, err, c.want)
		}
	}
}

func TestAmountLargestValuesDoNotOverflow(t *testing.T) {
	const maxInt64 = int64(^uint64(0) >> 1)
	got, err := minorIn("999999999999999.999", kwd, maxInt64)
	if err != nil || got != 999_999_999_999_999_999 {
		t.Fatalf("15-digit KWD amount = %d, %v", got, err)
	}
	// An exponent beyond the table would overflow int64: refused, not wrapped.
	if got, err := minorIn("999999999999999", Currency{Code: "X", Exponent: 5}, maxInt64); !isBadAmount(err) {
		t.Fatalf("overflowing amount = %d, %v; want bad amount", got, err)
	}
}

func TestParseBalanceAllowsZeroAndNoLimit(t *testing.T) {
	for s, want := range map[string]int64{"250.00": 25000, "0": 0, "0.00": 0, "5000000": 500_000_000} {
		if got, err := ParseBalance(s, eur); err != nil || got != want {
			t.Errorf("ParseBalance(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"-1", "250.001", "1e3", ""} {
		if _, err := ParseBalance(s, eur); !isBadAmount(err) {
			t.Errorf("ParseBalance(%q) = %v; want bad amount", s, err)
		}
	}
}

// FuzzAmountInCurrency: an amount the service takes in a currency is in
// the grammar, above zero, and formats back to the same value, which it
// takes again as the same minor units.
func FuzzAmountInCurrency(f *testing.F) {
	for _, s := range append(badAmounts, "5", "5.5", "0.01", "0.001", "1000000", "999999999999999.999") {
		f.Add(s, uint8(2), int64(testMax))
	}
	f.Fuzz(func(t *testing.T, s string, exp uint8, maxMajor int64) {
		cur := Currency{Code: "FUZ", Exponent: int(exp % 5)} // 0..4: one beyond the table
		minor, err := minorIn(s, cur, maxMajor)
		if err != nil {
			if !isBadAmount(err) {
				t.Fatalf("minorIn(%q) error %v is not a bad-amount error", s, err)
			}
			return
		}
		if !amountPattern.MatchString(s) || minor <= 0 {
			t.Fatalf("minorIn(%q) accepted %d against the grammar", s, minor)
		}
		formatted := FormatMinor(minor, cur.Exponent)
		if canonical(formatted) != canonical(s) {
			t.Fatalf("minorIn(%q) = %d formats as %q: value changed", s, minor, formatted)
		}
		// Formatted in a currency beyond the table, it has more decimals
		// than any transfer takes.
		if again, err := minorIn(formatted, cur, maxMajor); cur.Exponent <= MaxExponent && (err != nil || again != minor) {
			t.Fatalf("round trip of %q via %q = %d, %v; want %d", s, formatted, again, err, minor)
		}
	})
}

// canonical strips trailing fraction zeros: "5.50" and "5.5" name one value.
func canonical(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func isBadAmount(err error) bool {
	var fe *facade.Error
	return errors.As(err, &fe) && errors.Is(err, facade.ErrBadAmount)
}

// TestAmountRefusalsNameTheRuleAPersonBroke: an amount outside the grammar
// that is still a number says what is wrong with it (docs/contract.md §5).
func TestAmountRefusalsNameTheRuleAPersonBroke(t *testing.T) {
	for s, want := range map[string]facade.Reason{
		"-5": facade.ReasonNotPositive, "-0.50": facade.ReasonNotPositive, "-0": facade.ReasonNotPositive,
		"007": facade.ReasonLeadingZero, "00": facade.ReasonLeadingZero, "00.5": facade.ReasonLeadingZero,
		"99999999999999999999": facade.ReasonOverLimit, "1234567890123456": facade.ReasonOverLimit,
		"1000000000000000.01": facade.ReasonOverLimit, "1000001": facade.ReasonOverLimit,
		"0": facade.ReasonNotPositive, "1.001": facade.ReasonTooPrecise,
		"+5": facade.ReasonMalformed, "1e3": facade.ReasonMalformed, "- 5": facade.ReasonMalformed,
		"--5": facade.ReasonMalformed, "0123456789012345678": facade.ReasonLeadingZero, "５": facade.ReasonMalformed,
		"": facade.ReasonMalformed, "1.": facade.ReasonMalformed,
	} {
		_, err := minorIn(s, eur, testMax)
		var fe *facade.Error
		if !errors.As(err, &fe) || len(fe.Invalid) != 1 || fe.Invalid[0].Reason != want {
			t.Errorf("minorIn(%q): %v, want reason %s", s, err, want)
		}
	}
}

// transferAmountErr is ParseTransferAmount's refusal alone.
func transferAmountErr(s string, maxMajor int64) error {
	_, err := ParseTransferAmount(s, maxMajor)
	return err
}

// FuzzParseTransferAmount: an amount ParseTransferAmount accepts is in
// docs/contract.md §5's grammar, writes back as the very text it was read
// from (so parsing its String gives the same value), and is, in every
// currency exponent, its own value in that currency's minor units, or too
// precise for it exactly when it was written with more decimals.
func FuzzParseTransferAmount(f *testing.F) {
	for _, s := range append(badAmounts, "5", "5.5", "5.00", "0.01", "0.001", "0.100", "1000000", "999999999999999.999") {
		f.Add(s, int64(testMax))
	}
	f.Fuzz(func(t *testing.T, s string, maxMajor int64) {
		a, err := ParseTransferAmount(s, maxMajor)
		if err != nil {
			if !isBadAmount(err) {
				t.Fatalf("ParseTransferAmount(%q) error %v is not a bad-amount error", s, err)
			}
			return
		}
		if !amountPattern.MatchString(s) || a.String() != s {
			t.Fatalf("ParseTransferAmount(%q) accepted against the grammar, or writes back as %q", s, a.String())
		}
		if again, err := ParseTransferAmount(a.String(), maxMajor); err != nil || again != a {
			t.Fatalf("round trip of %q = %+v, %v; want %+v", s, again, err, a)
		}
		_, frac, _ := strings.Cut(s, ".")
		for exp := 0; exp <= MaxExponent; exp++ {
			minor, ok := a.Minor(exp)
			if ok != (len(frac) <= exp) || ok && canonical(FormatMinor(minor, exp)) != canonical(s) {
				t.Fatalf("%q at exponent %d: Minor %d, %v", s, exp, minor, ok)
			}
		}
	})
}
