// The page's one API layer. Every call to the facade goes through
// request(): it adds the credential (a pasted bearer token, or nothing when
// the browser's session cookie does the work), the anti-forgery header on
// changes, If-None-Match on conditional reads, and turns every error into
// an ApiError carrying the problem's code (docs/contract.md §2).

let token = null; // the pasted bearer token, or null (session cookie or signed out)
let pageXSRF = null; // the anti-forgery value: the session's (from /auth/me), or the page's own in token mode
const conditional = new Map(); // path -> {etag, data}: answers kept for If-None-Match

/** ApiError is a failed call: status, the problem's code and its errors[]. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || 'The request failed.');
    this.status = status;
    this.code = problem.code || codeFromStatus(status);
    this.fromServer = !!problem.code; // the code is the server's, not guessed from the status
    this.errors = problem.errors || [];
    this.requestID = problem.request_id || '';
  }
}

// codeFromStatus names a failure whose answer carried no code (a network
// failure, or a proxy in between answering for the facade).
function codeFromStatus(status) {
  return {0: 'network', 401: 'token-missing', 403: 'forbidden', 404: 'not-found', 409: 'grade-exists',
    412: 'version-mismatch', 413: 'body-too-large', 415: 'unsupported-media', 429: 'rate-limited',
    502: 'upstream-bad', 503: 'store-unavailable', 504: 'upstream-timeout'}[status] || 'internal';
}

/** useToken makes later calls carry a bearer token (the "use a token" way in). */
export function useToken(t) {
  forget();
  token = t;
  pageXSRF = randomHex(16);
}

/** usingToken reports whether calls carry a pasted token (a link, which
 * only the session cookie can authorize, would not). */
export function usingToken() {
  return token !== null;
}

/** useSession makes later calls rely on the session cookie, sending the
 * session's own anti-forgery token (from /auth/me's xsrf_token). */
export function useSession(xsrfToken) {
  forget();
  pageXSRF = xsrfToken || null;
}

/** forget drops the credential and every answer kept in memory. */
export function forget() {
  token = null;
  pageXSRF = null;
  conditional.clear();
}

function randomHex(n) {
  return Array.from(crypto.getRandomValues(new Uint8Array(n)), b => b.toString(16).padStart(2, '0')).join('');
}

// xsrf is the anti-forgery value: the session's token as /auth/me handed
// it over, or the page's own value in token mode. Never document.cookie: a
// sibling subdomain can plant an XSRF-TOKEN cookie there.
function xsrf() {
  return pageXSRF || randomHex(16);
}

/**
 * request calls the facade. Options: method, body, headers, accept
 * ('application/json' by default), conditional (send If-None-Match and
 * answer the kept data on 304), raw (return the Response unread, for
 * downloads and streamed logs). JSON answers come back as
 * {data, etag, status, notModified, headers}.
 */
export async function request(path, opts = {}) {
  const method = opts.method || 'GET';
  const headers = {Accept: opts.accept || 'application/json', ...(opts.headers || {})};
  if (token) headers.Authorization = 'Bearer ' + token;
  if (method !== 'GET' && method !== 'HEAD' && !headers['X-XSRF-TOKEN']) headers['X-XSRF-TOKEN'] = xsrf();
  const kept = opts.conditional ? conditional.get(path) : null;
  if (kept) headers['If-None-Match'] = kept.etag;
  let res;
  try {
    res = await fetch(path, {method, headers, body: opts.body, credentials: 'same-origin', cache: 'no-store'});
  } catch {
    throw new ApiError(0, {});
  }
  if (res.status === 304 && kept) {
    return {data: kept.data, etag: kept.etag, status: 304, notModified: true, headers: res.headers};
  }
  if (!res.ok) throw new ApiError(res.status, await problemOf(res));
  if (opts.raw) return res;
  const isJSON = (res.headers.get('Content-Type') || '').includes('json');
  const data = isJSON ? await res.json() : await res.text();
  const etag = res.headers.get('ETag');
  if (opts.conditional && etag) conditional.set(path, {etag, data});
  return {data, etag, status: res.status, notModified: false, headers: res.headers};
}

async function problemOf(res) {
  try {
    return await res.json();
  } catch {
    return {};
  }
}

/** get is request for a JSON read; it answers the data. */
export async function get(path, opts) {
  return (await request(path, opts)).data;
}

/** sameOrigin returns the path of a link the facade handed out when it
 * points at this origin, else null: the page follows no other link. */
export function sameOrigin(href) {
  try {
    const u = new URL(href, location.href);
    return u.origin === location.origin ? u.pathname + u.search : null;
  } catch {
    return null;
  }
}

/** enc percent-encodes one path segment. */
export const enc = encodeURIComponent;
