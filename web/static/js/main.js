// The page's start: who is signed in (always from GET /auth/me, never
// from an unchecked token), the tabs, and the router that maps every
// address (#/builds/PROJ-CORE/6) to one view. Views live in views/, one
// module each; every call to the facade goes through api.js.

import * as api from './api.js';
import {explain, groupsIncomplete, nothingHere, roleMissing, signsOut} from './words.js';
import {h} from './dom.js';
import * as builds from './views/builds.js';
import * as grades from './views/grades.js';
import * as accounts from './views/accounts.js';

const views = {builds, grades, accounts};
const $ = id => document.getElementById(id);

let me = null; // {sub, role, groups, via} from /auth/me, or null
let current = null; // {ctx}: the view on screen
let generation = 0; // bumped on every render and sign-out: late answers of an old view are dropped

// startView is where a person lands: where they work (docs/contract.md
// §9), from what /auth/me says they have here: grading staff and students
// on grades, developers on builds, account holders on accounts. Someone
// with nothing here lands on the first view, which says so.
function startView(who) {
  const order = ['grades', 'builds', 'accounts'];
  return order.find(n => views[n].allowed(who)) || 'builds';
}

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  stopView();
  if (!me) {
    showSignIn();
    return;
  }
  // Someone with nothing here gets no tab at all (each would be blank),
  // and words saying what is missing.
  if (!Object.values(views).some(v => v.allowed(me))) {
    $('tabs').hidden = true;
    const ctx = makeContext(document.createElement('div'));
    current = {ctx};
    $('view').replaceChildren(h('h1', {tabindex: '-1'}, 'Nothing here for you yet'), h('p', {id: 'nothing'}, nothingHere(me)));
    return;
  }
  $('tabs').hidden = false;
  const name = parts.shift();
  const view = views[name];
  if (!view || !view.allowed(me)) {
    location.replace('#/' + startView(me));
    return;
  }
  for (const [n, v] of Object.entries(views)) {
    const tab = $('tab-' + n);
    tab.hidden = !v.allowed(me);
    if (n === name) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  const container = document.createElement('div');
  $('view').replaceChildren(container);
  const ctx = makeContext(container);
  current = {ctx};
  view.render(ctx, parts).catch(err => ctx.fail(err));
}

// makeContext is what a view may use: its container, the signed-in
// person, and ways to report. Everything is a no-op once the view is gone.
function makeContext(container) {
  const mine = ++generation;
  const ctx = {
    el: container,
    me,
    timers: [],
    alive: () => mine === generation,
    status(text) {
      if (ctx.alive()) $('status').textContent = text;
    },
    clearError() {
      if (ctx.alive()) $('error').hidden = true;
    },
    fail(err) {
      if (!ctx.alive()) return;
      if (signsOut(err)) {
        signOut(explain(err));
        return;
      }
      showError(explain(err));
    },
    every(ms, fn) {
      ctx.timers.push(setInterval(() => ctx.alive() && fn(), ms));
    },
    focus(el) {
      if (ctx.alive() && el) el.focus();
    },
  };
  clearMessages();
  return ctx;
}

function stopView() {
  if (current) current.ctx.timers.forEach(clearInterval);
  current = null;
}

function showError(text) {
  const e = $('error');
  e.textContent = text;
  e.hidden = false;
  e.focus();
}

function clearMessages() {
  $('error').hidden = true;
  $('error').textContent = '';
  $('status').textContent = '';
}

function showSignIn() {
  // The sign-in returns to the view this tab shows now, whichever tab and
  // whenever it was opened (also after someone signed out here).
  $('signin-link').href = '/auth/login?return_to=' + encodeURIComponent(location.pathname + location.hash);
  $('view').replaceChildren();
  $('tabs').hidden = true;
  $('signout').hidden = true;
  $('who').textContent = 'Not signed in.';
  $('signin').hidden = false;
}

async function signedIn(who) {
  me = Object.freeze({...who});
  $('signin').hidden = true;
  $('token').value = '';
  // Named, not labelled by the token's role: what a person may do is
  // said where it matters (a view-only class says "view only").
  $('who').textContent = 'Signed in as ' + me.sub;
  // Group grants cannot reach a person whose groups did not fit in the
  // sign-in's token: say so where they will see it, with whom to ask.
  $('groups-note').textContent = me.groups_incomplete ? groupsIncomplete : '';
  $('groups-note').hidden = !me.groups_incomplete;
  // A class shared without the role its grades need, beside other
  // sections: said where it lasts (with nothing else, the view says it).
  const roleNote = me.has && me.has.classes_need_role && !grades.allowed(me);
  $('role-note').textContent = roleNote ? roleMissing(me) : '';
  $('role-note').hidden = !roleNote;
  $('signout').hidden = false;
  if (!location.hash.replace(/^#\/?/, '')) location.replace('#/' + startView(me));
  else route();
  $('main').focus();
}

// signOut forgets everything of the person: credential, kept answers, the
// view and its timers, messages; the address goes back to the start so
// "back" shows nothing of theirs either.
async function signOut(message) {
  const wasSession = me && me.via === 'session';
  const sessionXSRF = wasSession ? me.xsrf_token : '';
  generation++;
  stopView();
  me = null;
  $('groups-note').hidden = true;
  $('role-note').hidden = true;
  api.forget();
  if (wasSession) {
    try {
      const {data} = await api.request('/auth/logout', {method: 'POST', headers: {'X-XSRF-TOKEN': sessionXSRF}});
      const end = data && data.end_session_url;
      if (end) {
        location.assign(end); // the provider signs out too, and comes back to /ui/
        return;
      }
    } catch { /* the session is gone either way */ }
  }
  clearMessages();
  history.replaceState(null, '', location.pathname);
  showSignIn();
  if (message) showError(message);
  else $('status').textContent = 'Signed out.';
}

async function useToken(e) {
  e.preventDefault();
  const t = $('token').value.trim();
  clearMessages();
  if (!t) {
    showError('Paste a token first.');
    return;
  }
  api.useToken(t);
  try {
    await signedIn(await api.get('/auth/me'));
  } catch (err) {
    api.forget();
    // A 401 whose answer names no reason still means this token was refused.
    showError(err.status === 401 && !err.fromServer ? 'That token was not accepted. Copy the whole token again, or get a new one.' : explain(err));
  }
}

// boot asks who the browser's session belongs to, if any.
async function boot() {
  $('token-form').addEventListener('submit', useToken);
  $('signout').addEventListener('click', () => signOut());
  $('signin-link').href = '/auth/login?return_to=' + encodeURIComponent(location.pathname + location.hash);
  window.addEventListener('hashchange', route); // signed out, route keeps the sign-in link's return address
  // A page restored from the back-forward cache may hold a previous view:
  // load it afresh, which asks who is signed in again.
  window.addEventListener('pageshow', e => e.persisted && location.reload());
  // /auth/me answers 200 signed in or not (no console error), and says
  // whether the organization's sign-in exists without starting one, which
  // would disturb a sign-in in progress in another tab.
  try {
    const who = await api.get('/auth/me');
    if (who.signed_in && who.via === 'session') {
      api.useSession(who.xsrf_token);
      await signedIn(who);
    } else if (!who.signed_in) {
      $('signin-sso').hidden = !who.sign_in;
      if (who.reason === 'session-expired') $('status').textContent = 'Your session ended. Sign in again.';
    }
  } catch { /* the service did not answer: only "use a token" is offered */ }
  if (!me) showSignIn();
  document.body.dataset.ready = 'true';
}

boot();
