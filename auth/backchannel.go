package auth

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// BackchannelLogoutPath is where the provider ends sessions server to
// server (OpenID Connect Back-Channel Logout 1.0).
const BackchannelLogoutPath = "/auth/backchannel-logout"

// backchannelEvent is the member of a logout token's "events" claim that
// makes it one (Back-Channel Logout 1.0 §2.4).
const backchannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// Bounds on a logout token's age: issued at most logoutMaxAge ago and not
// ahead of this clock by more than the leeway. A jti is remembered for
// longer than a token may be accepted, so a replay within its life is
// always seen.
const (
	logoutMaxAge = 5 * time.Minute
	logoutLeeway = time.Minute
	jtiMemory    = logoutMaxAge + 2*logoutLeeway
)

// ErrLogoutToken is a back-channel logout request that is not a valid
// logout token (any reason): 400 {"error": "invalid_request"}, and
// nothing ends. Wrapped with the reason, for the log only.
var ErrLogoutToken = errors.New("invalid logout token")

func logoutRefusal(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrLogoutToken}, args...)...)
}

// BackchannelLogout takes the provider's POST to BackchannelLogoutPath:
// the logout_token form field, verified as Back-Channel Logout 1.0 §2.6
// says (signature with the provider's keys, iss, aud = this client, iat
// recent, the back-channel-logout event, no nonce, sid and/or sub, a jti
// accepted once across instances). It then ends the sessions it names on
// every instance and returns the principals whose sessions ended. An
// invalid token is ErrLogoutToken (wrapped) and ends nothing; a store that
// cannot be reached is facade.ErrStoreUnavailable, and the jti is then not
// spent, so the provider's retry works.
func (s *SignIn) BackchannelLogout(r *http.Request) ([]string, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return nil, logoutRefusal("content type %q", truncate(ct, 64))
	}
	if err := r.ParseForm(); err != nil {
		return nil, logoutRefusal("form: %v", err)
	}
	raw := r.PostForm.Get("logout_token")
	if raw == "" || len(raw) > maxTokenLen {
		return nil, logoutRefusal("no logout_token, or one longer than 12 KiB")
	}
	lt, err := s.verifyLogoutToken(r.Context(), raw)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	fresh, err := s.sessions.acceptOnce(ctx, s.cfg.Issuer, lt.JTI, jtiMemory)
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, logoutRefusal("jti already accepted (a replay)")
	}
	ended, err := s.sessions.EndProviderSessions(ctx, lt.Sub, lt.SID)
	if err != nil {
		s.sessions.forgetOnce(context.WithoutCancel(ctx), s.cfg.Issuer, lt.JTI)
		return ended, err
	}
	return ended, nil
}

// logoutToken is what a verified logout token names.
type logoutToken struct {
	Sub, SID, JTI string
}

func (s *SignIn) verifyLogoutToken(ctx context.Context, raw string) (logoutToken, error) {
	// Signature (the provider's keys, its algorithms), iss and aud; the
	// age is checked below from iat, since a logout token's exp is
	// optional in drafts providers still follow.
	tok, err := s.logoutVerifier.Verify(ctx, raw)
	if err != nil {
		return logoutToken{}, logoutRefusal("%v", err)
	}
	var c struct {
		Sub    string         `json:"sub"`
		SID    string         `json:"sid"`
		JTI    string         `json:"jti"`
		IAT    *float64       `json:"iat"`
		Nonce  *any           `json:"nonce"`
		Events map[string]any `json:"events"`
		AZP    *string        `json:"azp"`
	}
	if err := tok.Claims(&c); err != nil {
		return logoutToken{}, logoutRefusal("claims of the wrong type: %v", err)
	}
	now := s.cfg.Now()
	switch {
	case c.IAT == nil:
		return logoutToken{}, logoutRefusal("no iat")
	case time.Unix(int64(*c.IAT), 0).Before(now.Add(-logoutMaxAge)):
		return logoutToken{}, logoutRefusal("issued more than %s ago", logoutMaxAge)
	case time.Unix(int64(*c.IAT), 0).After(now.Add(logoutLeeway)):
		return logoutToken{}, logoutRefusal("issued in the future")
	case !tok.Expiry.IsZero() && !now.Before(tok.Expiry.Add(logoutLeeway)):
		return logoutToken{}, logoutRefusal("expired")
	case c.Nonce != nil:
		// §2.6 step 5: a nonce makes it an ID token, which must never be
		// taken for a logout token.
		return logoutToken{}, logoutRefusal("has a nonce")
	case c.Events == nil:
		return logoutToken{}, logoutRefusal("no events claim")
	case c.JTI == "" || len(c.JTI) > maxNameLen:
		return logoutToken{}, logoutRefusal("no usable jti")
	case c.Sub == "" && c.SID == "":
		return logoutToken{}, logoutRefusal("neither sub nor sid")
	case len(c.Sub) > maxNameLen || len(c.SID) > maxNameLen:
		return logoutToken{}, logoutRefusal("sub or sid too long")
	case len(tok.Audience) > 1 && (c.AZP == nil || *c.AZP != s.cfg.ClientID):
		return logoutToken{}, logoutRefusal("several audiences and the authorized party is not this client")
	}
	if ev, ok := c.Events[backchannelEvent].(map[string]any); !ok || ev == nil {
		return logoutToken{}, logoutRefusal("events has no back-channel logout event")
	}
	return logoutToken{Sub: c.Sub, SID: c.SID, JTI: c.JTI}, nil
}

// newLogoutVerifier checks a logout token's signature, issuer and
// audience as an ID token's; the age rules are verifyLogoutToken's.
func newLogoutVerifier(ctx context.Context, p *oidc.Provider, cfg SignInConfig) *oidc.IDTokenVerifier {
	return p.VerifierContext(ctx, &oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now, SkipExpiryCheck: true})
}
