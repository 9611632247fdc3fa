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
	ReasonNotPositive Reason = "not_positive" // an amount of zero, or negative
	ReasonLeadingZero Reason = "leading_zero" // an amount written with leading zeros (007)
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
	ReasonNotIssued        Reason = "not_issued"        // a cursor this service did not give this caller for this list
	ReasonNotDate          Reason = "not_date"          // not an RFC 3339 date or instant
	ReasonReversed         Reason = "reversed"          // a range whose start is after its end
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

// RetryLater returns an error of kind's code that tells the client to wait
// after before retrying (its Retry-After), keeping cause for the logs. It is
// the one place such an error is built: the wait is rounded up to whole
// seconds, at least one, as the header carries it (a client told 0 would
// retry at once, and a wait in fractions is sent as the next second).
func RetryLater(kind *Error, after time.Duration, cause error) *Error {
	seconds := max((after+time.Second-1)/time.Second, 1)
	return &Error{Code: kind.Code, RetryAfter: seconds * time.Second, Err: cause}
}

// Refuse returns an error of kind's code saying which rule parameter broke.
// errors.Is(err, kind) stays true.
func Refuse(kind *Error, parameter string, reason Reason) *Error {
	return &Error{Code: kind.Code, Invalid: []Invalid{{Parameter: parameter, Reason: reason}}}
}

// RefuseEach returns an error of kind's code saying that each of
// parameters broke reason (a range whose from is after its to names both).
func RefuseEach(kind *Error, reason Reason, parameters ...string) *Error {
	e := &Error{Code: kind.Code, Invalid: make([]Invalid, len(parameters))}
	for i, p := range parameters {
		e.Invalid[i] = Invalid{Parameter: p, Reason: reason}
	}
	return e
}

// CodeOf returns the code of err, ErrInternal's when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrInternal.Code
}

// Every refusal of the service, declared here and nowhere else (a test
// refuses an Error with a code of its own anywhere in the module), each by
// newCode so that Codes lists it. Adding one: its sentinel here, its entry
// in the HTTP table (server/problem: status, sentences, advice, the page's
// words) and its route families, then go generate ./api ./web (the
// OpenAPI document's code lists, the page's words); each step has a test
// that fails without it.
var (
	ErrInternal = newCode("internal") // anything unexpected

	ErrBadIdentifier     = newCode("bad_identifier")
	ErrBadGrade          = newCode("bad_grade")
	ErrBadAmount         = newCode("bad_amount")
	ErrBadParameter      = newCode("bad_parameter")
	ErrBadIdempotencyKey = newCode("bad_idempotency_key")
	ErrBadIfMatch        = newCode("bad_if_match")
	ErrMalformedBody     = newCode("malformed_body")
	ErrUnknownCurrency   = newCode("unknown_currency")
	// ErrBadGradebook refuses a whole gradebook file that could be misread
	// (docs/contract.md §4): nothing of it is written.
	ErrBadGradebook = newCode("bad_gradebook")
	// ErrBadReference: a transfer's reference that is empty, too long or
	// holds a control character.
	ErrBadReference = newCode("bad_reference")

	// Authentication (401): why the bearer token was not accepted, one
	// code per cause so that a client knows whether to sign in again,
	// fix its clock, or ask for another kind of token.
	ErrTokenMissing         = newCode("token_missing")
	ErrTokenMalformed       = newCode("token_malformed")
	ErrTokenExpired         = newCode("token_expired")
	ErrTokenNotYetValid     = newCode("token_not_yet_valid")
	ErrTokenLifetimeTooLong = newCode("token_lifetime_too_long")
	ErrTokenWrongIssuer     = newCode("token_wrong_issuer")
	ErrTokenWrongAudience   = newCode("token_wrong_audience")
	ErrTokenBadSignature    = newCode("token_bad_signature")

	ErrForbidden = newCode("forbidden")
	// ErrDestinationRefused: the caller may send from the source account
	// but not pay into the destination (no transfer or receive on it),
	// decided from the ids alone, like every refusal.
	ErrDestinationRefused = newCode("destination_refused")
	ErrNotFound           = newCode("not_found")

	ErrGradeExists     = newCode("grade_exists")
	ErrVersionMismatch = newCode("version_mismatch")

	ErrSameAccount       = newCode("same_account")
	ErrInsufficientFunds = newCode("insufficient_funds")
	ErrCurrencyMismatch  = newCode("currency_mismatch")
	ErrIdempotencyReuse  = newCode("idempotency_reuse")
	ErrBalanceLimit      = newCode("balance_limit")

	ErrStoreUnavailable    = newCode("store_unavailable")
	ErrUpstreamBad         = newCode("upstream_bad")
	ErrUpstreamTimeout     = newCode("upstream_timeout")
	ErrUpstreamOpen        = newCode("upstream_open")
	ErrBuildsNotConfigured = newCode("builds_not_configured")
	// ErrRangeNotSatisfiable: the Range asked for starts beyond the end of
	// the artifact (the upstream's 416).
	ErrRangeNotSatisfiable = newCode("range_not_satisfiable")

	// Refused query parameters of the build routes (Bamboo's result-list
	// filters), each its own code so that a client learns which one.
	ErrFilterLabel            = newCode("bad_filter_label")
	ErrFilterIssueKey         = newCode("bad_filter_issue_key")
	ErrFilterBuildState       = newCode("bad_filter_buildstate")
	ErrFilterIncludeAllStates = newCode("bad_filter_include_all_states")
	ErrFilterContinuable      = newCode("bad_filter_continuable")
	ErrFilterCloverEnabled    = newCode("bad_filter_clover_enabled")
	ErrFilterFavourite        = newCode("bad_filter_favourite")
	// ErrFavouritesFull: the caller already keeps the most favourite plans
	// one person may (favourites.MaxPerPerson).
	ErrFavouritesFull = newCode("favourites_full")

	// Browser sessions and sign-in (package auth).
	//
	// ErrSessionExpired: the session cookie was sealed by us but its time
	// is over; the page signs the person in again.
	ErrSessionExpired = newCode("session_expired")
	// ErrSessionInvalid: a session cookie that does not open (tampered,
	// forged, sealed by a key no longer configured).
	ErrSessionInvalid = newCode("session_invalid")
	// ErrSignInFailed: a callback that does not complete a sign-in this
	// browser started (state, nonce, code, ID token: any check).
	ErrSignInFailed = newCode("signin_failed")
	// ErrXSRF: the anti-forgery header is missing, malformed, or not the
	// one bound to the session (auth.CheckXSRF).
	ErrXSRF = newCode("xsrf")

	// A gradebook row's refusals (its code in the upload's answer).
	//
	// ErrDuplicateStudent refuses every row of a student named on more
	// than one line: which of them was meant cannot be known, so none is
	// applied (never first-wins; docs/contract.md §4).
	ErrDuplicateStudent = newCode("duplicate_student")
	// ErrNotInClass refuses a row whose student is not one of the class's
	// students the caller may view.
	ErrNotInClass = newCode("not_in_class")
	// ErrGradeNotPosted: a student's grade exists but no version of it
	// was released to the student yet (the class's posting policy is
	// manual): answered to the student only, as a 404.
	ErrGradeNotPosted = newCode("grade_not_posted")

	// Refusals only the HTTP layer decides (server): of the request as
	// sent, before any domain package sees it.
	ErrAuthThrottled       = newCode("auth_throttled")
	ErrOriginRefused       = newCode("origin_refused")
	ErrRouteNotFound       = newCode("route_not_found")
	ErrMethodNotAllowed    = newCode("method_not_allowed")
	ErrNotAcceptable       = newCode("not_acceptable")
	ErrUnsupportedMedia    = newCode("unsupported_media")
	ErrBodyTooLarge        = newCode("body_too_large")
	ErrHeadersTooLarge     = newCode("headers_too_large")
	ErrMalformedRequest    = newCode("malformed_request")
	ErrNotImplemented      = newCode("not_implemented")
	ErrVersionNotSupported = newCode("version_not_supported")
	ErrExpectUnsupported   = newCode("expect_unsupported")
	ErrRateLimited         = newCode("rate_limited")
)

// declared holds every sentinel newCode made, in the order of the
// declarations above (Go initializes them in that order).
var declared []*Error

// newCode declares the sentinel of code c.
func newCode(c Code) *Error {
	e := &Error{Code: c}
	declared = append(declared, e)
	return e
}

// Codes lists every code declared above, in order: what the HTTP table
// must describe, and the completeness tests check.
func Codes() []Code {
	codes := make([]Code, len(declared))
	for i, e := range declared {
		codes[i] = e.Code
	}
	return codes
}
