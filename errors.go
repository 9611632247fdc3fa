package facade

import (
	"errors"
	"time"
)

// Code names what went wrong, in domain words ("insufficient_funds"). It is
// the error's identity: callers compare with errors.Is against the sentinels
// below, metrics label outcomes with it, and the HTTP layer alone (one table
// in server/problem) turns it into a status, the sentence a client reads and
// the wire code (the same name with "-" for "_": "insufficient-funds",
// docs/contract.md §2). Editing a sentence therefore changes neither
// behaviour nor metrics.
type Code string

// Reason names which rule one input broke, within its Code: an amount is
// "malformed", "not_positive", "too_precise" or "over_limit". A client
// reads it in the problem body's errors list, beside the parameter.
type Reason string

// The reasons input checks give. The HTTP table (server/problem) holds the
// sentence of every (Code, Reason) pair a check can produce.
const (
	ReasonMalformed   Reason = "malformed"    // not in the parameter's grammar
	ReasonNotPositive Reason = "not_positive" // an amount of zero
	ReasonTooPrecise  Reason = "too_precise"  // more decimals than the currency has
	ReasonOverLimit   Reason = "over_limit"   // above the largest transfer
	ReasonUnquoted    Reason = "unquoted"     // an If-Match tag written without its quotes
	ReasonNotOnScale  Reason = "not_on_scale" // a grade that is not one of the scale's letters
	ReasonOutOfRange  Reason = "out_of_range" // a number outside what the parameter allows

	ReasonUnknownParameter Reason = "unknown_parameter" // a query parameter the route does not take
	ReasonRepeated         Reason = "repeated"          // a parameter given more than once
	ReasonNotFlag          Reason = "not_flag"          // a yes/no parameter that is not 1, true, 0 or false
	ReasonMissingColumn    Reason = "missing_column"    // a gradebook header without a needed column
	ReasonRepeatedColumn   Reason = "repeated_column"   // a gradebook header naming a column twice
)

// Invalid is one thing wrong in a request's input: the parameter (a path
// or query parameter, a header, a body field, named as the client wrote
// it) and the rule it broke.
type Invalid struct {
	Parameter string
	Reason    Reason
}

// Error is a failure the service can describe to a client by its Code. Err
// is the cause, for logs only: nothing of its text reaches a client.
type Error struct {
	Code       Code
	RetryAfter time.Duration // how long a client should wait; zero: the HTTP table decides
	Err        error
	// Invalid lists what was wrong in the input, for the input codes
	// (ErrBadAmount, ErrBadParameter, ...); nil for the others.
	Invalid []Invalid
}

func (e *Error) Error() string {
	if e.Err != nil {
		return string(e.Code) + ": " + e.Err.Error()
	}
	return string(e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) true for every *Error of that code,
// whatever its cause or Retry-After.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Wrap returns an error of kind's code that keeps cause for the logs.
func Wrap(kind *Error, cause error) *Error {
	return &Error{Code: kind.Code, RetryAfter: kind.RetryAfter, Err: cause, Invalid: kind.Invalid}
}

// Refuse returns an error of kind's code saying which rule parameter broke.
// errors.Is(err, kind) stays true.
func Refuse(kind *Error, parameter string, reason Reason) *Error {
	return &Error{Code: kind.Code, Invalid: []Invalid{{Parameter: parameter, Reason: reason}}}
}

// CodeOf returns the code of err, ErrInternal's when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrInternal.Code
}

// The errors domain packages return. Add one here (and its line in the HTTP
// table) rather than inventing an ad-hoc failure: the table's test fails for
// a code it does not know.
var (
	ErrInternal = &Error{Code: "internal"} // anything unexpected

	ErrBadIdentifier     = &Error{Code: "bad_identifier"}
	ErrBadGrade          = &Error{Code: "bad_grade"}
	ErrBadAmount         = &Error{Code: "bad_amount"}
	ErrBadParameter      = &Error{Code: "bad_parameter"}
	ErrBadIdempotencyKey = &Error{Code: "bad_idempotency_key"}
	ErrBadIfMatch        = &Error{Code: "bad_if_match"}
	ErrMalformedBody     = &Error{Code: "malformed_body"}
	ErrUnknownCurrency   = &Error{Code: "unknown_currency"}
	// ErrBadGradebook refuses a whole gradebook file that could be misread
	// (docs/contract.md §4): nothing of it is written.
	ErrBadGradebook = &Error{Code: "bad_gradebook"}

	// Authentication (401): why the bearer token was not accepted, one
	// code per cause so that a client knows whether to sign in again,
	// fix its clock, or ask for another kind of token.
	ErrTokenMissing         = &Error{Code: "token_missing"}
	ErrTokenMalformed       = &Error{Code: "token_malformed"}
	ErrTokenExpired         = &Error{Code: "token_expired"}
	ErrTokenNotYetValid     = &Error{Code: "token_not_yet_valid"}
	ErrTokenLifetimeTooLong = &Error{Code: "token_lifetime_too_long"}
	ErrTokenWrongIssuer     = &Error{Code: "token_wrong_issuer"}
	ErrTokenWrongAudience   = &Error{Code: "token_wrong_audience"}
	ErrTokenBadSignature    = &Error{Code: "token_bad_signature"}

	ErrForbidden = &Error{Code: "forbidden"}
	ErrNotFound  = &Error{Code: "not_found"}

	ErrGradeExists     = &Error{Code: "grade_exists"}
	ErrVersionMismatch = &Error{Code: "version_mismatch"}

	ErrSameAccount       = &Error{Code: "same_account"}
	ErrInsufficientFunds = &Error{Code: "insufficient_funds"}
	ErrCurrencyMismatch  = &Error{Code: "currency_mismatch"}
	ErrIdempotencyReuse  = &Error{Code: "idempotency_reuse"}
	ErrBalanceLimit      = &Error{Code: "balance_limit"}

	ErrStoreUnavailable    = &Error{Code: "store_unavailable"}
	ErrUpstreamBad         = &Error{Code: "upstream_bad"}
	ErrUpstreamTimeout     = &Error{Code: "upstream_timeout"}
	ErrUpstreamOpen        = &Error{Code: "upstream_open"}
	ErrBuildsNotConfigured = &Error{Code: "builds_not_configured"}
	// ErrRangeNotSatisfiable: the Range asked for starts beyond the end of
	// the artifact (the upstream's 416).
	ErrRangeNotSatisfiable = &Error{Code: "range_not_satisfiable"}

	// Refused query parameters of the build routes (Bamboo's result-list
	// filters), each its own code so that a client learns which one.
	ErrFilterLabel            = &Error{Code: "bad_filter_label"}
	ErrFilterIssueKey         = &Error{Code: "bad_filter_issue_key"}
	ErrFilterBuildState       = &Error{Code: "bad_filter_buildstate"}
	ErrFilterIncludeAllStates = &Error{Code: "bad_filter_include_all_states"}
	ErrFilterContinuable      = &Error{Code: "bad_filter_continuable"}
	ErrFilterCloverEnabled    = &Error{Code: "bad_filter_clover_enabled"}
	ErrFilterFavourite        = &Error{Code: "bad_filter_favourite"}
	// ErrFavouritesFull: the caller already keeps the most favourite plans
	// one person may (favourites.MaxPerPerson).
	ErrFavouritesFull = &Error{Code: "favourites_full"}
)

// Codes lists every code above, for the HTTP table's completeness test.
func Codes() []Code {
	all := []*Error{
		ErrInternal, ErrBadIdentifier, ErrBadGrade, ErrBadAmount, ErrBadParameter,
		ErrBadIdempotencyKey, ErrBadIfMatch, ErrMalformedBody, ErrUnknownCurrency, ErrBadGradebook,
		ErrTokenMissing, ErrTokenMalformed, ErrTokenExpired, ErrTokenNotYetValid,
		ErrTokenLifetimeTooLong, ErrTokenWrongIssuer, ErrTokenWrongAudience, ErrTokenBadSignature,
		ErrForbidden, ErrNotFound, ErrGradeExists, ErrVersionMismatch,
		ErrSameAccount, ErrInsufficientFunds, ErrCurrencyMismatch, ErrIdempotencyReuse,
		ErrBalanceLimit, ErrStoreUnavailable, ErrUpstreamBad, ErrUpstreamTimeout,
		ErrUpstreamOpen, ErrBuildsNotConfigured, ErrRangeNotSatisfiable,
		ErrFilterLabel, ErrFilterIssueKey, ErrFilterBuildState, ErrFilterIncludeAllStates,
		ErrFilterContinuable, ErrFilterCloverEnabled, ErrFilterFavourite, ErrFavouritesFull,
	}
	codes := make([]Code, len(all))
	for i, e := range all {
		codes[i] = e.Code
	}
	return codes
}
