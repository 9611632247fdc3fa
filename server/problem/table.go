package problem

import (
	"net/http"
	"strings"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
)

// problemKind is everything said about one code: to a client, the
// status, the fixed sentence of the body and the Retry-After sent when the
// error itself does not carry one; to people, the advice on the code's
// /problems/ page and the words the browser page shows (words.go).
// reasons holds the sentence of each rule an input check of this code can
// report (the items of the body's errors list). invalidToken marks the
// 401s that answer a token that was sent (RFC 6750 error="invalid_token").
type problemKind struct {
	status       int
	detail       string
	retryAfter   time.Duration
	advice       string
	reasons      map[facade.Reason]string
	invalidToken bool
	// words tell a person on the browser page what to do next; rowWords
	// explain a gradebook row refused with this code; reasonWords are
	// finer words for some of its rules. The page reads them from
	// web/static/js/words.js, which `go generate ./web` writes from here.
	words, rowWords string
	reasonWords     map[facade.Reason]string
}

// scaleText and scaleRange name the grade scale in the sentences below,
// made from its one list (grades.Scale): "A+ A A- ... F" and "A+ to F".
var scaleText, scaleRange = scaleWords(grades.Scale())

func scaleWords(scale []string) (all, span string) {
	return strings.Join(scale, " "), scale[0] + " to " + scale[len(scale)-1]
}

// problems is the one table from error code to response, one entry for
// each code errors.go declares (a test fails for a code without one), with
// all that is said about it, the browser page's words included.
// Every error response of the service, including the ones net/http would
// write itself, is built from a line here (the body: docs/contract.md §2,
// "Errors"; the codes: the Problem schema and route families of
// api/openapi.json, which `go generate ./api` writes from this table and
// families.go). Internal codes are
// snake_case (metrics label with them); the wire writes them with "-"
// (Wire), so the two never drift apart.
var problems = map[facade.Code]problemKind{
	facade.ErrInternal.Code: {status: 500, detail: "The server could not complete the request.",
		advice: "Something failed inside the service. Retry later; if it persists, give the operators the request_id of the answer.",
		words:  "Something went wrong in the service. Try again; if it keeps happening, tell its operators."},

	facade.ErrBadIdentifier.Code: {status: 400, detail: "An identifier in the path is malformed; errors says which.",
		advice:   "Student, account and class ids are 1 to 64 of A-Z a-z 0-9 . _ @ -; project keys are upper-case letters and digits starting with a letter; plan keys upper-case letters and digits.",
		words:    "That name or number is not written correctly. Use letters, digits, dots, @, _ or - only.",
		rowWords: "The student id is not written correctly.",
		reasons: map[facade.Reason]string{
			facade.ReasonMalformed: "This path segment is not in its identifier's format: ids are 1 to 64 of A-Z a-z 0-9 . _ @ -, project and plan keys are upper-case letters and digits (PROJ, PROJ-PLAN, PROJ-PLAN-12), and an encoded /, ., ?, # or % is never part of one.",
		}},
	facade.ErrBadGrade.Code: {status: 400, detail: "The grade must be one of " + scaleText + ".",
		advice:   "Send the body {\"grade\": \"B+\"} with one of the scale's letters, written exactly so (no spaces, upper case).",
		words:    "That grade is not on the scale. Choose one from " + scaleRange + ".",
		rowWords: "Not a grade on the scale: use one of " + scaleText + " (an empty grade never removes one).",
		reasons: map[facade.Reason]string{
			facade.ReasonNotOnScale: "The grade must be one of " + scaleText + ", written exactly so.",
		}},
	facade.ErrBadAmount.Code: {status: 400, detail: "The amount is not one this service can transfer; errors says which rule it broke.",
		advice: "Write the amount in the currency's major unit with ASCII digits and at most as many decimals as the currency has, for example 12.50 for EUR or 1200 for JPY.",
		words:  "That amount is not one that can be sent. Write it with digits and a dot, e.g. 12.50.",
		reasonWords: map[facade.Reason]string{
			facade.ReasonMalformed:   "Write the amount with digits and a dot for decimals, e.g. 12.50.",
			facade.ReasonLeadingZero: "Write the amount without leading zeros, e.g. 7 rather than 007.",
			facade.ReasonNotPositive: "The amount must be more than zero. To move money back, send it from the other account.",
			facade.ReasonTooPrecise:  "The amount has more decimals than the currency has. Round it.",
			facade.ReasonOverLimit:   "The amount is over the largest single transfer allowed. Send a smaller amount.",
		},
		reasons: map[facade.Reason]string{
			facade.ReasonMalformed:   "The amount must be ASCII digits with an optional decimal point, such as 12.50: no sign, exponent, comma or spaces.",
			facade.ReasonLeadingZero: "The amount must not start with a zero unless it is below 1: write 7, not 007, and 0.50.",
			facade.ReasonNotPositive: "The amount must be more than zero (a transfer always moves money from the source to the destination; swap them to move it back).",
			facade.ReasonTooPrecise:  "The amount has more decimals than the account's currency allows (2 for EUR, 0 for JPY).",
			facade.ReasonOverLimit:   "The amount is over the largest single transfer this service allows.",
		}},
	facade.ErrBadParameter.Code: {status: 400, detail: "A query parameter is malformed or out of range; errors says which.",
		advice:   "Paging parameters are whole numbers in plain decimal digits, each given once: limit from 1 to 100 (or the list's own maximum), start and start-index 0 or more, max-results 1 to 1000.",
		words:    "The page asked for something the service does not understand. Reload the page.",
		rowWords: "The version is not a whole number; copy it from a fresh download.",
		reasonWords: map[facade.Reason]string{
			facade.ReasonNotDate:   "That is not a date. Choose a day, e.g. 2026-03-01.",
			facade.ReasonReversed:  "The range ends before it starts. Choose a \"from\" day on or before the \"to\" day.",
			facade.ReasonNotIssued: "That link to older transfers is not one for you and this account (or is no longer valid). Show the statement again from the newest transfers.",
		},
		reasons: map[facade.Reason]string{
			facade.ReasonMalformed:        "The value must be a whole number in plain decimal digits, given once.",
			facade.ReasonOutOfRange:       "The value is outside the range this parameter allows.",
			facade.ReasonUnknownParameter: "This route does not take this query parameter; check its spelling (dry_run, not dry-run or dryRun).",
			facade.ReasonRepeated:         "The parameter is given more than once; give it once.",
			facade.ReasonNotFlag:          "The value must be 1, true, 0 or false.",
			facade.ReasonNotIssued:        "The cursor is not one this service gave you for this list (another person's or account's, edited, or from before the service's key changed); start again from the first page.",
			facade.ReasonNotDate:          "The value must be an RFC 3339 date (2026-03-01, the whole day in UTC) or instant (2026-03-01T09:30:00Z).",
			facade.ReasonReversed:         "The range is the wrong way round: from must not be after to.",
		}},
	facade.ErrBadGradebook.Code: {status: 400, detail: "The gradebook file could be misread, so none of it was written; errors says why.",
		advice: "Upload a CSV file (separated by , or ;) whose first line names student_id, grade and version, each once; a downloaded gradebook is such a file.",
		words:  "The file could be misread, so nothing in it was used. Its first line must name student_id, grade and version, each once, separated by , or ; (a downloaded gradebook does).",
		reasons: map[facade.Reason]string{
			facade.ReasonMissingColumn:  "The header line does not name this column; the file needs student_id, grade and version, separated by , or ;.",
			facade.ReasonRepeatedColumn: "The header line names this column twice; which one is meant cannot be known. Keep one.",
			facade.ReasonMalformed:      "The file is not readable as CSV (a quote not closed, for example); save it again as CSV from the spreadsheet.",
		}},
	facade.ErrBadIdempotencyKey.Code: {status: 400, detail: "The Idempotency-Key header must be 1 to 255 characters.",
		advice: "Send one Idempotency-Key header of 1 to 255 visible ASCII characters, for example a UUID, and reuse it only to repeat the same transfer.",
		words:  "The page sent a transfer key the service does not accept. Reload the page and send the transfer again."},
	facade.ErrBadIfMatch.Code: {status: 400, detail: "The If-Match header is malformed; errors says how.",
		advice: "Send If-Match with the ETag header of the grade you read, exactly as it was sent, quotes included: If-Match: \"3\".",
		words:  "The page sent a version the service does not understand. Reload the page.",
		reasons: map[facade.Reason]string{
			facade.ReasonUnquoted:  "The If-Match header must be quoted, as the ETag header was sent: If-Match: \"3\", not If-Match: 3.",
			facade.ReasonMalformed: "The If-Match header must be one version tag as sent in the ETag header, such as \"3\".",
		}},
	facade.ErrMalformedBody.Code: {status: 400, detail: "The request body is not valid JSON for this endpoint.",
		advice: "Send one JSON object with exactly the fields the endpoint describes in /openapi.json, each once, and nothing after it.",
		words:  "The file could not be read as a gradebook. It needs a header line with student_id, grade and version."},
	facade.ErrUnknownCurrency.Code: {status: 400, detail: "The currency is not a supported ISO 4217 code.",
		advice: "Use an ISO 4217 currency code the service knows, such as EUR, USD or JPY.",
		words:  "That currency is not one the service knows. Choose an account in a known currency."},
	facade.ErrBadReference.Code: {status: 400, detail: "The transfer's reference must be 1 to 140 printable characters.",
		advice: "Send the body {\"reference\": \"Rent March\"} with 1 to 140 characters and no control characters, or send no body for a transfer without one.",
		words:  "The reference must be 1 to 140 characters on one line. Shorten it or leave it out.",
		reasons: map[facade.Reason]string{
			facade.ReasonMalformed: "The reference must be 1 to 140 printable characters (no line breaks or control characters).",
		}},
	facade.ErrMalformedRequest.Code: {status: 400, detail: "The request is malformed.",
		advice: "The request line, Host header or an escape in the path could not be read. Check what your client sends.",
		words:  "The request could not be read. Reload the page and try again."},

	facade.ErrFilterLabel.Code: {status: 400, detail: "The label parameter is malformed or not supported on this endpoint.",
		advice: "label takes a comma-separated list of Bamboo labels, on a result list only.",
		words:  "The build list was asked for with a label filter it does not understand. Reload the page."},
	facade.ErrFilterIssueKey.Code: {status: 400, detail: "The issueKey parameter is malformed or not supported on this endpoint.",
		advice: "issueKey takes a comma-separated list of issue keys such as PROJ-12, on a result list only.",
		words:  "The build list was asked for with an issue filter it does not understand. Reload the page."},
	facade.ErrFilterBuildState.Code: {status: 400, detail: "The buildstate parameter must be Successful, Failed or Unknown, on a result list.",
		advice: "Use buildstate=Successful, Failed or Unknown on a result list, or leave it out.",
		words:  "The build list was asked for with a state filter it does not understand. Reload the page."},
	facade.ErrFilterIncludeAllStates.Code: {status: 400, detail: "The includeAllStates parameter must be true or false, on a result list.",
		advice: "Use includeAllStates=true or false on a result list, or leave it out.",
		words:  "The build list was asked for with a filter it does not understand. Reload the page."},
	facade.ErrFilterContinuable.Code: {status: 400, detail: "The continuable parameter must be true or false, on a result list.",
		advice: "Use continuable=true or false on a result list, or leave it out.",
		words:  "The build list was asked for with a filter it does not understand. Reload the page."},
	facade.ErrFilterCloverEnabled.Code: {status: 400, detail: "The cloverEnabled parameter must be true or false (or given bare, meaning true), on the project, plan and latest-result lists.",
		advice: "Use cloverEnabled, cloverEnabled=true or cloverEnabled=false on /project, /plan, /result or /result/{projectKey}, or leave it out.",
		words:  "The build list was asked for with a coverage filter it does not understand. Reload the page."},
	facade.ErrFilterFavourite.Code: {status: 400, detail: "The favourite parameter must be true or false (or given bare, meaning true), on a list.",
		advice: "Use favourite, favourite=true or favourite=false on a list route to keep your favourite plans, or leave it out.",
		words:  "The build list was asked for with a favourites filter it does not understand. Reload the page."},
	facade.ErrFavouritesFull.Code: {status: 409, detail: "You already keep the most favourite plans one person may.",
		advice: "Remove a favourite you no longer need (DELETE /rest/api/latest/plan/{planKey}/favourite), then mark this one.",
		words:  "You keep as many favourite plans as one person may. Remove a star you no longer need, then add this one."},

	facade.ErrTokenMissing.Code: {status: 401, detail: "A bearer token is required.",
		advice: "Send Authorization: Bearer followed by a token from your organization's sign-in, or sign in on the page.",
		words:  "You are not signed in. Sign in (or use a token) to continue."},
	facade.ErrTokenMalformed.Code: {status: 401, detail: "The bearer token is not a well-formed token with the claims this service requires.", invalidToken: true,
		advice: "The token could not be read, or lacks sub or exp. Send the whole token as issued, on one line, after Bearer.",
		words:  "That is not a token the service accepts. Copy the whole token again and paste it."},
	facade.ErrTokenExpired.Code: {status: 401, detail: "The bearer token has expired.", invalidToken: true,
		advice: "Get a new token (sign in again) and retry.",
		words:  "Your token has expired. Get a new one and paste it."},
	facade.ErrTokenNotYetValid.Code: {status: 401, detail: "The bearer token is not valid yet.", invalidToken: true,
		advice: "The token's nbf or iat is in the future. Check the clock of the machine that issued it, or wait until it becomes valid.",
		words:  "That token is not valid yet. Check this computer's clock or get a new token."},
	facade.ErrTokenLifetimeTooLong.Code: {status: 401, detail: "The bearer token is valid for longer than this service allows.", invalidToken: true,
		advice: "Ask for a token with a shorter lifetime (by default at most 24 hours between iat and exp).",
		words:  "That token is valid for too long to be accepted. Ask for a shorter-lived one."},
	facade.ErrTokenWrongIssuer.Code: {status: 401, detail: "The bearer token was issued by an issuer this service does not trust.", invalidToken: true,
		advice: "Get a token from the identity provider this service is configured for.",
		words:  "That token was issued for another service. Get a token for this one."},
	facade.ErrTokenWrongAudience.Code: {status: 401, detail: "The bearer token was issued for another audience.", invalidToken: true,
		advice: "Ask the identity provider for a token whose audience is this service.",
		words:  "That token was issued for another service. Get a token for this one."},
	facade.ErrTokenBadSignature.Code: {status: 401, detail: "The bearer token's signature does not verify with this service's keys.", invalidToken: true,
		advice: "The token was signed by another key or with an algorithm this service does not accept, or was altered. Get a new token from the identity provider this service trusts.",
		words:  "That token is not signed by this service. Get a token for this one."},
	facade.ErrSessionExpired.Code: {status: 401, detail: "The session has ended; sign in again.",
		advice: "Your browser session is over (FACADE_SESSION_LIFETIME, or the identity provider's sign-in expired). Sign in again; the page brings you back where you were.",
		words:  "Your session has ended. Sign in again to continue."},
	facade.ErrSessionInvalid.Code: {status: 401, detail: "The session cookie is not valid; sign in again.",
		advice: "The session cookie was altered, or sealed with a key this service no longer holds (after a key rotation). Sign in again.",
		words:  "Your session is no longer valid. Sign in again to continue."},
	facade.ErrSignInFailed.Code: {status: 400, detail: "Signing in did not complete; start again from the sign-in link.",
		advice: "The answer from the identity provider did not belong to a sign-in this browser started, came back too late (after 10 minutes), or did not verify. Start again from the page's sign-in button.",
		words:  "Signing in did not complete. Start again from the sign-in button."},

	facade.ErrForbidden.Code: {status: 403, detail: "You are not permitted to perform this operation.",
		advice:   "The policy does not give you this permission on this target. Ask the target's owner or the operators for access; the answer is the same whether the target exists or not.",
		words:    "You are not allowed to do this. If you need to, ask whoever manages access for you.",
		rowWords: "You may not change grades in this class."},
	facade.ErrDestinationRefused.Code: {status: 403, detail: "You may not pay into this account; check the account number.",
		advice: "You may send money from the source account, but the policy does not let you pay into this destination, whether or not it exists. Check the number; if it is right, ask the operators for the right to pay into it.",
		words:  "You may not pay into that account. Check the account number; if it is right, ask whoever manages access for you."},
	facade.ErrXSRF.Code: {status: 403, detail: "A valid X-XSRF-TOKEN header is required for this request.",
		advice: "Send X-XSRF-TOKEN on POST and PUT: 1 to 256 visible ASCII characters, equal to the XSRF-TOKEN cookie when one is set.",
		words:  "The page's safety check failed. Reload the page and try again."},
	facade.ErrOriginRefused.Code: {status: 403, detail: "Requests from this origin are not permitted.",
		advice: "The page's origin is not one the operators allow for this method. Use the service from an allowed origin.",
		words:  "This page may not make changes from where it was opened. Open it from the service's own address."},

	facade.ErrNotFound.Code: {status: 404, detail: "The requested resource does not exist.",
		advice: "Check the identifier; you may view it, but there is nothing there.",
		words:  "That does not exist (any more). Go back to the list and pick again."},
	facade.ErrGradeNotPosted.Code: {status: 404, detail: "This grade has not been released to the student yet.",
		advice: "Staff of the class release grades when they post them (the class's posting policy is manual). Ask again after they do; nothing needs to change on your side.",
		words:  "Not released yet: your grade will show here once the teaching staff post it."},
	facade.ErrRouteNotFound.Code: {status: 404, detail: "No such endpoint.",
		advice: "The path is not one this service answers. /openapi.json lists every endpoint.",
		words:  "The page asked for something the service does not offer. Reload the page."},

	facade.ErrMethodNotAllowed.Code: {status: 405, detail: "This method is not allowed on this endpoint.",
		advice: "Use one of the methods the Allow header lists.",
		words:  "The page asked for something the service does not allow here. Reload the page."},
	facade.ErrNotAcceptable.Code: {status: 406, detail: "This endpoint only produces application/json.",
		advice: "Accept application/json (or send no Accept header).",
		words:  "The page asked for an answer in a form the service does not give. Reload the page."},
	facade.ErrGradeExists.Code: {status: 409, detail: "A grade for this student and subject already exists.",
		advice: "Read the grade and change it with PUT and If-Match instead of creating it.",
		words:  "Someone set this grade in the meantime. Check the value now shown before changing it."},
	facade.ErrVersionMismatch.Code: {status: 412, detail: "The resource has changed; If-Match does not match its current version.",
		advice:   "Someone changed it since you read it. Read it again (its history says who changed it to what), then decide and retry with the new ETag.",
		words:    "Someone changed this in the meantime. Check the value now shown before changing it.",
		rowWords: "Changed by someone since your file was made."},
	facade.ErrBodyTooLarge.Code: {status: 413, detail: "The request body is too large: at most 16 KiB, or 2 MiB for a gradebook upload (text/csv).",
		advice: "Send a JSON body of at most 16 KiB. A gradebook CSV may be up to 2 MiB (a lecture of many thousands of students); split a larger file by student and upload each part.",
		words:  "The file is larger than 2 MiB. Split it into smaller files (by student), then upload each."},
	facade.ErrUnsupportedMedia.Code: {status: 415, detail: "The request body must be application/json (text/csv for a gradebook upload).",
		advice: "Send the body with Content-Type: application/json, or text/csv when uploading a gradebook.",
		words:  "That file type is not accepted. Choose a CSV file."},
	facade.ErrRangeNotSatisfiable.Code: {status: 416, detail: "The requested range starts beyond the end of the file; Content-Range gives its size.",
		advice: "Ask for a range that starts before the size Content-Range gives, or for the whole file without Range.",
		words:  "That part of the file does not exist. Download the whole file again."},
	facade.ErrExpectUnsupported.Code: {status: 417, detail: "The only Expect header supported is 100-continue.",
		advice: "Leave out the Expect header, or send Expect: 100-continue.",
		words:  "The request asked for something the service does not support. Reload the page and try again."},

	facade.ErrSameAccount.Code: {status: 422, detail: "A transfer needs two different accounts.",
		advice: "Choose a destination account other than the source.",
		words:  "The two accounts are the same. Choose another account to pay into."},
	facade.ErrInsufficientFunds.Code: {status: 422, detail: "The source account has insufficient funds.",
		advice: "Transfer at most the source account's balance.",
		words:  "The account does not hold enough money for this transfer. Choose a smaller amount."},
	facade.ErrCurrencyMismatch.Code: {status: 422, detail: "The accounts hold different currencies.",
		advice: "Transfer only between accounts of the same currency.",
		words:  "The two accounts hold different currencies, and a transfer moves money within one currency. Choose an account in the same currency."},
	facade.ErrIdempotencyReuse.Code: {status: 422, detail: "This Idempotency-Key was already used for a different request.",
		advice: "Use a new Idempotency-Key for a new transfer; reuse a key only to repeat exactly the same transfer.",
		words:  "This transfer was already sent with other details. Start the transfer again."},
	// A gradebook upload answers these per row (its rows' code), not as
	// the request's problem; their pages explain them all the same.
	facade.ErrDuplicateStudent.Code: {status: 422, detail: "The gradebook names this student on more than one row.",
		advice:   "Keep one row per student in the file: which of the rows was meant cannot be known, so each of them is refused.",
		rowWords: "This student is on another line too, so neither line was used; keep one line per student."},
	facade.ErrNotInClass.Code: {status: 422, detail: "The student is not in this class, or not one you may view.",
		advice:   "Upload only the students of the class the gradebook download lists; a row for anyone else is refused.",
		rowWords: "Not a student of this class you may see."},
	facade.ErrBalanceLimit.Code: {status: 422, detail: "The destination account cannot hold this balance.",
		advice: "The destination's balance would exceed what the service can hold. Transfer less.",
		words:  "The receiving account would hold more than it may. Choose a smaller amount."},

	facade.ErrRateLimited.Code: {status: 429, detail: "Too many requests; retry later.", retryAfter: time.Second,
		advice: "Wait the seconds Retry-After says, then retry; send fewer requests per second.",
		words:  "Too many requests in a short time. Wait a few seconds, then try again."},
	facade.ErrAuthThrottled.Code: {status: 429, detail: "Too many failed authentications from this address; retry later.", retryAfter: time.Second,
		advice: "Wait the seconds Retry-After says, and fix the token before retrying.",
		words:  "Too many failed sign-ins from here in a short time. Wait a few seconds, check the token, then try again."},

	facade.ErrHeadersTooLarge.Code: {status: 431, detail: "The request headers exceed 16 KiB.",
		advice: "Send at most 16 KiB of request line and headers (cookies included).",
		words:  "The request carried too much (often too many cookies). Clear this site's cookies, then sign in again."},
	facade.ErrNotImplemented.Code: {status: 501, detail: "The request's transfer encoding is not supported.",
		advice: "Send the body with Content-Length or chunked encoding only.",
		words:  "The request was sent in a way the service does not support. Reload the page and try again."},
	facade.ErrVersionNotSupported.Code: {status: 505, detail: "Only HTTP/1.1 and HTTP/1.0 are supported.",
		advice: "Use HTTP/1.1.",
		words:  "The browser spoke a version of HTTP the service does not. Try another browser."},

	facade.ErrUpstreamBad.Code: {status: 502, detail: "The build server returned an invalid response.",
		advice: "The build server answered with an error or something unreadable. Retry later; operators see the cause in the logs.",
		words:  "The build server answered with an error. Try again in a minute."},
	facade.ErrStoreUnavailable.Code: {status: 503, detail: "The data store is temporarily unavailable; retry later.", retryAfter: time.Second,
		advice: "Wait the seconds Retry-After says and retry. A transfer may or may not have happened: retry it with the same Idempotency-Key to find out without paying twice.",
		words:  "The service cannot reach its data store right now. Try again in a minute."},
	facade.ErrUpstreamOpen.Code: {status: 503, detail: "The build server is unavailable; retry later.", retryAfter: time.Second,
		advice: "The build server failed repeatedly and is given a rest. Wait the seconds Retry-After says and retry.",
		words:  "The build server is failing; the service is giving it a rest. Try again in a minute."},
	facade.ErrBuildsNotConfigured.Code: {status: 503, detail: "Build results are not configured on this instance.",
		advice: "This instance has no build server (FACADE_UPSTREAM_URL). Ask the operators.",
		words:  "This service has no build server configured. Ask its operators."},
	facade.ErrUpstreamTimeout.Code: {status: 504, detail: "The build server did not answer in time.",
		advice: "Retry later; the build server is slow or unreachable.",
		words:  "The build server did not answer in time. Try again in a minute."},
}

// echoRefusals are Echo's own errors (router, body limit) by status.
var echoRefusals = map[int]*facade.Error{
	http.StatusBadRequest:            facade.ErrMalformedRequest,
	http.StatusNotFound:              facade.ErrRouteNotFound,
	http.StatusMethodNotAllowed:      facade.ErrMethodNotAllowed,
	http.StatusNotAcceptable:         facade.ErrNotAcceptable,
	http.StatusRequestEntityTooLarge: facade.ErrBodyTooLarge,
	http.StatusUnsupportedMediaType:  facade.ErrUnsupportedMedia,
}
