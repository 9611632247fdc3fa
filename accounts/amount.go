package accounts

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/facade-dev/facade"
)

// amountPattern is docs/contract.md §5's grammar for an amount in a URL: ASCII
// digits only (no sign, exponent, spaces, commas or full-width digits), no
// leading zeros, at most 15 integer digits. Go's $ matches only at the very
// end of the text, so a trailing newline is refused too.
var amountPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,14})(\.[0-9]+)?$`)

// ParseAmount turns an amount as given in a transfer URL into minor units of
// cur. It accepts exactly what docs/contract.md §5 allows:
//
//   - the string matches ^(0|[1-9][0-9]{0,14})(\.[0-9]+)?$;
//   - it has at most cur.Exponent digits after the point, counted as
//     written: "5.00" is fine in EUR, "5.000" is too precise for EUR even
//     though its value is whole, and "5.0" is refused in JPY. A client
//     that writes more digits than the currency has is confused about the
//     currency, and silently accepting it would hide that;
//   - its value is above 0 and at most maxMajor major units.
//
// Any refusal is facade.ErrBadAmount naming the first rule broken, in this
// order: malformed, too_precise, over_limit, not_positive (so "0.000" in
// EUR is too precise, and "abc" only malformed).
func ParseAmount(s string, cur Currency, maxMajor int64) (int64, error) {
	minor, reason := parseAmount(s, cur, maxMajor)
	if reason != "" {
		return 0, badAmount(amountParam, reason)
	}
	return minor, nil
}

// parseAmount is ParseAmount with the refusal's reason ("" for none)
// instead of an error, which costs allocations: appendAmountByExponent asks
// for every exponent, and a transfer's amount is too precise for some.
func parseAmount(s string, cur Currency, maxMajor int64) (int64, facade.Reason) {
	whole, frac, ok := splitAmount(s)
	switch {
	case !ok:
		return 0, outsideGrammar(s)
	case len(frac) > cur.Exponent:
		return 0, facade.ReasonTooPrecise
	case !withinMax(whole, frac, maxMajor):
		return 0, facade.ReasonOverLimit
	}
	minor, err := toMinor(whole, frac, cur.Exponent)
	switch {
	case err != nil:
		return 0, facade.ReasonOverLimit
	case minor <= 0:
		return 0, facade.ReasonNotPositive
	}
	return minor, ""
}

// Amounts outside the grammar that a person wrote as a number all the
// same, so the refusal names the rule they broke rather than
// "malformed": a sign (-5 is not positive), leading zeros (007), or more
// integer digits than the grammar has room for (over the limit, however
// many digits: docs/contract.md §5).
var (
	negativeAmount    = regexp.MustCompile(`^-[0-9]+(\.[0-9]+)?$`)
	leadingZeroAmount = regexp.MustCompile(`^0[0-9]+(\.[0-9]+)?$`)
	longAmount        = regexp.MustCompile(`^[1-9][0-9]{15,}(\.[0-9]+)?$`)
)

// outsideGrammar names the rule an amount that fails amountPattern broke.
func outsideGrammar(s string) facade.Reason {
	switch {
	case negativeAmount.MatchString(s):
		return facade.ReasonNotPositive
	case leadingZeroAmount.MatchString(s):
		return facade.ReasonLeadingZero
	case longAmount.MatchString(s):
		return facade.ReasonOverLimit
	}
	return facade.ReasonMalformed
}

// amountParam names the amount in a refusal: the transfer path's
// {amount} (docs/contract.md §5).
const amountParam = "amount"

// ValidateAmountSyntax checks everything about an amount that does not
// depend on its currency: the grammar, more than 0, at most maxMajor, and
// no more decimals than any currency has (MaxExponent). It is the check to
// run before Redis; the currency's own precision is checked by Transfer
// once the source account's currency is known.
func ValidateAmountSyntax(s string, maxMajor int64) error {
	_, err := ParseAmount(s, Currency{Exponent: MaxExponent}, maxMajor)
	return err
}

// ParseBalance turns an opening balance (seed file, docs/contract.md §8) into
// minor units of cur. Same grammar and precision rule as ParseAmount, but
// zero is allowed and there is no transfer limit.
func ParseBalance(s string, cur Currency) (int64, error) {
	whole, frac, ok := splitAmount(s)
	switch {
	case !ok:
		return 0, badAmount("balance", facade.ReasonMalformed)
	case len(frac) > cur.Exponent:
		return 0, badAmount("balance", facade.ReasonTooPrecise)
	}
	minor, err := toMinor(whole, frac, cur.Exponent)
	if err != nil {
		return 0, badAmount("balance", facade.ReasonOverLimit)
	}
	return minor, nil
}

// splitAmount matches s against the grammar and returns its integer part
// and its fraction digits (possibly empty).
func splitAmount(s string) (whole int64, frac string, ok bool) {
	if !amountPattern.MatchString(s) {
		return 0, "", false
	}
	intPart, frac, _ := strings.Cut(s, ".")
	whole, err := strconv.ParseInt(intPart, 10, 64) // at most 15 digits: fits
	if err != nil {
		return 0, "", false
	}
	return whole, frac, true
}

// withinMax reports whether whole.frac <= maxMajor, comparing decimals
// exactly (no scaling of maxMajor, which could overflow).
func withinMax(whole int64, frac string, maxMajor int64) bool {
	if whole != maxMajor {
		return whole < maxMajor
	}
	return strings.Trim(frac, "0") == ""
}

// toMinor computes whole*10^exp + frac scaled to exp digits, or ErrOverflow.
// frac has at most exp digits (checked by the callers).
func toMinor(whole int64, frac string, exp int) (int64, error) {
	scale, err := pow10(exp)
	if err != nil {
		return 0, err
	}
	fracMinor := int64(0)
	if frac != "" {
		fracMinor, err = strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, ErrOverflow
		}
		fracScale, err := pow10(exp - len(frac))
		if err != nil {
			return 0, err
		}
		fracMinor *= fracScale // < 10^exp: cannot overflow when scale did not
	}
	return mulAdd(whole, scale, fracMinor)
}
