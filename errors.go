package facade

import (
	"errors"
	"time"
)

// Code names what went wrong, in domain words ("insufficient_funds"). It is
// the error's identity: callers compare with errors.Is against the sentinels
// below, metrics label outcomes with it, and the HTTP layer alone (one table
// in server/problem.go) turns it into a status and the sentence a client
// reads. Editing a sentence therefore changes neither behaviour nor metrics.
type Code string

// Error is a failure the service can describe to a client by its Code. Err
// is the cause, for logs only: nothing of its text reaches a client.
type Error struct {
	Code       Code
	RetryAfter time.Duration // how long a client should wait; zero: the HTTP table decides
	Err        error
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
	return &Error{Code: kind.Code, RetryAfter: kind.RetryAfter, Err: cause}
}

// CodeOf returns the code of err, CodeInternal when err is not an *Error.
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
)

// Codes lists every code above, for the HTTP table's completeness test.
func Codes() []Code {
	all := []*Error{
		ErrInternal, ErrBadIdentifier, ErrBadGrade, ErrBadAmount, ErrBadParameter,
		ErrBadIdempotencyKey, ErrBadIfMatch, ErrMalformedBody, ErrUnknownCurrency,
		ErrForbidden, ErrNotFound, ErrGradeExists, ErrVersionMismatch,
		ErrSameAccount, ErrInsufficientFunds, ErrCurrencyMismatch, ErrIdempotencyReuse,
		ErrBalanceLimit, ErrStoreUnavailable, ErrUpstreamBad, ErrUpstreamTimeout,
		ErrUpstreamOpen, ErrBuildsNotConfigured, ErrRangeNotSatisfiable,
		ErrFilterLabel, ErrFilterIssueKey, ErrFilterBuildState, ErrFilterIncludeAllStates,
		ErrFilterContinuable, ErrFilterCloverEnabled, ErrFilterFavourite,
	}
	codes := make([]Code, len(all))
	for i, e := range all {
		codes[i] = e.Code
	}
	return codes
}
