package problem

import (
	"cmp"
	"slices"

	"github.com/facade-dev/facade"
)

// Family is a group of routes that may answer the same error codes: the
// OpenAPI document's components.responses.Problem<Name>, whose code enum
// and description `go generate ./api` writes from this list and the table
// (tools/gencodes).
type Family struct {
	Name  string        // Problem<Name> in the OpenAPI document
	About string        // what the routes do, the start of the description
	Codes []facade.Code // every code, sorted by status, then by wire name
}

// The refusals of the checks many routes share, in the order they run
// (docs/contract.md §2, "Rules for every request").
var (
	// everywhere: the server's answers to a request it cannot read, and
	// the unexpected failure; every route, public ones included.
	everywhere = []*facade.Error{facade.ErrMalformedRequest, facade.ErrExpectUnsupported,
		facade.ErrHeadersTooLarge, facade.ErrInternal, facade.ErrNotImplemented, facade.ErrVersionNotSupported}
	// signedIn: the token or session, and the rate limits.
	signedIn = []*facade.Error{facade.ErrTokenMissing, facade.ErrTokenMalformed, facade.ErrTokenExpired,
		facade.ErrTokenNotYetValid, facade.ErrTokenLifetimeTooLong, facade.ErrTokenWrongIssuer,
		facade.ErrTokenWrongAudience, facade.ErrTokenBadSignature, facade.ErrSessionExpired,
		facade.ErrSessionInvalid, facade.ErrAuthThrottled, facade.ErrRateLimited}
	// jsonAPI: the JSON routes' anti-forgery, Accept and size checks.
	jsonAPI = []*facade.Error{facade.ErrXSRF, facade.ErrNotAcceptable, facade.ErrBodyTooLarge}
	// dataRead: reading one of the service's own records.
	dataRead = []*facade.Error{facade.ErrBadIdentifier, facade.ErrBadParameter, facade.ErrForbidden,
		facade.ErrNotFound, facade.ErrStoreUnavailable}
	// upstream: the build server behind the Bamboo routes.
	upstream = []*facade.Error{facade.ErrUpstreamBad, facade.ErrUpstreamTimeout, facade.ErrUpstreamOpen,
		facade.ErrBuildsNotConfigured}
)

// families lists every route family, in the document's order. A new code
// goes into the families whose routes can answer it; a route's test that
// provokes a code its family lacks fails (the server's tests validate
// every answer against the document).
var families = []struct {
	name, about string
	codes       [][]*facade.Error
}{
	{"GradeRead", "A student's grade or its history", [][]*facade.Error{signedIn, jsonAPI, dataRead, {facade.ErrGradeNotPosted}}},
	{"GradeWrite", "Recording or changing a grade", [][]*facade.Error{signedIn, jsonAPI, {
		facade.ErrBadGrade, facade.ErrBadIdentifier, facade.ErrBadIfMatch, facade.ErrMalformedBody,
		facade.ErrForbidden, facade.ErrOriginRefused, facade.ErrNotFound, facade.ErrGradeExists,
		facade.ErrVersionMismatch, facade.ErrUnsupportedMedia, facade.ErrStoreUnavailable}}},
	{"ClassList", "The caller's classes", [][]*facade.Error{signedIn, jsonAPI}},
	{"ClassGrades", "A class's grades or gradebook", [][]*facade.Error{signedIn, jsonAPI, dataRead}},
	{"GradebookUpload", "A gradebook upload", [][]*facade.Error{signedIn, jsonAPI, dataRead, {facade.ErrBadGradebook,
		facade.ErrMalformedBody, facade.ErrOriginRefused, facade.ErrUnsupportedMedia}}},
	{"Posting", "A class's posting policy or its summary", [][]*facade.Error{signedIn, jsonAPI, dataRead}},
	{"PostingWrite", "Changing a class's posting policy, or posting its grades", [][]*facade.Error{signedIn, jsonAPI, {
		facade.ErrBadIdentifier, facade.ErrBadParameter, facade.ErrMalformedBody, facade.ErrUnsupportedMedia,
		facade.ErrForbidden, facade.ErrOriginRefused, facade.ErrNotInClass, facade.ErrStoreUnavailable}}},
	{"AccountRead", "The caller's accounts, an account, its balance or statement", [][]*facade.Error{signedIn, jsonAPI, dataRead}},
	{"Transfer", "A transfer", [][]*facade.Error{signedIn, jsonAPI, {
		facade.ErrBadAmount, facade.ErrBadIdempotencyKey, facade.ErrBadIdentifier, facade.ErrBadReference,
		facade.ErrMalformedBody, facade.ErrUnsupportedMedia, facade.ErrForbidden, facade.ErrDestinationRefused,
		facade.ErrOriginRefused, facade.ErrNotFound, facade.ErrBalanceLimit, facade.ErrCurrencyMismatch,
		facade.ErrIdempotencyReuse, facade.ErrInsufficientFunds, facade.ErrSameAccount, facade.ErrStoreUnavailable}}},
	{"BuildRead", "Bamboo's read API", [][]*facade.Error{signedIn, jsonAPI, upstream, {
		facade.ErrFilterLabel, facade.ErrFilterIssueKey, facade.ErrFilterBuildState,
		facade.ErrFilterIncludeAllStates, facade.ErrFilterContinuable, facade.ErrFilterCloverEnabled,
		facade.ErrFilterFavourite, facade.ErrBadIdentifier, facade.ErrBadParameter, facade.ErrForbidden,
		facade.ErrNotFound}}},
	{"BuildWriteRefused", "Bamboo's write endpoints, which the facade does not offer", [][]*facade.Error{signedIn, {
		facade.ErrOriginRefused, facade.ErrMethodNotAllowed}}},
	{"Artifact", "An artifact or log download", [][]*facade.Error{signedIn, upstream, {
		facade.ErrXSRF, facade.ErrBodyTooLarge, facade.ErrBadIdentifier, facade.ErrForbidden,
		facade.ErrNotFound, facade.ErrRangeNotSatisfiable}}},
	{"Me", "Who is calling", [][]*facade.Error{signedIn, jsonAPI}},
	{"SignIn", "Browser sign-in", [][]*facade.Error{{facade.ErrSignInFailed}}},
	{"SignOut", "Signing out", [][]*facade.Error{{facade.ErrOriginRefused, facade.ErrXSRF, facade.ErrBodyTooLarge}}},
	{"BackchannelLogout", "The provider's back-channel logout (an invalid logout token is 400 {\"error\": \"invalid_request\"}, not a problem)", [][]*facade.Error{{
		facade.ErrAuthThrottled, facade.ErrBodyTooLarge, facade.ErrStoreUnavailable}}},
	{"PublicFile", "A public page or file", [][]*facade.Error{{facade.ErrNotFound}}},
	{"Public", "A public document or ops endpoint", nil},
	{"Favourite", "Marking or unmarking a favourite plan", [][]*facade.Error{signedIn, jsonAPI, {
		facade.ErrBadIdentifier, facade.ErrForbidden, facade.ErrOriginRefused, facade.ErrNotFound,
		facade.ErrFavouritesFull, facade.ErrUnsupportedMedia, facade.ErrBuildsNotConfigured,
		facade.ErrStoreUnavailable}}},
}

// Families lists every route family with its codes: the checks every
// route runs, then the family's own, without repeats, sorted by status and
// then by wire name.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		var codes []facade.Code
		for _, set := range append([][]*facade.Error{everywhere}, f.codes...) {
			for _, e := range set {
				if !slices.Contains(codes, e.Code) {
					codes = append(codes, e.Code)
				}
			}
		}
		slices.SortFunc(codes, func(a, b facade.Code) int {
			return cmp.Or(cmp.Compare(problems[a].status, problems[b].status), cmp.Compare(Wire(a), Wire(b)))
		})
		out[i] = Family{Name: f.name, About: f.about, Codes: codes}
	}
	return out
}

// StatusOf is the status code is answered with.
func StatusOf(code facade.Code) int { return problems[code].status }
