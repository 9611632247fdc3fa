package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// problem is an RFC 9457 body. Every error response is one of these and its
// Detail is always a fixed sentence from facade's table.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
}

// statusOf maps the domain's error codes to HTTP statuses.
var statusOf = map[facade.Code]int{
	facade.EINTERNAL:      http.StatusInternalServerError,
	facade.EINVALID:       http.StatusBadRequest,
	facade.EFORBIDDEN:     http.StatusForbidden,
	facade.ENOTFOUND:      http.StatusNotFound,
	facade.ECONFLICT:      http.StatusConflict,
	facade.EPRECONDITION:  http.StatusPreconditionFailed,
	facade.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	facade.EBADGATEWAY:    http.StatusBadGateway,
	facade.EUNAVAILABLE:   http.StatusServiceUnavailable,
	facade.ETIMEOUT:       http.StatusGatewayTimeout,
}

// Echo's own errors (router, body limit) become fixed sentences too.
var echoDetails = map[int]string{
	http.StatusNotFound:              facade.DetailRouteNotFound,
	http.StatusMethodNotAllowed:      facade.DetailMethodNotAllowed,
	http.StatusRequestEntityTooLarge: facade.DetailBodyTooLarge,
	http.StatusUnsupportedMediaType:  facade.DetailUnsupportedMedia,
	http.StatusNotAcceptable:         facade.DetailNotAcceptable,
}

// handleError is Echo's HTTPErrorHandler: it writes a problem body and logs
// the cause. Nothing from err's text ever reaches the client.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		s.log.Warn("error after response started", "request_id", requestID(c), "err", err.Error())
		return
	}
	status, detail, retry := s.classify(err)
	if status >= 500 {
		s.log.Error("request failed", "request_id", requestID(c), "status", status,
			"method", c.Request().Method, "path", c.Path(), "err", errString(err))
	}
	writeProblem(c, status, detail, retry)
}

func (s *Server) classify(err error) (status int, detail string, retry time.Duration) {
	var fe *facade.Error
	if errors.As(err, &fe) {
		return statusOf[fe.Code], fe.Detail, fe.RetryAfter
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if d, ok := echoDetails[he.Code]; ok {
			return he.Code, d, 0
		}
	}
	return http.StatusInternalServerError, facade.DetailInternal, 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// writeProblem writes the problem body; it is also used by middleware that
// refuses a request before a handler runs.
func writeProblem(c echo.Context, status int, detail string, retry time.Duration) {
	h := c.Response().Header()
	if retry > 0 {
		secs := int((retry + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer`)
	}
	body, _ := json.Marshal(problem{
		Type:      "about:blank",
		Title:     http.StatusText(status),
		Status:    status,
		Detail:    detail,
		RequestID: requestID(c),
	})
	h.Set(echo.HeaderContentType, "application/problem+json")
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.Blob(status, "application/problem+json", body)
}

// refuse is a shorthand for middleware: write the problem and stop the chain.
func refuse(c echo.Context, status int, detail string) error {
	writeProblem(c, status, detail, 0)
	return nil
}
