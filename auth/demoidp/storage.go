package demoidp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is op.Storage in memory: pending sign-ins, codes, access tokens.
type storage struct {
	mu         sync.Mutex
	people     map[string]Person
	order      []string
	clients    map[string]*client
	requests   map[string]*authRequest
	codes      map[string]string // code -> request id
	tokens     map[string]*token
	keys       // the signing key and the key set
	notOffered // refresh tokens, introspection, JWT profile grants
	now        func() time.Time
}

// keys is the storage's part that signs: its one RSA key.
type keys struct{ key signingKey }

// notOffered is the storage's part this provider does not offer (refresh
// tokens, introspection, JWT profile grants), each refused.
type notOffered struct{}

// maxPending bounds what strangers can make the demo keep: sign-ins
// started and never finished.
const maxPending = 10000

func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if slices.Contains(r.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired() // every sign-in here asks who you are
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) >= maxPending {
		s.requests, s.codes = map[string]*authRequest{}, map[string]string{}
	}
	req := &authRequest{id: randomHex(16), created: s.now(), r: *r}
	s.requests[req.id] = req
	return req, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req, ok := s.requests[id]; ok {
		return req, nil
	}
	return nil, errors.New("no such sign-in")
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("code unknown, used or expired")
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest runs once the code is exchanged: the code goes with
// it, so a replayed code finds nothing.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := ""
	if ar, ok := r.(*authRequest); ok {
		clientID = ar.r.ClientID
	}
	t := &token{id: randomHex(16), client: clientID, subject: r.GetSubject(), expires: s.now().Add(5 * time.Minute)}
	s.tokens[t.id] = t
	return t.id, t.expires, nil
}

var errNoRefresh = errors.New("refresh tokens are not offered")

func (notOffered) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNoRefresh
}

func (notOffered) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (notOffered) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// TerminateSession is the end session endpoint's work: this provider keeps
// no sign-in session of its own (every sign-in asks), so it revokes the
// person's access tokens for that client.
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.client == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[tokenOrID]; ok && t.client == clientID {
		delete(s.tokens, tokenOrID)
	}
	return nil
}

func (k *keys) SigningKey(context.Context) (op.SigningKey, error) { return &k.key, nil }

func (*keys) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (k *keys) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{k.key}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return nil, errors.New("unknown client")
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.clients[id]
	if !ok || c.Secret == "" || c.Secret != secret {
		return errors.New("client authentication failed")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil // SetUserinfoFromRequest does it
}

// SetUserinfoFromRequest fills the ID token's claims: profile and email as
// scoped, role and groups always (they are what the relying party needs).
func (s *storage) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, r op.IDTokenRequest, scopes []string) error {
	return s.userinfo(ui, r.GetSubject(), scopes)
}

func (s *storage) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || t.subject != subject || s.now().After(t.expires) {
		return errors.New("token unknown or expired")
	}
	return s.userinfo(ui, subject, []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail})
}

func (s *storage) userinfo(ui *oidc.UserInfo, subject string, scopes []string) error {
	p, ok := s.people[subject]
	if !ok {
		return errors.New("unknown person")
	}
	ui.Subject = p.Subject
	if slices.Contains(scopes, oidc.ScopeProfile) {
		ui.PreferredUsername, ui.Name = p.Username, p.Name
	}
	if slices.Contains(scopes, oidc.ScopeEmail) {
		ui.Email, ui.EmailVerified = p.Username+"@demo.invalid", true
	}
	if p.Role != "" {
		ui.AppendClaims("role", p.Role)
	}
	ui.AppendClaims("groups", append([]string{}, p.Groups...))
	return nil
}

func (notOffered) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered")
}

func (notOffered) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (notOffered) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (notOffered) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (notOffered) Health(context.Context) error { return nil }

// signIn marks a pending sign-in as done by person.
func (s *storage) signIn(id, person string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.requests[id]
	if _, known := s.people[person]; !ok || !known {
		return errors.New("unknown sign-in or person")
	}
	req.subject, req.done, req.authTime = person, true, s.now()
	return nil
}

type token struct {
	id, client, subject string
	expires             time.Time
}
