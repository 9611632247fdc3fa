package facade

import (
	"errors"
	"time"
)

// Code classifies an error the way a client needs to see it. The HTTP layer
// maps each code to one status; nothing else about the error reaches a client.
type Code int

// Error codes the domain packages return, one per status. Statuses that
// only the HTTP layer decides (401, 405, 406, 413, 415, 429) have none.
const (
	EINTERNAL      Code = iota // 500: anything unexpected
	EINVALID                   // 400: malformed identifier, amount, grade, body...
	EFORBIDDEN                 // 403
	ENOTFOUND                  // 404
	ECONFLICT                  // 409
	EPRECONDITION              // 412
	EUNPROCESSABLE             // 422
	EBADGATEWAY                // 502
	EUNAVAILABLE               // 503
	ETIMEOUT                   // 504
)

// Error is a failure with a client-safe description. Detail must be one of the
// fixed sentences below, never text derived from another error: the HTTP layer
// prints Detail verbatim and logs Err.
type Error struct {
	Code       Code
	Detail     string
	RetryAfter time.Duration // for EUNAVAILABLE; zero means none
	Err        error         // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Detail + ": " + e.Err.Error()
	}
	return e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a fixed detail sentence.
func Errorf(code Code, detail string) *Error { return &Error{Code: code, Detail: detail} }

// Wrap builds an *Error that keeps cause for the logs.
func Wrap(code Code, detail string, cause error) *Error {
	return &Error{Code: code, Detail: detail, Err: cause}
}

// ErrorCode returns the code of err, EINTERNAL when err is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// The fixed table of detail sentences (SPEC section 2). Packages must use
// these and may add new constants here, never ad-hoc strings.
const (
	DetailInternal            = "The server could not complete the request."
	DetailUnauthorized        = "A valid bearer token is required."
	DetailForbidden           = "You are not permitted to perform this operation."
	DetailXSRF                = "A valid X-XSRF-TOKEN header is required for this request."
	DetailOriginRefused       = "Requests from this origin are not permitted."
	DetailNotFound            = "The requested resource does not exist."
	DetailRouteNotFound       = "No such endpoint."
	DetailMethodNotAllowed    = "This method is not allowed on this endpoint."
	DetailNotAcceptable       = "This endpoint only produces application/json."
	DetailUnsupportedMedia    = "The request body must be application/json."
	DetailBodyTooLarge        = "The request body exceeds 16 KiB."
	DetailMalformedBody       = "The request body is not valid JSON for this endpoint."
	DetailBadIdentifier       = "An identifier in the path is malformed."
	DetailBadGrade            = "The grade must be one of A+ A A- B+ B B- C+ C C- D+ D D- F."
	DetailBadAmount           = "The amount is malformed, not positive, too precise for the currency, or over the limit."
	DetailBadParameter        = "A query parameter is malformed or out of range."
	DetailBadIdempotencyKey   = "The Idempotency-Key header must be 1 to 255 characters."
	DetailBadIfMatch          = "The If-Match header is malformed."
	DetailGradeExists         = "A grade for this student and subject already exists."
	DetailVersionMismatch     = "The resource has changed; If-Match does not match its current version."
	DetailSameAccount         = "A transfer needs two different accounts."
	DetailInsufficientFunds   = "The source account has insufficient funds."
	DetailCurrencyMismatch    = "The accounts hold different currencies."
	DetailIdempotencyReuse    = "This Idempotency-Key was already used for a different request."
	DetailRateLimited         = "Too many requests; retry later."
	DetailStoreUnavailable    = "The data store is temporarily unavailable; retry later."
	DetailUpstreamBad         = "The build server returned an invalid response."
	DetailUpstreamTimeout     = "The build server did not answer in time."
	DetailUpstreamOpen        = "The build server is unavailable; retry later."
	DetailBuildsNotConfigured = "Build results are not configured on this instance."
	DetailUnknownCurrency     = "The currency is not a supported ISO 4217 code."
	DetailBalanceLimit        = "The destination account cannot hold this balance."
)
