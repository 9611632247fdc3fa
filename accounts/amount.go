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

// TransferAmount is the amount of a transfer URL, parsed once by
// ParseTransferAmount before the currency it is in is known: its value in
// units of its last written decimal, and how many decimals were written
// ("5.00" is 500 and 2; "5" is 5 and 0), which the currency's exponent
// (the source account's, read inside the transfer step) accepts or not.
// The zero value is no amount: no parse returns it.
type TransferAmount struct {
	units  int64 // the value, times 10^places
	places int   // the decimals written, at most MaxExponent
}

// ParseTransferAmount checks everything about a transfer's amount that
// does not depend on its currency: docs/contract.md §5's grammar, more
// than 0, at most maxMajor major units, and no more decimals than any
// currency has (MaxExponent). A refusal is facade.ErrBadAmount naming the
// first rule broken: malformed, too_precise, over_limit, not_positive
// (so "abc" is only malformed). The currency's own precision is applied
// by Store.Transfer, through Minor, once the source account's currency is
// known: "5.000" is too precise for EUR even though its value is whole,
// and "5.0" is refused in JPY. A client that writes more digits than the
// currency has is confused about the currency, and silently accepting it
// would hide that.
func ParseTransferAmount(s string, maxMajor int64) (TransferAmount, error) {
	a, reason := parseDecimal(s, MaxExponent, maxMajor)
	if reason != "" {
		return TransferAmount{}, badAmount(amountParam, reason)
	}
	return a, nil
}

// parseDecimal reads s with at most maxPlaces decimals and a value in
// (0, maxMajor], or names the first rule it breaks.
func parseDecimal(s string, maxPlaces int, maxMajor int64) (TransferAmount, facade.Reason) {
	whole, frac, ok := splitAmount(s)
	switch {
	case !ok:
		return TransferAmount{}, outsideGrammar(s)
	case len(frac) > maxPlaces:
		return TransferAmount{}, facade.ReasonTooPrecise
	case !withinMax(whole, frac, maxMajor):
		return TransferAmount{}, facade.ReasonOverLimit
	}
	units, err := toMinor(whole, frac, len(frac))
	switch {
	case err != nil:
		return TransferAmount{}, facade.ReasonOverLimit
	case units <= 0:
		return TransferAmount{}, facade.ReasonNotPositive
	}
	return TransferAmount{units: units, places: len(frac)}, ""
}

// Minor is a in minor units of a currency of the given exponent; false
// when a has more decimals than the currency (too precise for it) or its
// minor units overflow int64 (never for an exponent up to MaxExponent).
func (a TransferAmount) Minor(exponent int) (int64, bool) {
	if a.places > exponent {
		return 0, false
	}
	scale, err := pow10(exponent - a.places)
	if err != nil {
		return 0, false
	}
	minor, err := mulAdd(a.units, scale, 0)
	return minor, err == nil
}

// String is the amount as it was written ("5.00"): the grammar has no
// leading zeros, and the decimals written are kept.
func (a TransferAmount) String() string {
	digits := strconv.FormatInt(a.units, 10)
	if a.places == 0 {
		return digits
	}
	if len(digits) <= a.places {
		digits = strings.Repeat("0", a.places-len(digits)+1) + digits
	}
	return digits[:len(digits)-a.places] + "." + digits[len(digits)-a.places:]
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

// ParseBalance turns an opening balance (seed file, docs/contract.md §8) into
// minor units of cur. Same grammar and precision rule as a transfer's
// amount, but zero is allowed and there is no transfer limit.
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
