// What the page says about a failure, chosen from the problem's code
// (docs/contract.md §2), never from its sentence: each tells the person
// what to do next.

// Written by `go generate ./web` from server/problem's table (table.go), where each
// code's words live beside its status and sentences. Do not edit down to the end marker.
const words = {
  'internal': 'Something went wrong in the service. Try again; if it keeps happening, tell its operators.',
  'bad-identifier': 'That name or number is not written correctly. Use letters, digits, dots, @, _ or - only.',
  'bad-grade': 'That grade is not on the scale. Choose one from A+ to F.',
  'bad-amount': 'That amount is not one that can be sent. Write it with digits and a dot, e.g. 12.50.',
  'bad-parameter': 'The page asked for something the service does not understand. Reload the page.',
  'bad-idempotency-key': 'The page sent a transfer key the service does not accept. Reload the page and send the transfer again.',
  'bad-if-match': 'The page sent a version the service does not understand. Reload the page.',
  'malformed-body': 'The file could not be read as a gradebook. It needs a header line with student_id, grade and version.',
  'unknown-currency': 'That currency is not one the service knows. Choose an account in a known currency.',
  'bad-gradebook': 'The file could be misread, so nothing in it was used. Its first line must name student_id, grade and version, each once, separated by , or ; (a downloaded gradebook does).',
  'bad-reference': 'The reference must be 1 to 140 characters on one line. Shorten it or leave it out.',
  'token-missing': 'You are not signed in. Sign in (or use a token) to continue.',
  'token-malformed': 'That is not a token the service accepts. Copy the whole token again and paste it.',
  'token-expired': 'Your token has expired. Get a new one and paste it.',
  'token-not-yet-valid': 'That token is not valid yet. Check this computer\'s clock or get a new token.',
  'token-lifetime-too-long': 'That token is valid for too long to be accepted. Ask for a shorter-lived one.',
  'token-wrong-issuer': 'That token was issued for another service. Get a token for this one.',
  'token-wrong-audience': 'That token was issued for another service. Get a token for this one.',
  'token-bad-signature': 'That token is not signed by this service. Get a token for this one.',
  'forbidden': 'You are not allowed to do this. If you need to, ask whoever manages access for you.',
  'destination-refused': 'You may not pay into that account. Check the account number; if it is right, ask whoever manages access for you.',
  'not-found': 'That does not exist (any more). Go back to the list and pick again.',
  'grade-exists': 'Someone set this grade in the meantime. Check the value now shown before changing it.',
  'version-mismatch': 'Someone changed this in the meantime. Check the value now shown before changing it.',
  'same-account': 'The two accounts are the same. Choose another account to pay into.',
  'insufficient-funds': 'The account does not hold enough money for this transfer. Choose a smaller amount.',
  'currency-mismatch': 'The two accounts hold different currencies, and a transfer moves money within one currency. Choose an account in the same currency.',
  'idempotency-reuse': 'This transfer was already sent with other details. Start the transfer again.',
  'balance-limit': 'The receiving account would hold more than it may. Choose a smaller amount.',
  'store-unavailable': 'The service cannot reach its data store right now. Try again in a minute.',
  'upstream-bad': 'The build server answered with an error. Try again in a minute.',
  'upstream-timeout': 'The build server did not answer in time. Try again in a minute.',
  'upstream-open': 'The build server is failing; the service is giving it a rest. Try again in a minute.',
  'builds-not-configured': 'This service has no build server configured. Ask its operators.',
  'range-not-satisfiable': 'That part of the file does not exist. Download the whole file again.',
  'bad-filter-label': 'The build list was asked for with a label filter it does not understand. Reload the page.',
  'bad-filter-issue-key': 'The build list was asked for with an issue filter it does not understand. Reload the page.',
  'bad-filter-buildstate': 'The build list was asked for with a state filter it does not understand. Reload the page.',
  'bad-filter-include-all-states': 'The build list was asked for with a filter it does not understand. Reload the page.',
  'bad-filter-continuable': 'The build list was asked for with a filter it does not understand. Reload the page.',
  'bad-filter-clover-enabled': 'The build list was asked for with a coverage filter it does not understand. Reload the page.',
  'bad-filter-favourite': 'The build list was asked for with a favourites filter it does not understand. Reload the page.',
  'favourites-full': 'You keep as many favourite plans as one person may. Remove a star you no longer need, then add this one.',
  'session-expired': 'Your session has ended. Sign in again to continue.',
  'session-invalid': 'Your session is no longer valid. Sign in again to continue.',
  'signin-failed': 'Signing in did not complete. Start again from the sign-in button.',
  'xsrf': 'The page\'s safety check failed. Reload the page and try again.',
  'grade-not-posted': 'Not released yet: your grade will show here once the teaching staff post it.',
  'auth-throttled': 'Too many failed sign-ins from here in a short time. Wait a few seconds, check the token, then try again.',
  'origin-refused': 'This page may not make changes from where it was opened. Open it from the service\'s own address.',
  'route-not-found': 'The page asked for something the service does not offer. Reload the page.',
  'method-not-allowed': 'The page asked for something the service does not allow here. Reload the page.',
  'not-acceptable': 'The page asked for an answer in a form the service does not give. Reload the page.',
  'unsupported-media': 'That file type is not accepted. Choose a CSV file.',
  'body-too-large': 'The file is larger than 2 MiB. Split it into smaller files (by student), then upload each.',
  'headers-too-large': 'The request carried too much (often too many cookies). Clear this site\'s cookies, then sign in again.',
  'malformed-request': 'The request could not be read. Reload the page and try again.',
  'not-implemented': 'The request was sent in a way the service does not support. Reload the page and try again.',
  'version-not-supported': 'The browser spoke a version of HTTP the service does not. Try another browser.',
  'expect-unsupported': 'The request asked for something the service does not support. Reload the page and try again.',
  'rate-limited': 'Too many requests in a short time. Wait a few seconds, then try again.',
};

// Finer words for an input's rule (errors[].code), by the problem's code.
const ruleWords = {
  'bad-amount': {
    'leading-zero': 'Write the amount without leading zeros, e.g. 7 rather than 007.',
    'malformed': 'Write the amount with digits and a dot for decimals, e.g. 12.50.',
    'not-positive': 'The amount must be more than zero. To move money back, send it from the other account.',
    'over-limit': 'The amount is over the largest single transfer allowed. Send a smaller amount.',
    'too-precise': 'The amount has more decimals than the currency has. Round it.',
  },
  'bad-parameter': {
    'not-date': 'That is not a date. Choose a day, e.g. 2026-03-01.',
    'not-issued': 'That link to older transfers is not one for you and this account (or is no longer valid). Show the statement again from the newest transfers.',
    'reversed': 'The range ends before it starts. Choose a "from" day on or before the "to" day.',
  },
};

/** rowWords explains a gradebook row's code. */
export function rowWords(code) {
  return {
    'bad-identifier': 'The student id is not written correctly.',
    'bad-grade': 'Not a grade on the scale: use one of A+ A A- B+ B B- C+ C C- D+ D D- F (an empty grade never removes one).',
    'bad-parameter': 'The version is not a whole number; copy it from a fresh download.',
    'forbidden': 'You may not change grades in this class.',
    'version-mismatch': 'Changed by someone since your file was made.',
    'duplicate-student': 'This student is on another line too, so neither line was used; keep one line per student.',
    'not-in-class': 'Not a student of this class you may see.',
  }[code] || '';
}
// End of the written words.

// network is a failure that got no answer at all (api.js), so it has no
// code of the service's, nor words in its table.
const network = 'The service did not answer. Check your connection, then try again.';

/** explain returns the words for an ApiError (or any error). */
export function explain(err) {
  const rules = err && ruleWords[err.code];
  if (rules) {
    const item = (err.errors || []).find(e => rules[e.code]);
    if (item) return rules[item.code];
  }
  const w = err && (err.code === 'network' ? network : words[err.code]);
  if (w) return w;
  return 'The request failed. Try again; if it keeps happening, tell the service\'s operators' +
    (err && err.requestID ? ' (request ' + err.requestID + ').' : '.');
}

/** signsOut says whether the error means the person is no longer signed in. */
export function signsOut(err) {
  return !!err && err.status === 401;
}

/** groupsIncomplete says why a person's group access is missing when the
 * organization's sign-in sent too many groups to fit (/auth/me
 * groups_incomplete), and whom to ask. */
export const groupsIncomplete = 'Your organization\'s sign-in lists more groups for you than it could send here, so ' +
  'this service sees none of them: anything you may use through a group is not shown. Ask the people who run ' +
  'your organization\'s sign-in to send only the groups this service uses (for Microsoft Entra: groups ' +
  'assigned to the application), or ask whoever manages access here to grant it to you by name.';

/** nothingHere says why a signed-in person has no section here at all
 * (/auth/me has), in words that say what is missing and whom to ask. */
export function nothingHere(me) {
  return me.has && me.has.classes_need_role ? roleMissing(me)
    : `Nothing here is shared with you yet: no class, account or build. If you expected some, ask whoever manages ` +
      `access here to grant it to you by name (${me.sub}).`;
}

/** roleMissing says why a class shared with a person shows no grades:
 * grades are for professors (the sign-in's role or the policy's). */
export function roleMissing(me) {
  return `A class is shared with you here, but a class's grades are shown only to someone with the professor role, and ` +
    `your sign-in gives you ${me.role ? `the role “${me.role}”` : 'no role'}. Ask whoever manages access here to give ` +
    `you the professor role (a role: line in the policy), or your organization to send it when you sign in.`;
}
