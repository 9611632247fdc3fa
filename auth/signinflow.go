package auth

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
)

// flow is a sign-in in progress, kept in its own short-lived sealed
// cookie bound to the browser that started it and named after its state
// (flowCookie): the callback accepts only a state this browser was sent
// with (login CSRF), several sign-ins may be in progress at once (tabs),
// and the nonce and PKCE verifier never leave the service unsealed.
type flow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	ReturnTo string `json:"return_to"`
	Expires  int64  `json:"exp"`
}

// maxFlows bounds the sign-ins in progress one browser keeps: each is a
// cookie of ~300 bytes sent with every request, and a page that started
// sign-ins in a loop must not push the headers past their limit.
const maxFlows = 5

// flowCookie is the name (before any __Host- prefix) of the sign-in
// cookie for state: the first 128 bits of the state, so a callback finds
// its own flow and no other.
func flowCookie(state string) string {
	if len(state) > 22 {
		state = state[:22]
	}
	return flowName + "-" + state
}

// startFlow seals f into its cookie.
func (s *Sessions) startFlow(f flow) (*http.Cookie, error) {
	f.Expires = s.now().Add(flowLifetime).Unix()
	v, err := securecookie.EncodeMulti(flowName, f, s.codecs...)
	if err != nil {
		return nil, err
	}
	return s.cookie(flowCookie(f.State), v, flowLifetime, true), nil
}

// oldFlows are the cookies that remove the request's oldest sign-ins in
// progress, so that with the one being started at most maxFlows remain.
func (s *Sessions) oldFlows(r *http.Request) []*http.Cookie {
	type held struct {
		name string
		exp  int64
	}
	var flows []held
	prefix := s.cookieName(flowName + "-")
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, prefix) {
			continue
		}
		var f flow
		_ = securecookie.DecodeMulti(flowName, c.Value, &f, s.codecs...) // unreadable: oldest
		flows = append(flows, held{c.Name, f.Expires})
	}
	if len(flows) < maxFlows {
		return nil
	}
	slices.SortFunc(flows, func(a, b held) int { return cmp.Compare(a.exp, b.exp) })
	var out []*http.Cookie
	for _, f := range flows[:len(flows)-maxFlows+1] {
		c := s.cookie("", "", -1, true)
		c.Name = f.name
		out = append(out, c)
	}
	return out
}

// Why a callback found no usable sign-in of this browser: each has its
// own words on the page a person sees (SignInFailure).
var (
	errNoFlow      = errors.New("no sign-in in progress in this browser for this state")
	errFlowExpired = errors.New("the sign-in took too long")
)

// takeFlow opens the request's sign-in cookie for state and returns the
// cookie that removes it: a flow is used once, whatever the outcome.
func (s *Sessions) takeFlow(r *http.Request, state string) (flow, []*http.Cookie, error) {
	if state == "" {
		return flow{}, nil, errNoFlow
	}
	name := flowCookie(state)
	c, err := r.Cookie(s.cookieName(name))
	if err != nil {
		return flow{}, nil, errNoFlow
	}
	used := []*http.Cookie{s.cookie(name, "", -1, true)}
	var f flow
	if err := securecookie.DecodeMulti(flowName, c.Value, &f, s.codecs...); err != nil {
		return flow{}, used, errNoFlow
	}
	if !s.now().Before(time.Unix(f.Expires, 0)) {
		return flow{}, used, errFlowExpired
	}
	if !equal(f.State, state) {
		return flow{}, used, errors.New("state does not match this browser's sign-in")
	}
	return f, used, nil
}
