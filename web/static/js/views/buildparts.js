// What the build views share: a result's state at a glance, the
// favourite star, a result's jobs and downloads, reading every page of a
// list, and asking again while a view shows something that can still
// change.

import {request, enc, sameOrigin, usingToken} from '../api.js';
import {h, saveFile} from '../dom.js';

export const REST = '/rest/api/latest';
// LIST_MAX is the page asked for when a view needs a whole list: the most
// the service answers in one page (docs/build-routes.md).
export const LIST_MAX = 1000;
// REFRESH_MS is how often a view that can still change asks again (a
// conditional request: an unchanged answer is a 304 with no body). With
// the service's own poll of the build server that keeps a change within
// 5 s of the page.
export const REFRESH_MS = 2000;

export const items = (list, item) => (list && list[item]) || [];
export const planOf = r => (r.planResultKey && r.planResultKey.entityKey && r.planResultKey.entityKey.key) || (r.plan && r.plan.key);

// stateOf gives a result's state at a glance: word, icon, colour class.
export function stateOf(r) {
  if (!r) return {word: 'Never built', icon: '○', cls: 'none'};
  if (['Queued', 'Pending'].includes(r.lifeCycleState)) return {word: 'Queued', icon: '◌', cls: 'running'};
  if (r.lifeCycleState && !['Finished', 'NotBuilt'].includes(r.lifeCycleState)) {
    return {word: 'Running', icon: '◔', cls: 'running'};
  }
  if (r.buildState === 'Successful') return {word: 'Passed', icon: '✓', cls: 'ok'};
  if (r.buildState === 'Failed') return {word: 'Failed', icon: '✗', cls: 'bad'};
  return {word: 'Unknown', icon: '?', cls: 'none'};
}

export function badge(r) {
  const s = stateOf(r);
  return h('span', {class: 'state ' + s.cls}, h('span', {'aria-hidden': 'true'}, s.icon + ' '), s.word);
}

export const running = r => stateOf(r).cls === 'running';
export const failed = r => stateOf(r).cls === 'bad';

// planName writes a plan as people know it, name first, key beside it.
export function planName(name, key) {
  return [name || key, ' ', h('span', {class: 'key'}, key)];
}

// star is the toggle that marks a plan as one of the person's favourites
// (kept by the service per person: POST/DELETE .../favourite).
export function star(ctx, plan, name, on, changed) {
  const b = h('button', {type: 'button', class: 'star', 'data-star': plan, 'aria-pressed': String(!!on),
    'aria-label': `Favourite: ${name}`}, h('span', {'aria-hidden': 'true'}, on ? '★' : '☆'));
  b.addEventListener('click', async () => {
    const now = b.getAttribute('aria-pressed') !== 'true';
    try {
      await request(`${REST}/plan/${enc(plan)}/favourite`, {method: now ? 'POST' : 'DELETE'});
    } catch (err) {
      return ctx.fail(err);
    }
    if (!ctx.alive()) return;
    b.setAttribute('aria-pressed', String(now));
    b.firstChild.textContent = now ? '★' : '☆';
    if (changed) await changed(now);
    ctx.status(now ? `${name} is one of your favourites.` : `${name} is no longer one of your favourites.`);
  });
  return b;
}

const pageURL = (path, start, size) => `${path}${path.includes('?') ? '&' : '?'}max-results=${size}&start-index=${start}`;

/**
 * readPages reads every page of a list (list: 'projects', 'results'), each
 * with If-None-Match, the pages after the first four at a time, from
 * start. How many there are comes from the first page's size when it
 * counts the whole list, else from expect (a number, or a promise of one:
 * the most items the list can hold, such as one latest result per plan),
 * and then pages are read on until one comes back short (Bamboo's result
 * lists count only the page in size). onPage, when given, sees each
 * answer as it arrives (in order), so a view draws a list while the rest
 * of it comes; size is the page asked for (smaller pages: each answer is
 * read and parsed in a shorter task). It answers the answers in order,
 * and whether any page changed since the last read.
 */
export async function readPages(path, list, expect = 0, onPage = null, start = 0, size = LIST_MAX) {
  const answers = [];
  const got = a => { answers.push(a); if (onPage) onPage(a); return a; };
  const first = got(await request(pageURL(path, start, size), {conditional: true}));
  const count = a => items(a.data[list], list.slice(0, -1)).length;
  const full = a => count(a) === size;
  let total = Number((first.data[list] || {}).size) || 0;
  const counted = total > size; // size is the list's total, not the page's
  if (full(first) && !counted) total = await expect;
  const starts = [];
  for (let s = start + size; full(first) && s < total; s += size) starts.push(s);
  for (let i = 0; i < starts.length; i += 4) {
    const asked = starts.slice(i, i + 4).map(s => request(pageURL(path, s, size), {conditional: true}));
    for (const a of asked) got(await a);
  }
  while (!counted && full(answers[answers.length - 1])) {
    got(await request(pageURL(path, start + answers.length * size, size), {conditional: true}));
  }
  return {answers, changed: answers.some(a => !a.notModified)};
}

/**
 * poll calls ask every REFRESH_MS while the view is shown and the tab is
 * visible (a hidden tab asks nothing; coming back it asks at once), one
 * call at a time, until ask answers false.
 */
export function poll(ctx, ask) {
  let stopped = false, busy = false;
  const tick = async () => {
    if (stopped || busy || document.hidden || !ctx.alive()) return;
    busy = true;
    try {
      if (await ask() === false) stopped = true;
    } catch (err) {
      ctx.fail(err);
    } finally {
      busy = false;
    }
  };
  ctx.every(REFRESH_MS, tick);
  const shown = () => {
    if (!ctx.alive() || stopped) document.removeEventListener('visibilitychange', shown);
    else if (!document.hidden) tick();
  };
  document.addEventListener('visibilitychange', shown);
}

// A result with its jobs and, below each job, its failing tests with their
// errors: Bamboo lists tests on job results only (a plan result carries
// their counts), so its own clients ask for them through the stages.
export const resultPath = (plan, n) => `${REST}/result/${enc(plan)}-${enc(n)}?expand=stages.stage.results.result.testResults.failedTests.testResult.errors,artifacts,changes`;

export function jobsOf(r) {
  return items(r.stages, 'stage').flatMap(s => items(s.results, 'result'));
}

export function shortJob(jobResultKey, plan, n) {
  // PROJ-CORE-JOB1-6 -> JOB1
  return jobResultKey.slice(plan.length + 1, jobResultKey.length - String(n).length - 1);
}

// jobNames maps a job result key (PROJ-CORE-JOB1-6) to the job's name.
export function jobNames(r) {
  return new Map(jobsOf(r).map(j => [j.buildResultKey || j.key, j.jobName]));
}

export const isLog = a => a.link && /\/build_logs\//.test(a.link.href || '');

// downloadLink is a real link to the service's download route: the
// browser saves it under the name the server gives (Content-Disposition).
export function downloadLink(ctx, a, text, attrs = {}) {
  const href = sameOrigin(a.link && a.link.href);
  if (!href) return h('span', {}, text);
  return h('a', {href, download: '', ...attrs, onclick: e => download(ctx, e, href, a.name)}, text);
}

// download lets the browser follow the link on a session (the cookie
// authorizes the GET). A pasted token cannot ride on a link, so in token
// mode, and there only, the file is fetched and handed over from memory.
async function download(ctx, e, href, name) {
  if (!usingToken()) return; // the browser downloads it itself
  e.preventDefault();
  ctx.status('Downloading ' + name + '…');
  try {
    const res = await request(href, {raw: true, accept: '*/*'});
    const cd = res.headers.get('Content-Disposition') || '';
    const m = cd.match(/filename\*=UTF-8''([^;]+)/i) || cd.match(/filename="([^"]+)"/i);
    const blob = await res.blob();
    if (!ctx.alive()) return;
    saveFile(blob, m ? decodeURIComponent(m[1]) : name);
    ctx.status('Downloaded ' + name + '.');
  } catch (err) {
    ctx.fail(err);
  }
}
