package auth

import (
	"errors"

	"golang.org/x/oauth2"
)

// countProvider records one call to the provider (step "exchange" or
// "refresh") in facade_signin_provider_calls_total: "refused" when the
// provider answered with an OAuth error below 500 (a code or refresh
// token that is not valid: a person's or client's doing, not an outage),
// "error" for anything else that failed (the provider unreachable or
// failing, an answer without an ID token or one that does not verify).
// The errors are what the alert FacadeSignInProviderFailing watches
// (docs/operations.md).
func (s *SignIn) countProvider(step string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			result = "refused"
		}
	}
	s.cfg.Metrics.SignInProvider.WithLabelValues(step, result).Inc()
}
