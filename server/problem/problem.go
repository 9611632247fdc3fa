// Package problem is the HTTP layer's one error path: the table from error
// code to status, fixed sentence and Retry-After, and the one writer that
// turns any error into an RFC 9457 problem body. The server's middleware
// and handlers, Echo's router, the build handlers and the answers net/http
// writes on its own all go through it.
package problem

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// Refusals only the HTTP layer decides. Middleware returns them like any
// other error; they meet the domain's errors in the one table below.
var (
	Unauthorized        = &facade.Error{Code: "unauthorized"}
	AuthThrottled       = &facade.Error{Code: "auth_throttled"}
	XSRF                = &facade.Error{Code: "xsrf"}
	OriginRefused       = &facade.Error{Code: "origin_refused"}
	RouteNotFound       = &facade.Error{Code: "route_not_found"}
	MethodNotAllowed    = &facade.Error{Code: "method_not_allowed"}
	NotAcceptable       = &facade.Error{Code: "not_acceptable"}
	UnsupportedMedia    = &facade.Error{Code: "unsupported_media"}
	BodyTooLarge        = &facade.Error{Code: "body_too_large"}
	HeadersTooLarge     = &facade.Error{Code: "headers_too_large"}
	MalformedRequest    = &facade.Error{Code: "malformed_request"}
	NotImplemented      = &facade.Error{Code: "not_implemented"}
	VersionNotSupported = &facade.Error{Code: "version_not_supported"}
	ExpectUnsupported   = &facade.Error{Code: "expect_unsupported"}
	RateLimited         = &facade.Error{Code: "rate_limited"}
)

// problemKind is what a client sees for one code: the status, the fixed
// sentence of the body, and the Retry-After sent when the error itself
// does not carry one.
type problemKind struct {
	status     int
	detail     string
	retryAfter time.Duration
}

// problems is the one table from error code to response. Every error
// response of the service, including the ones net/http would write itself,
// is built from a line here (the body: docs/contract.md §2, "Errors";
// the statuses each route answers: api/openapi.json).
var problems = map[facade.Code]problemKind{
	facade.ErrInternal.Code: {500, "The server could not complete the request.", 0},

	facade.ErrBadIdentifier.Code:     {400, "An identifier in the path is malformed.", 0},
	facade.ErrBadGrade.Code:          {400, "The grade must be one of A+ A A- B+ B B- C+ C C- D+ D D- F.", 0},
	facade.ErrBadAmount.Code:         {400, "The amount is malformed, not positive, too precise for the currency, or over the limit.", 0},
	facade.ErrBadParameter.Code:      {400, "A query parameter is malformed or out of range.", 0},
	facade.ErrBadIdempotencyKey.Code: {400, "The Idempotency-Key header must be 1 to 255 characters.", 0},
	facade.ErrBadIfMatch.Code:        {400, "The If-Match header is malformed.", 0},
	facade.ErrMalformedBody.Code:     {400, "The request body is not valid JSON for this endpoint.", 0},
	facade.ErrUnknownCurrency.Code:   {400, "The currency is not a supported ISO 4217 code.", 0},
	MalformedRequest.Code:            {400, "The request is malformed.", 0},

	facade.ErrFilterLabel.Code:            {400, "The label parameter is malformed or not supported on this endpoint.", 0},
	facade.ErrFilterIssueKey.Code:         {400, "The issueKey parameter is malformed or not supported on this endpoint.", 0},
	facade.ErrFilterBuildState.Code:       {400, "The buildstate parameter must be Successful, Failed or Unknown, on a result list.", 0},
	facade.ErrFilterIncludeAllStates.Code: {400, "The includeAllStates parameter must be true or false, on a result list.", 0},
	facade.ErrFilterContinuable.Code:      {400, "The continuable parameter must be true or false, on a result list.", 0},
	facade.ErrFilterCloverEnabled.Code:    {400, "The cloverEnabled parameter must be true or false, on /result or /result/{projectKey}.", 0},
	facade.ErrFilterFavourite.Code:        {400, "The favourite parameter is not supported: Bamboo favourites belong to the facade's service account, not to you.", 0},

	Unauthorized.Code: {401, "A valid bearer token is required.", 0},

	facade.ErrForbidden.Code: {403, "You are not permitted to perform this operation.", 0},
	XSRF.Code:                {403, "A valid X-XSRF-TOKEN header is required for this request.", 0},
	OriginRefused.Code:       {403, "Requests from this origin are not permitted.", 0},

	facade.ErrNotFound.Code: {404, "The requested resource does not exist.", 0},
	RouteNotFound.Code:      {404, "No such endpoint.", 0},

	MethodNotAllowed.Code:              {405, "This method is not allowed on this endpoint.", 0},
	NotAcceptable.Code:                 {406, "This endpoint only produces application/json.", 0},
	facade.ErrGradeExists.Code:         {409, "A grade for this student and subject already exists.", 0},
	facade.ErrVersionMismatch.Code:     {412, "The resource has changed; If-Match does not match its current version.", 0},
	BodyTooLarge.Code:                  {413, "The request body exceeds 16 KiB.", 0},
	UnsupportedMedia.Code:              {415, "The request body must be application/json.", 0},
	facade.ErrRangeNotSatisfiable.Code: {416, "The requested range starts beyond the end of the file; Content-Range gives its size.", 0},
	ExpectUnsupported.Code:             {417, "The only Expect header supported is 100-continue.", 0},

	facade.ErrSameAccount.Code:       {422, "A transfer needs two different accounts.", 0},
	facade.ErrInsufficientFunds.Code: {422, "The source account has insufficient funds.", 0},
	facade.ErrCurrencyMismatch.Code:  {422, "The accounts hold different currencies.", 0},
	facade.ErrIdempotencyReuse.Code:  {422, "This Idempotency-Key was already used for a different request.", 0},
	facade.ErrBalanceLimit.Code:      {422, "The destination account cannot hold this balance.", 0},

	RateLimited.Code:   {429, "Too many requests; retry later.", time.Second},
	AuthThrottled.Code: {429, "Too many failed authentications from this address; retry later.", time.Second},

	HeadersTooLarge.Code:     {431, "The request headers exceed 16 KiB.", 0},
	NotImplemented.Code:      {501, "The request's transfer encoding is not supported.", 0},
	VersionNotSupported.Code: {505, "Only HTTP/1.1 and HTTP/1.0 are supported.", 0},

	facade.ErrUpstreamBad.Code:         {502, "The build server returned an invalid response.", 0},
	facade.ErrStoreUnavailable.Code:    {503, "The data store is temporarily unavailable; retry later.", time.Second},
	facade.ErrUpstreamOpen.Code:        {503, "The build server is unavailable; retry later.", time.Second},
	facade.ErrBuildsNotConfigured.Code: {503, "Build results are not configured on this instance.", 0},
	facade.ErrUpstreamTimeout.Code:     {504, "The build server did not answer in time.", 0},
}

// echoRefusals are Echo's own errors (router, body limit) by status.
var echoRefusals = map[int]*facade.Error{
	http.StatusBadRequest:            MalformedRequest,
	http.StatusNotFound:              RouteNotFound,
	http.StatusMethodNotAllowed:      MethodNotAllowed,
	http.StatusNotAcceptable:         NotAcceptable,
	http.StatusRequestEntityTooLarge: BodyTooLarge,
	http.StatusUnsupportedMediaType:  UnsupportedMedia,
}

// body is an RFC 9457 problem.
type body struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
}

// classify finds err's line in the table. Anything it does not know is a
// 500: no text of err ever reaches a client.
func classify(err error) (facade.Code, problemKind, time.Duration) {
	var (
		fe      *facade.Error
		he      *echo.HTTPError
		tooBig  *http.MaxBytesError
		unknown = problems[facade.ErrInternal.Code]
	)
	switch {
	case errors.As(err, &fe):
	case errors.As(err, &tooBig):
		fe = BodyTooLarge
	case errors.As(err, &he) && echoRefusals[he.Code] != nil:
		fe = echoRefusals[he.Code]
	default:
		return facade.ErrInternal.Code, unknown, 0
	}
	kind, ok := problems[fe.Code]
	if !ok {
		return facade.ErrInternal.Code, unknown, 0
	}
	retry := kind.retryAfter
	if fe.RetryAfter > 0 {
		retry = fe.RetryAfter
	}
	return fe.Code, kind, retry
}

// Render is the one writer of error responses: it sets the headers an
// error carries on h and returns the status and body. Handler and the
// server's connection-level answers (server/answers.go) both use it.
func Render(h http.Header, err error, requestID string) (int, []byte) {
	_, kind, retry := classify(err)
	if retry > 0 {
		h.Set("Retry-After", strconv.Itoa(int((retry+time.Second-1)/time.Second)))
	}
	if kind.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer`)
	}
	h.Set(echo.HeaderContentType, "application/problem+json")
	b, _ := json.Marshal(body{
		Type:      "about:blank",
		Title:     http.StatusText(kind.status),
		Status:    kind.status,
		Detail:    kind.detail,
		RequestID: requestID,
	})
	return kind.status, b
}

// Handler is Echo's HTTPErrorHandler, through which every error a
// middleware, a handler or Echo's router returns is answered. The request
// id is the one already on the response (X-Request-ID). The cause is
// logged for 5xx; nothing from err's text reaches the client.
func Handler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		id := c.Response().Header().Get("X-Request-ID")
		if c.Response().Committed {
			log.Warn("error after response started", "request_id", id, "err", err.Error())
			return
		}
		status, b := Render(c.Response().Header(), err, id)
		if status >= 500 {
			log.Error("request failed", "request_id", id, "status", status,
				"code", string(facade.CodeOf(err)), "method", c.Request().Method, "path", c.Path(), "err", err.Error())
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		_ = c.Blob(status, "application/problem+json", b)
	}
}

// Status is the status err is answered with.
func Status(err error) int {
	_, kind, _ := classify(err)
	return kind.status
}
