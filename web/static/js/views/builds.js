// Builds: projects and plans with each plan's latest state, a search over
// plan names and keys and the person's favourites first; a plan's branches
// and results; a result that says why it failed first (failing jobs,
// failing tests, commits); every job's log read in the page, with line
// numbers, a link to each line and a search. Addresses: #/builds,
// #/builds/PROJ-CORE, #/builds/PROJ-CORE/from/10, #/builds/PROJ-CORE/6,
// #/builds/PROJ-CORE/6/log/JOB1, #/builds/PROJ-CORE/6/log/JOB1/120 (a
// line). The overview is overview.js. A view that can still change (a
// plan's newest results, a running build, a running job's log) asks again
// every two seconds with If-None-Match while it is shown (buildparts.js).
//
// Artifacts and logs are real links to the service's download routes: the
// browser downloads them itself (its progress, pause and resume), named by
// the server's Content-Disposition, authorized by the session cookie.
// Nothing is fetched into the tab, except in "use a token" mode, where a
// link cannot carry the token (see download()).

import {get, request, sameOrigin, enc, usingToken} from '../api.js';
import {h, fill, when, duration, table, saveFile} from '../dom.js';
import {REST, items, badge, running, failed, star, planName, poll} from './buildparts.js';
import {overview} from './overview.js';

// Shown to whoever may see a build project here (/auth/me's has).
export const allowed = me => !me.has || me.has.builds;

const PAGE = 10; // results per page
const planKey = /^[A-Z][A-Z0-9]{0,63}-[A-Z0-9]{1,64}$/;
const jobKey = /^[A-Z0-9]{1,64}$/;

export async function render(ctx, parts) {
  const [plan, second, third, job, line] = parts;
  if (!plan) return overview(ctx);
  if (!planKey.test(plan)) return notFound(ctx);
  if (!second) return planResults(ctx, plan, 0);
  if (second === 'from' && /^\d+$/.test(third || '')) return planResults(ctx, plan, Number(third));
  if (!/^\d+$/.test(second)) return notFound(ctx);
  if (third === 'log' && jobKey.test(job || '') && (line === undefined || /^\d+$/.test(line))) {
    return buildLog(ctx, plan, second, job, line ? Number(line) : 0);
  }
  if (third) return notFound(ctx);
  return result(ctx, plan, second);
}

function notFound(ctx) {
  fill(ctx.el, h('h1', {}, 'Builds'), h('p', {}, 'There is no such build page. '),
    h('a', {href: '#/builds'}, 'Go to all projects'));
}

function tests(r) {
  if (!r || r.successfulTestCount === undefined) return '—';
  const n = r.failedTestCount || 0;
  return n ? `${n} failed, ${r.successfulTestCount} passed` : `${r.successfulTestCount} passed`;
}


// sizeText writes a byte count for people: 1.2 MiB.
function sizeText(n) {
  if (typeof n !== 'number') return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return i ? `${n.toFixed(n < 10 ? 1 : 0)} ${units[i]}` : `${n} bytes`;
}

// "/" focuses the plan search, as on code hosts, unless one is typing. The
// key's default (a browser's quick find) is stopped on keydown; the focus
// moves on keyup, once the key has been handled, so no "/" is typed.
function searchKey(e) {
  const box = document.getElementById('plan-search');
  if (e.key !== '/' || !box || e.ctrlKey || e.metaKey || e.altKey) return null;
  const t = e.target;
  if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return null;
  return box;
}
document.addEventListener('keydown', e => { if (searchKey(e)) e.preventDefault(); });
document.addEventListener('keyup', e => {
  const box = searchKey(e);
  if (box) box.focus();
});

async function planResults(ctx, plan, start) {
  // One more than a page is asked for: its presence says an older page exists.
  const path = `${REST}/result/${enc(plan)}?expand=results.result&max-results=${PAGE + 1}&start-index=${start}&includeAllStates=true`;
  const [info, first] = await Promise.all([
    get(`${REST}/plan/${enc(plan)}?expand=branches`),
    request(path, {conditional: true}),
  ]);
  if (!ctx.alive()) return;
  const name = info.shortName || info.name || plan;
  const branches = items(info.branches, 'branch');
  const branchTable = h('div', {id: 'branches-box'});
  const draw = answer => {
    const all = items(answer.results, 'result');
    const rs = all.slice(0, PAGE);
    const rows = rs.map(r => h('tr', {'data-result': r.buildResultKey || r.key},
      h('td', {}, h('a', {href: `#/builds/${plan}/${r.buildNumber}`}, '#' + r.buildNumber)),
      h('td', {}, badge(r)),
      h('td', {}, when(r.buildCompletedTime || r.buildStartedTime),
        h('span', {class: 'hint block'}, 'took ' + duration(r.buildDurationInSeconds))),
      h('td', {}, tests(r))));
    const nav = h('div', {class: 'actions'},
      start > 0 ? h('a', {class: 'button secondary', id: 'results-newer', href: start - PAGE > 0 ? `#/builds/${plan}/from/${start - PAGE}` : `#/builds/${plan}`}, 'Newer results') : null,
      all.length > PAGE ? h('a', {class: 'button secondary', id: 'results-older', href: `#/builds/${plan}/from/${start + PAGE}`}, 'Older results') : null);
    fill(ctx.el,
      h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', info.projectName || plan.split('-')[0]),
      h('h1', {tabindex: '-1', id: 'results-h'}, planName(name, plan), ' ', star(ctx, plan, name, info.isFavourite)),
      info.master ? h('p', {}, 'A branch of ', h('a', {href: '#/builds/' + info.master.key}, planName(info.master.shortName || info.master.name, info.master.key))) : null,
      branches.length ? [h('h2', {}, 'Branches'), branchTable] : null,
      h('h2', {}, 'Results'),
      rs.length ? table(`Results of ${name}, newest first`, ['Build', 'State', 'Finished', 'Tests'], rows, {id: 'results'})
        : h('p', {}, 'This plan has no results yet.'),
      nav);
    ctx.status(rs.length + (rs.length === 1 ? ' result shown.' : ' results shown.'));
    return rs.some(running);
  };
  if (draw(first.data) || start === 0) watch(ctx, path, draw, start === 0);
  if (branches.length) drawBranches(ctx, branchTable, branches);
}

// drawBranches shows each branch with its own latest state.
async function drawBranches(ctx, box, branches) {
  const latest = await Promise.all(branches.map(b =>
    get(`${REST}/result/${enc(b.key)}?expand=results.result&max-results=1&includeAllStates=true`)
      .then(a => items(a.results, 'result')[0], () => undefined)));
  if (!ctx.alive()) return;
  fill(box, table('Branches with their latest build', ['Branch', 'Latest', 'Build', 'When'], branches.map((b, i) => {
    const r = latest[i];
    const name = b.shortName || b.name;
    return h('tr', {'data-branch': b.key},
      h('td', {}, h('a', {href: '#/builds/' + b.key}, name), ' ', h('span', {class: 'key'}, b.key)),
      h('td', {}, badge(r)),
      h('td', {}, r ? h('a', {href: `#/builds/${b.key}/${r.buildNumber}`, 'aria-label': `${name} build ${r.buildNumber}`}, '#' + r.buildNumber) : '—'),
      h('td', {}, r ? when(r.buildCompletedTime || r.buildStartedTime) : '—'));
  }), {id: 'branches'}));
}

// watch asks path again (If-None-Match) while the view is shown and
// redraws on a change; draw answers whether the view can still change
// (something queued or running), and the asking stops when it cannot,
// unless always (the newest results of a plan, where a new build appears).
function watch(ctx, path, draw, always = false) {
  poll(ctx, async () => {
    const a = await request(path, {conditional: true});
    if (!ctx.alive() || a.notModified) return true;
    return draw(a.data) || always;
  });
}

const resultPath = (plan, n) => `${REST}/result/${enc(plan)}-${enc(n)}?expand=stages.stage.results.result,artifacts,changes,testResults.failedTests.testResult.errors`;

function jobsOf(r) {
  return items(r.stages, 'stage').flatMap(s => items(s.results, 'result'));
}

function shortJob(jobResultKey, plan, n) {
  // PROJ-CORE-JOB1-6 -> JOB1
  return jobResultKey.slice(plan.length + 1, jobResultKey.length - String(n).length - 1);
}

// jobNames maps a job result key (PROJ-CORE-JOB1-6) to the job's name.
function jobNames(r) {
  return new Map(jobsOf(r).map(j => [j.buildResultKey || j.key, j.jobName]));
}

const isLog = a => a.link && /\/build_logs\//.test(a.link.href || '');

// downloadLink is a real link to the service's download route: the
// browser saves it under the name the server gives (Content-Disposition).
function downloadLink(ctx, a, text, attrs = {}) {
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

// firstLine and rest split a test failure's message from its stack.
const firstLine = s => String(s || '').split('\n')[0];
const restLines = s => String(s || '').split('\n').slice(1).join('\n');

async function result(ctx, plan, n) {
  const path = resultPath(plan, n);
  const draw = r => {
    const jobs = jobsOf(r);
    const names = jobNames(r);
    const artifacts = items(r.artifacts, 'artifact');
    const logs = new Map(artifacts.filter(isLog).map(a => [a.producerJobKey, a]));
    const files = artifacts.filter(a => !isLog(a));
    const name = r.planName || (r.plan && r.plan.shortName) || plan;
    const failingJobs = jobs.filter(failed);
    const failingTests = items(r.testResults && r.testResults.failedTests, 'testResult');
    const changes = items(r.changes, 'change');
    const logLink = (j, short) => h('a', {href: `#/builds/${plan}/${n}/log/${short}`}, 'Read the log of ' + (j.jobName || short));

    const whyFailed = failed(r) ? [
      h('h2', {id: 'why'}, 'Why it failed'),
      failingJobs.length ? h('ul', {id: 'failing-jobs', class: 'plain'}, failingJobs.map(j => {
        const short = shortJob(j.buildResultKey || j.key, plan, n);
        return h('li', {'data-job': short}, badge(j), ' ', h('strong', {}, j.jobName || short), ' — ', logLink(j, short));
      })) : null,
      h('h3', {}, 'Failing tests'),
      failingTests.length ? h('ol', {id: 'failing-tests', class: 'tests'}, failingTests.map((t, i) => {
        const msg = items(t.errors, 'error').map(e => e.message).join('\n');
        const stack = restLines(msg);
        return h('li', {'data-test': t.className + '.' + t.methodName},
          h('p', {class: 'test-name'}, h('span', {class: 'key'}, t.className), ' ', h('strong', {}, t.methodName)),
          h('p', {class: 'test-message'}, firstLine(msg) || 'No message was recorded.'),
          stack ? h('details', {}, h('summary', {id: 'stack-' + i}, 'Stack of ' + t.methodName), h('pre', {class: 'stack'}, stack)) : null);
      })) : h('p', {}, r.failedTestCount ? `${r.failedTestCount} tests failed; the build server kept no details of them.` : 'No test failed: a step of the build did. Read the logs of the failing jobs.'),
      h('h3', {}, 'Commits'),
      changes.length ? h('ul', {id: 'commits', class: 'plain'}, changes.map(c => h('li', {},
        h('code', {}, String(c.changesetId || '').slice(0, 10)), ' ', c.comment || '', ' ',
        h('span', {class: 'hint'}, '— ' + (c.fullName || c.author || c.userName || 'someone'))))) : h('p', {}, 'No commits are recorded for this build.'),
    ] : null;

    const fileList = files.length ? h('ul', {id: 'artifacts', class: 'plain'}, files.map(a => {
      const job = names.get(a.producerJobKey) || shortJob(a.producerJobKey || '', plan, n);
      return h('li', {}, downloadLink(ctx, a, a.name, {'data-artifact': a.name}), ' ',
        h('span', {class: 'hint'}, [a.prettySizeDescription || sizeText(a.size), job ? 'from ' + job : ''].filter(Boolean).join(', ')));
    })) : h('p', {}, 'This build kept no artifacts.');

    fill(ctx.el,
      h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', h('a', {href: '#/builds/' + plan}, name)),
      h('h1', {tabindex: '-1', id: 'result-h'}, `${name} #${n} `, badge(r)),
      h('dl', {class: 'facts'},
        h('dt', {}, 'Plan'), h('dd', {}, planName(name, plan)),
        h('dt', {}, 'Duration'), h('dd', {}, duration(r.buildDurationInSeconds)),
        h('dt', {}, 'Finished'), h('dd', {}, running(r) ? 'still running' : when(r.buildCompletedTime)),
        h('dt', {}, 'Tests'), h('dd', {}, tests(r))),
      whyFailed,
      failed(r) ? null : [h('h2', {}, 'Artifacts'), fileList],
      h('h2', {}, 'Jobs'),
      jobs.length ? table(`Jobs of ${name} #${n}`, ['Job', 'State', 'Log'], jobs.map(j => {
        const key = j.buildResultKey || j.key;
        const short = shortJob(key, plan, n);
        const log = logs.get(key);
        return h('tr', {'data-job': short},
          h('td', {}, j.jobName || short, ' ', h('span', {class: 'key'}, short)),
          h('td', {}, badge(j)),
          h('td', {}, logLink(j, short),
            log ? h('span', {class: 'block'}, downloadLink(ctx, log, 'Download the log', {'data-log': short}), ' ',
              h('span', {class: 'hint'}, [log.prettySizeDescription || sizeText(log.size), 'of ' + (j.jobName || short)].filter(Boolean).join(', '))) : null));
      }), {id: 'jobs'}) : h('p', {}, 'No jobs.'),
      failed(r) ? [h('h2', {}, 'Artifacts'), fileList] : null);
    return running(r);
  };
  const answer = await request(path, {conditional: true});
  if (!ctx.alive()) return;
  if (draw(answer.data)) watch(ctx, path, draw);
  ctx.status(`Build ${plan} #${n}.`);
}

// errorLine marks the lines people look for in a failed build's log.
const errorLine = /\b(error|errors|fail|failed|failure|fatal|exception)\b|^\s*at\s|\[ERROR\]/i;

// buildLog shows a job's log in the page: from the job's build log file
// when Bamboo kept one, else from the job result's logEntries (a job whose
// log is only there, such as a packaging job). Lines are numbered, each
// has its own address, error lines are marked, and a search jumps between
// hits. Long logs are drawn in slices between frames, so the tab keeps
// answering while 10,000 lines appear.
async function buildLog(ctx, plan, n, job, line) {
  const r = (await request(resultPath(plan, n))).data;
  if (!ctx.alive()) return;
  const key = `${plan}-${job}-${n}`;
  const jobResult = jobsOf(r).find(j => (j.buildResultKey || j.key) === key);
  const jobName = (jobResult && jobResult.jobName) || job;
  const name = r.planName || plan;
  const file = items(r.artifacts, 'artifact').find(a => a.producerJobKey === key && isLog(a));
  const heading = h('h1', {tabindex: '-1', id: 'log-h'}, `Log of ${jobName} in ${name} #${n}`);
  const crumbs = h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', h('a', {href: '#/builds/' + plan}, name),
    ' › ', h('a', {href: `#/builds/${plan}/${n}`}, '#' + n));
  fill(ctx.el, crumbs, heading, h('p', {}, 'Loading the log…'));
  let lines;
  if (file) {
    const res = await request(sameOrigin(file.link.href), {raw: true, accept: 'text/plain, */*'});
    lines = (await res.text()).replace(/\r?\n$/, '').split(/\r?\n/);
  } else {
    const j = await get(`${REST}/result/${enc(key)}?expand=logEntries`);
    lines = items(j.logEntries, 'logEntry').map(e => e.unstyledLog !== undefined ? e.unstyledLog : e.log);
  }
  if (!ctx.alive()) return;
  if (!lines.length || (lines.length === 1 && lines[0] === '')) {
    fill(ctx.el, crumbs, heading, h('p', {}, 'This job kept no log.'));
    return;
  }
  const base = `#/builds/${plan}/${n}/log/${job}`;
  const box = h('div', {id: 'log', class: 'log', role: 'region', tabindex: '0', 'aria-label': `Log of ${jobName}, ${lines.length} lines`});
  const search = h('input', {type: 'search', id: 'log-search', autocomplete: 'off', 'aria-describedby': 'log-search-count'});
  const count = h('span', {id: 'log-search-count', class: 'hint', 'aria-live': 'polite'});
  const errors = lines.reduce((k, l) => k + (errorLine.test(l) ? 1 : 0), 0);
  fill(ctx.el, crumbs, heading,
    h('p', {class: 'hint log-lines'}, `${lines.length.toLocaleString('en')} lines`, errors ? `, ${errors.toLocaleString('en')} marked as errors` : '', '.',
      file ? [' ', downloadLink(ctx, file, 'Download the log', {'data-log': job})] : ' Read from the job result: the build server kept no log file for this job.'),
    h('form', {class: 'inline log-search', role: 'search', onsubmit: e => e.preventDefault()},
      h('label', {for: 'log-search'}, 'Search the log'), search,
      h('button', {type: 'button', id: 'log-next', class: 'secondary', onclick: () => jump(1)}, 'Next'),
      h('button', {type: 'button', id: 'log-prev', class: 'secondary', onclick: () => jump(-1)}, 'Previous'), count),
    box);

  // Lines are drawn in slices: each slice one DocumentFragment.
  const rows = new Array(lines.length);
  // A line's own address: the address bar changes without redrawing the
  // view. Declared before the first slice, which selects the address's
  // line when the log is short enough to be drawn in it.
  let selected = null;
  function select(no, scroll) {
    const row = rows[no - 1];
    if (!row) return;
    if (selected) selected.classList.remove('selected');
    selected = row;
    row.classList.add('selected');
    if (scroll) row.scrollIntoView({block: 'center'});
  }
  const started = performance.now();
  let drawn = 0, slices = 0;
  const slice = () => {
    if (!ctx.alive()) return;
    slices++;
    const frag = document.createDocumentFragment();
    const end = Math.min(lines.length, drawn + 2500);
    for (let i = drawn; i < end; i++) {
      const no = i + 1;
      const row = document.createElement('div');
      row.className = errorLine.test(lines[i]) ? 'line err' : 'line';
      row.id = 'L' + no;
      const a = document.createElement('a');
      a.className = 'ln';
      a.href = base + '/' + no;
      a.textContent = no;
      a.setAttribute('aria-label', 'Line ' + no);
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = lines[i];
      row.append(a, text);
      frag.append(row);
      rows[i] = row;
    }
    box.append(frag);
    drawn = end;
    if (drawn < lines.length) {
      requestAnimationFrame(slice);
      return;
    }
    box.dataset.drawnMs = String(Math.round(performance.now() - started));
    box.dataset.slices = String(slices);
    box.dataset.ready = 'true';
    if (line) select(line, true);
    ctx.status(`Log of ${jobName}: ${lines.length.toLocaleString('en')} lines.`);
  };
  slice();

  box.addEventListener('click', e => {
    const a = e.target.closest('a.ln');
    if (!a) return;
    e.preventDefault();
    history.pushState(null, '', a.getAttribute('href'));
    select(Number(a.textContent), false);
  });

  // Search: every hit marked, Next and Previous (Enter, Shift+Enter) jump.
  let hits = [], at = -1;
  search.addEventListener('input', () => {
    for (const i of hits) rows[i] && rows[i].classList.remove('hit', 'current');
    const q = search.value.toLowerCase();
    hits = [];
    if (q) lines.forEach((l, i) => { if (l.toLowerCase().includes(q)) hits.push(i); });
    for (const i of hits) rows[i] && rows[i].classList.add('hit');
    at = -1;
    count.textContent = q ? (hits.length ? `${hits.length} ${hits.length === 1 ? 'line matches' : 'lines match'}.` : 'No line matches.') : '';
  });
  search.addEventListener('keydown', e => {
    if (e.key === 'Enter') { e.preventDefault(); jump(e.shiftKey ? -1 : 1); }
  });
  function jump(step) {
    if (!hits.length) return;
    if (at >= 0 && rows[hits[at]]) rows[hits[at]].classList.remove('current');
    at = (at + step + hits.length) % hits.length;
    const row = rows[hits[at]];
    if (!row) return;
    row.classList.add('current');
    row.scrollIntoView({block: 'center'});
    count.textContent = `Line ${hits[at] + 1}: match ${at + 1} of ${hits.length}.`;
  }
}
