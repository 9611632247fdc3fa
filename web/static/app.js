// Facade's page: a plain client of the public API. Rules it keeps:
// - the token lives in sessionStorage (this tab only) and goes out only in
//   the Authorization header, only to this page's own origin;
// - every change carries X-XSRF-TOKEN; grade edits carry If-Match; every
//   transfer attempt carries one Idempotency-Key, reused when the same
//   attempt is sent again (a double click, a retry) so money moves once;
// - the DOM is built with textContent, never from HTML strings, so data
//   from the API cannot run as script.
'use strict';

const TOKEN_KEY = 'facade.token';
const XSRF_KEY = 'facade.xsrf';
const GRADES = ['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'F'];
const RESULTS_PAGE = 5;
const CLASS_PAGE = 50;

const $ = (id) => document.getElementById(id);

// ---- small DOM helpers -----------------------------------------------

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function focusHeading(id) {
  const h = $(id);
  if (h) h.focus();
}

function randomHex(bytes) {
  const b = new Uint8Array(bytes);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// ---- status and errors in plain words ------------------------------------

const PLAIN = {
  0: 'The service could not be reached. Check the connection and try again.',
  400: 'The service did not accept what was sent.',
  401: 'Your token is missing, expired or not valid. Paste a fresh token above.',
  403: 'You are not allowed to do this.',
  404: 'Not found. It does not exist, or it has not been created yet.',
  405: 'This action is not offered here.',
  409: 'This already exists, so it was not created again.',
  412: 'Someone else changed this while you were looking at it. Your change was not saved.',
  413: 'What was sent is too large.',
  415: 'The service did not understand the format of what was sent.',
  422: 'This cannot be done.',
  429: 'Too many requests in a short time.',
  500: 'The service had a problem and could not finish. Try again later.',
  502: 'The build server gave an answer the service could not use. Try again later.',
  503: 'The service is temporarily unavailable.',
  504: 'The build server did not answer in time. Try again later.',
};

class ApiError extends Error {
  constructor(status, problem, headers) {
    super(PLAIN[status] || 'The request failed (status ' + status + ').');
    this.status = status;
    this.problem = problem;
    this.retryAfter = headers ? headers.get('Retry-After') : null;
  }

  // words is the sentence shown to a person: what happened in plain words,
  // then the service's own fixed explanation and the id to quote.
  words() {
    let s = this.message;
    if (this.status === 429 || this.status === 503) {
      const n = parseInt(this.retryAfter, 10);
      s += n > 0 ? ' Wait ' + n + (n === 1 ? ' second' : ' seconds') + ' and try again.' : ' Try again shortly.';
    }
    if (this.problem && this.problem.detail) s += ' (' + this.problem.detail + ')';
    if (this.problem && this.problem.request_id) s += ' Reference: ' + this.problem.request_id + '.';
    return s;
  }
}

function showError(err, context) {
  const box = $('error');
  const words = err instanceof ApiError ? err.words() : 'Something went wrong in the page: ' + err.message;
  box.textContent = (context ? context + ': ' : '') + words;
  box.dataset.status = err instanceof ApiError ? String(err.status) : '';
  box.hidden = false;
  box.focus();
}

function clearError() {
  const box = $('error');
  box.hidden = true;
  box.textContent = '';
  delete box.dataset.status;
}

function say(text) {
  $('status').textContent = text;
}

// ---- the API ----------------------------------------------------------

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

// xsrf is this tab's anti-forgery value: any visible string works because
// the service compares it with a cookie only when one is sent, and the page
// sends no cookies; a page on another site cannot add the header at all.
function xsrf() {
  let v = sessionStorage.getItem(XSRF_KEY);
  if (!v) {
    v = randomHex(16);
    sessionStorage.setItem(XSRF_KEY, v);
  }
  return v;
}

// ownPath turns a link from the API into a path on this origin; a link to
// anywhere else is refused, so the token never leaves this origin.
function ownPath(href) {
  const u = new URL(href, location.href);
  if (u.origin !== location.origin) throw new Error('the service returned a link to another site, which was not followed');
  return u.pathname + u.search;
}

// session is who signed in at the identity provider (GET /auth/me), or
// null: without a pasted token, calls go with the session cookie and the
// session's own anti-forgery token (the XSRF-TOKEN cookie).
let session = null;

function cookie(name) {
  const hit = document.cookie.split('; ').find((c) => c.startsWith(name + '='));
  return hit ? decodeURIComponent(hit.slice(name.length + 1)) : '';
}

async function send(method, path, opts) {
  const o = opts || {};
  const bearer = token() !== '' || !session;
  const headers = Object.assign(bearer ? { Authorization: 'Bearer ' + token() } : {}, o.headers || {});
  if (method !== 'GET' && method !== 'HEAD') headers['X-XSRF-TOKEN'] = bearer ? xsrf() : cookie('XSRF-TOKEN');
  let body;
  if (o.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(o.body);
  }
  try {
    const credentials = bearer ? 'omit' : 'same-origin';
    return await fetch(path, { method, headers, body, credentials, cache: 'no-store', redirect: 'error' });
  } catch (e) {
    throw new ApiError(0, null, null);
  }
}

async function problemOf(res) {
  try {
    return await res.json();
  } catch (e) {
    return null;
  }
}

// api sends a JSON request and returns {data, headers, status}; a non-2xx
// answer throws an ApiError carrying the problem body.
async function api(method, path, opts) {
  const o = Object.assign({}, opts);
  o.headers = Object.assign({ Accept: 'application/json' }, o.headers || {});
  const res = await send(method, path, o);
  if (!res.ok) {
    const p = await problemOf(res);
    if (session && !token() && p && (p.code === 'session-expired' || p.code === 'session-invalid')) signInAgain();
    throw new ApiError(res.status, p, res.headers);
  }
  const data = res.status === 204 ? null : await res.json();
  return { data, headers: res.headers, status: res.status };
}

// run wraps a user action: clears the last error, shows the new one.
function run(context, fn) {
  return async (ev) => {
    if (ev && ev.preventDefault) ev.preventDefault();
    clearError();
    try {
      await fn(ev);
    } catch (err) {
      showError(err, context);
    }
  };
}

// ---- token and tabs --------------------------------------------------

function claims(tok) {
  try {
    const part = tok.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part + '==='.slice((part.length + 3) % 4)));
  } catch (e) {
    return null;
  }
}

// signInAgain sends the person to the identity provider and back here.
function signInAgain() {
  location.assign('/auth/login?return_to=' + encodeURIComponent(location.pathname + location.search + location.hash));
}

// checkSession asks the service who the session cookie belongs to, and
// whether sign-in at an identity provider is offered at all.
async function checkSession() {
  session = null;
  const res = await fetch('/auth/me', { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } });
  if (res.ok) {
    const me = await res.json();
    if (me.via === 'session') session = me;
  }
  if (!session) {
    const probe = await fetch('/auth/login', { credentials: 'omit', redirect: 'manual', cache: 'no-store' });
    $('signin-oidc').hidden = probe.type !== 'opaqueredirect';
  }
}

async function signOut() {
  const res = await fetch('/auth/logout', {
    method: 'POST', credentials: 'same-origin', cache: 'no-store', headers: { 'X-XSRF-TOKEN': cookie('XSRF-TOKEN') },
  });
  session = null;
  document.body.replaceChildren(); // nothing of the person stays on screen
  if (res.status === 200) {
    const out = await res.json();
    location.assign(out.end_session_url);
    return;
  }
  location.replace('/ui/');
}

function showSignedIn() {
  $('signout').hidden = !session || token() !== '';
  $('signin').hidden = !!session && token() === '';
  if (session && !token()) {
    $('tabs').hidden = false;
    const groups = session.groups.length ? ', groups ' + session.groups.join(', ') : '';
    $('who').textContent = 'Signed in as ' + session.sub + (session.role ? ' (' + session.role + ')' : '') + groups + '.';
    const byRole = { professor: 'grades', student: 'grades', developer: 'builds' };
    showView(byRole[session.role] || 'accounts', false);
    return;
  }
  const tok = token();
  const c = tok ? claims(tok) : null;
  $('tabs').hidden = !tok;
  if (!tok) {
    $('who').textContent = 'Not signed in.';
    showView(null);
    return;
  }
  // For display only: the service decides what the token may do.
  const role = c && typeof c.role === 'string' && c.role ? ' (' + c.role + ')' : '';
  $('who').textContent = c && c.sub ? 'Signed in as ' + c.sub + role + '.' : 'A token is set.';
  const byRole = { professor: 'grades', student: 'grades', developer: 'builds' };
  showView((c && byRole[c.role]) || 'accounts', false);
}

const VIEWS = ['builds', 'grades', 'accounts'];

function showView(name, focus) {
  for (const v of VIEWS) {
    $(v).hidden = v !== name;
    $('tab-' + v).setAttribute('aria-pressed', String(v === name));
  }
  if (name === 'grades') loadClasses();
  if (focus !== false && name) focusHeading(name + '-h');
}

// ---- builds: projects -> plans -> results -> artifacts ----------------

const results = { plan: null, start: 0 };

async function loadProjects() {
  say('Loading projects…');
  const { data } = await api('GET', '/rest/api/latest/project?expand=projects.project.plans&max-results=100');
  const box = $('projects');
  box.replaceChildren();
  const projects = (data.projects && data.projects.project) || [];
  if (projects.length === 0) box.append(el('p', { text: 'No projects are visible to you.' }));
  for (const p of projects) {
    const plans = (p.plans && p.plans.plan) || [];
    const list = el('ul', { class: 'plans' });
    for (const plan of plans) {
      list.append(el('li', {},
        el('button', { type: 'button', class: 'link', 'data-plan': plan.key, onclick: run('Results', () => showResults(plan, 0)) },
          plan.shortName || plan.name || plan.key),
        el('span', { class: 'muted', text: ' ' + plan.key + (plan.enabled === false ? ' (disabled)' : '') })));
    }
    box.append(el('div', { class: 'project' },
      el('h3', { text: p.name + ' (' + p.key + ')' }),
      p.description ? el('p', { class: 'muted', text: p.description }) : null,
      plans.length ? list : el('p', { text: 'No plans visible.' })));
  }
  say(projects.length + (projects.length === 1 ? ' project.' : ' projects.'));
}

async function showResults(plan, start) {
  results.plan = plan;
  results.start = start;
  say('Loading results of ' + plan.key + '…');
  // Bamboo answers results newest first; the facade keeps that order.
  const path = '/rest/api/latest/result/' + encodeURIComponent(plan.key) +
    '?expand=results.result.artifacts&max-results=' + RESULTS_PAGE + '&start-index=' + start;
  const { data } = await api('GET', path);
  const list = ((data.results && data.results.result) || []).slice().sort((a, b) => b.buildNumber - a.buildNumber);
  const body = $('results').tBodies[0];
  body.replaceChildren();
  for (const r of list) {
    const arts = (r.artifacts && r.artifacts.artifact) || [];
    const state = r.buildState || 'Unknown';
    body.append(el('tr', {},
      el('th', { scope: 'row', text: '#' + r.buildNumber }),
      el('td', {}, el('span', { class: 'state state-' + state.toLowerCase(), text: state + (r.lifeCycleState && r.lifeCycleState !== 'Finished' ? ' (' + r.lifeCycleState + ')' : '') })),
      el('td', { text: r.prettyBuildCompletedTime || r.buildCompletedTime || '' }),
      el('td', {}, el('button', { type: 'button', class: 'secondary', 'data-result': r.key,
        onclick: run('Artifacts', () => showArtifacts(r)) }, arts.length + (arts.length === 1 ? ' artifact' : ' artifacts')))));
  }
  if (list.length === 0) body.append(el('tr', {}, el('td', { colspan: '4', text: 'No results.' })));
  $('results-h').textContent = 'Results of ' + (plan.name || plan.key) + ', newest first';
  $('results-newer').hidden = start === 0;
  $('results-older').hidden = list.length < RESULTS_PAGE;
  $('results-panel').hidden = false;
  $('artifacts-panel').hidden = true;
  focusHeading('results-h');
  say(list.length + (list.length === 1 ? ' result shown.' : ' results shown.'));
}

function showArtifacts(result) {
  const arts = (result.artifacts && result.artifacts.artifact) || [];
  const ul = $('artifacts');
  ul.replaceChildren();
  for (const a of arts) {
    const href = a.link && a.link.href;
    ul.append(el('li', {},
      el('button', { type: 'button', class: 'link', 'data-artifact': a.name, disabled: !href,
        onclick: run('Download', () => download(href, a.name)) }, 'Download ' + a.name),
      el('span', { class: 'muted', text: a.prettySizeDescription ? ' ' + a.prettySizeDescription : '' })));
  }
  if (arts.length === 0) ul.append(el('li', { text: 'This result has no artifacts.' }));
  $('artifacts-h').textContent = 'Artifacts of ' + result.key;
  $('artifacts-panel').hidden = false;
  focusHeading('artifacts-h');
}

// download follows the artifact link the API returned (on this origin
// only) with the token, and hands the file to the browser as a download.
async function download(href, name) {
  say('Downloading ' + name + '…');
  const res = await send('GET', ownPath(href), { headers: { Accept: '*/*' } });
  if (!res.ok) throw new ApiError(res.status, await problemOf(res), res.headers);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: fileName(res.headers.get('Content-Disposition')) || name, class: 'visually-hidden' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say('Downloaded ' + name + '.');
}

// when writes an RFC 3339 time from the API as "2025-03-01 10:00:00 UTC".
function when(t) {
  return String(t).replace(/\.\d+/, '').replace('T', ' ').replace('Z', ' UTC');
}

function fileName(disposition) {
  const m = /filename="([^"]+)"/.exec(disposition || '');
  return m ? m[1] : '';
}

// ---- grades: class -> students -> set, conflicts, history --------------

const cls = { id: null, next: null, loaded: false };

async function loadClasses(force) {
  if (cls.loaded && !force) return;
  try {
    const { data } = await api('GET', '/class');
    const sel = $('class-select');
    sel.replaceChildren();
    for (const c of data.classes) sel.append(el('option', { value: c.class_id, 'data-grades': c.grades, text: c.class_id }));
    $('class-show').disabled = data.classes.length === 0;
    if (data.classes.length === 0) sel.append(el('option', { value: '', text: 'No classes: only professors see the classes they teach' }));
    cls.loaded = true;
  } catch (err) {
    showError(err, 'Classes');
  }
}

async function showClass() {
  const opt = $('class-select').selectedOptions[0];
  if (!opt || !opt.value) return;
  cls.id = opt.value;
  $('students').tBodies[0].replaceChildren();
  await loadStudents(ownPath(opt.dataset.grades + '?limit=' + CLASS_PAGE));
  $('class-h').textContent = 'Students of ' + cls.id;
  $('class-panel').hidden = false;
  $('history-panel').hidden = true;
  focusHeading('class-h');
}

async function loadStudents(path) {
  say('Loading students…');
  const { data } = await api('GET', path);
  const body = $('students').tBodies[0];
  for (const s of data.students) body.append(studentRow(s));
  if (data.size === 0) body.append(el('tr', {}, el('td', { colspan: '3', text: 'Nobody is enrolled.' })));
  cls.next = data.next || null;
  $('class-more').hidden = !cls.next;
  say(body.rows.length + ' of ' + data.size + ' students shown.');
}

function studentRow(s) {
  const row = el('tr', { 'data-student': s.student_id });
  fillStudentRow(row, s);
  return row;
}

// fillStudentRow (re)draws one student's row from a record; version is
// what the next change sends as If-Match.
function fillStudentRow(row, s) {
  const id = s.student_id;
  const selId = 'grade-' + id;
  const sel = el('select', { id: selId });
  for (const g of GRADES) sel.append(el('option', { value: g, text: g, selected: g === s.grade }));
  row.dataset.version = s.grade ? String(s.version) : '';
  const changed = s.updated_by ? 'by ' + s.updated_by + (s.updated_at ? ', ' + when(s.updated_at) : '') : '';
  row.replaceChildren(
    el('th', { scope: 'row', text: id }),
    el('td', {}, el('span', { class: 'grade', text: s.grade || 'none yet' }),
      changed ? el('span', { class: 'muted changed', text: changed }) : null),
    el('td', { class: 'row-actions' },
      el('label', { for: selId, class: 'visually-hidden', text: 'New grade for ' + id }),
      sel,
      el('button', { type: 'button', 'data-save': id, onclick: run('Grade of ' + id, () => saveGrade(row, id, sel.value)) },
        s.grade ? 'Change' : 'Set'),
      el('button', { type: 'button', class: 'secondary', 'data-history': id,
        onclick: run('History of ' + id, () => showHistory(id)) }, 'History'))
  );
}

function gradePath(id) {
  return '/student/' + encodeURIComponent(id) + '/english/grade';
}

// saveGrade creates the grade (POST) or changes the version this row shows
// (PUT with If-Match). When someone else got there first, the row is
// redrawn with the current value and the conflict is said plainly.
async function saveGrade(row, id, grade) {
  const version = row.dataset.version;
  say('Saving the grade of ' + id + '…');
  try {
    const { data } = version
      ? await api('PUT', gradePath(id), { body: { grade }, headers: { 'If-Match': '"' + version + '"' } })
      : await api('POST', gradePath(id), { body: { grade } });
    fillStudentRow(row, data);
    say('Saved: ' + id + ' now has ' + data.grade + ' (version ' + data.version + ').');
    row.querySelector('[data-save]').focus();
  } catch (err) {
    if (!(err instanceof ApiError) || (err.status !== 412 && err.status !== 409)) throw err;
    const { data } = await api('GET', gradePath(id));
    fillStudentRow(row, data);
    const conflict = new ApiError(err.status, err.problem, null);
    conflict.message = 'Conflict: ' + data.updated_by + ' changed this grade to ' + data.grade +
      ' (version ' + data.version + ') while you were editing. Your ' + grade +
      ' was not saved. The current value is shown now; choose again to change it.';
    conflict.problem = null;
    throw conflict;
  }
}

async function showHistory(id) {
  say('Loading the history of ' + id + '…');
  const { data } = await api('GET', gradePath(id) + '/history?limit=100');
  const ol = $('history');
  ol.replaceChildren();
  for (const v of data.versions) {
    const change = v.previous_grade ? v.previous_grade + ' → ' + v.grade : 'set to ' + v.grade;
    ol.append(el('li', { text: 'Version ' + v.version + ': ' + change + ' by ' + v.updated_by + ' at ' +
      when(v.updated_at) }));
  }
  $('history-h').textContent = 'History of ' + id + "'s english grade, newest first";
  $('history-panel').hidden = false;
  focusHeading('history-h');
  say(data.versions.length + (data.versions.length === 1 ? ' version.' : ' versions.'));
}

// ---- accounts: balances, statements, transfers -----------------------

// money writes an amount with as many decimals as its currency has (ISO
// 4217, which the browser knows: EUR 2, JPY 0, KWD 3), so 250 EUR reads
// "250.00 EUR" whatever the browser's language.
function money(amount, currency) {
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
  } catch (e) {
    // an unknown code: keep two decimals
  }
  return Number(amount).toFixed(digits) + ' ' + currency;
}

async function showAccounts() {
  const ids = $('account-ids').value.split(/[\s,]+/).filter(Boolean);
  const box = $('account-cards');
  box.replaceChildren();
  for (const id of ids) box.append(await accountCard(id));
  say(ids.length ? 'Accounts shown.' : 'Enter an account number.');
}

async function accountCard(id) {
  const base = '/rs/account/' + encodeURIComponent(id);
  const card = el('section', { class: 'card', 'data-account': id, 'aria-label': 'Account ' + id });
  try {
    const { data: acct } = await api('GET', base);
    const { data: st } = await api('GET', base + '/transfers?limit=20');
    const rows = st.transfers.map((t) => el('tr', {},
      el('td', { text: when(t.created_at) }),
      el('td', { text: t.direction === 'in' ? 'from ' + t.counterparty_account_id : 'to ' + t.counterparty_account_id }),
      el('td', { class: 'num', text: money(t.amount, t.currency) })));
    card.append(
      el('h4', { text: 'Account ' + acct.account_id + ' (' + acct.owner + ')' }),
      el('p', { class: 'balance', text: 'Balance: ' + money(acct.balance, acct.currency) }),
      rows.length
        ? el('div', { class: 'scroll' }, el('table', {},
          el('caption', { text: 'Latest transfers, newest first' }),
          el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'When' }), el('th', { scope: 'col', text: 'With' }), el('th', { scope: 'col', text: 'Amount' }))),
          el('tbody', {}, ...rows)))
        : el('p', { text: 'No transfers yet.' }));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    card.classList.add('card-error');
    card.append(el('h4', { text: 'Account ' + id }), el('p', { text: err.words() }));
  }
  return card;
}

// One attempt = one Idempotency-Key. The key is made on the first send
// of a filled-in form and kept until a field changes, so a second click
// or a retry after a lost answer repeats the same request and the service
// replays the first answer instead of moving the money again.
const attempt = { key: null };

async function transfer() {
  const from = $('transfer-from').value.trim();
  const to = $('transfer-to').value.trim();
  const amount = $('transfer-amount').value.trim();
  if (!from || !to || !amount) {
    say('Fill in both accounts and the amount.');
    return;
  }
  if (!attempt.key) attempt.key = randomHex(16);
  const button = $('transfer-send');
  button.disabled = true;
  const out = $('transfer-result');
  out.textContent = 'Sending…';
  try {
    const path = '/rs/transfer/from/' + encodeURIComponent(from) + '/to/' + encodeURIComponent(to) +
      '/amount/' + encodeURIComponent(amount);
    const { data, headers } = await api('POST', path, { headers: { 'Idempotency-Key': attempt.key } });
    const replayed = headers.get('Idempotent-Replayed') === 'true';
    out.textContent = (replayed ? 'Already done, not repeated: ' : 'Done: ') + money(data.amount, data.currency) +
      ' from ' + data.from_account_id + ' to ' + data.to_account_id + ' (transfer ' + data.transfer_id + ').';
    out.dataset.transfer = data.transfer_id;
    if ($('account-ids').value.trim()) await showAccounts();
  } catch (err) {
    out.textContent = 'Not done.';
    throw err;
  } finally {
    button.disabled = false;
  }
}

// ---- wiring ---------------------------------------------------------

function init() {
  $('token-form').addEventListener('submit', run('Token', () => {
    const tok = $('token').value.trim().replace(/^Bearer\s+/i, '');
    if (!tok) {
      say('Paste a token first.');
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, tok);
    $('token').value = '';
    cls.loaded = false;
    showSignedIn();
    say('Token set.');
  }));
  $('token-forget').addEventListener('click', run('Token', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignedIn();
    say('Token forgotten.');
  }));
  for (const v of VIEWS) $('tab-' + v).addEventListener('click', () => { clearError(); showView(v); });
  $('projects-load').addEventListener('click', run('Projects', loadProjects));
  $('results-older').addEventListener('click', run('Results', () => showResults(results.plan, results.start + RESULTS_PAGE)));
  $('results-newer').addEventListener('click', run('Results', () => showResults(results.plan, Math.max(0, results.start - RESULTS_PAGE))));
  $('class-form').addEventListener('submit', run('Class', showClass));
  $('class-more').addEventListener('click', run('Class', () => loadStudents(ownPath(cls.next))));
  $('account-form').addEventListener('submit', run('Accounts', showAccounts));
  $('transfer-form').addEventListener('submit', run('Transfer', transfer));
  for (const f of ['transfer-from', 'transfer-to', 'transfer-amount']) {
    $(f).addEventListener('input', () => { attempt.key = null; });
  }
  $('signout').addEventListener('click', run('Sign out', signOut));
  // A page brought back by the back button after sign-out must not show
  // the person: load it afresh.
  window.addEventListener('pageshow', (ev) => { if (ev.persisted) location.reload(); });
  checkSession().catch(() => {}).finally(() => {
    showSignedIn();
    document.body.dataset.ready = 'true';
  });
}

document.addEventListener('DOMContentLoaded', init);
