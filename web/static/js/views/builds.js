// Builds: projects and plans with each plan's latest state, a search over
// plan names and keys and the person's favourites first; a plan's branches
// and results; a result that says why it failed first (failing jobs,
// failing tests, commits); every job's log read in the page, with line
// numbers, a link to each line and a search. Addresses: #/builds,
// #/builds/PROJ-CORE, #/builds/PROJ-CORE/from/10, #/builds/PROJ-CORE/6,
// #/builds/PROJ-CORE/6/log/JOB1, #/builds/PROJ-CORE/6/log/JOB1/120 (a
// line), #/builds/PROJ-CORE/trend and #/builds/PROJ-CORE/tests (builds and
// tests over time, history.js). The overview is overview.js. A view that can still change (a
// plan's newest results, a running build, a running job's log) asks again
// every two seconds with If-None-Match while it is shown (buildparts.js).
//
// Artifacts and logs are real links to the service's download routes: the
// browser downloads them itself (its progress, pause and resume), named by
// the server's Content-Disposition, authorized by the session cookie.
// Nothing is fetched into the tab, except in "use a token" mode, where a
// link cannot carry the token (see download()).

import {get, request, enc} from '../api.js';
import {h, fill, when, duration, table} from '../dom.js';
import {REST, items, badge, running, failed, star, planName, poll, resultPath, jobsOf, shortJob, jobNames, isLog, downloadLink} from './buildparts.js';
import {overview} from './overview.js';
import {buildLog} from './log.js';
import {trend, tests as testsView, history, verdict, labels, recentChart} from './history.js';

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
  if (second === 'trend' && (!third || (/^\d+$/.test(third) && !job))) return trend(ctx, plan, third ? Number(third) : undefined);
  if (second === 'tests' && !third) return testsView(ctx, plan);
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
  const recent = h('div', {id: 'recent-box'}); // the newest builds' chart, drawn once it is here
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
      h('nav', {class: 'subnav', 'aria-label': 'Views of this plan'},
        h('a', {href: '#/builds/' + plan, 'aria-current': 'page'}, 'Results'),
        h('a', {href: `#/builds/${plan}/trend`}, 'Builds over time'),
        h('a', {href: `#/builds/${plan}/tests`}, 'Tests over time')),
      info.master ? h('p', {}, 'A branch of ', h('a', {href: '#/builds/' + info.master.key}, planName(info.master.shortName || info.master.name, info.master.key))) : null,
      start === 0 ? recent : null,
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
  if (start === 0) recentChart(ctx, plan, recent);
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

// firstLine and rest split a test failure's message from its stack.
const firstLine = s => String(s || '').split('\n')[0];
const restLines = s => String(s || '').split('\n').slice(1).join('\n');

async function result(ctx, plan, n) {
  const path = resultPath(plan, n);
  let past = null; // the plan's tests over its last builds: what each failure is
  let last = null;
  const draw = r => {
    last = r;
    const jobs = jobsOf(r);
    const names = jobNames(r);
    const artifacts = items(r.artifacts, 'artifact');
    const logs = new Map(artifacts.filter(isLog).map(a => [a.producerJobKey, a]));
    const files = artifacts.filter(a => !isLog(a));
    const name = r.planName || (r.plan && r.plan.shortName) || plan;
    const failingJobs = jobs.filter(failed);
    // A plan result lists no tests (Bamboo keeps them per job): the
    // failing tests are its jobs'.
    const failingTests = jobs.flatMap(j => items(j.testResults && j.testResults.failedTests, 'testResult'));
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
        const v = past && past.rows.get(t.className + '#' + t.methodName);
        return h('li', {'data-test': t.className + '.' + t.methodName},
          h('p', {class: 'test-name'}, h('span', {class: 'key'}, t.className), ' ', h('strong', {}, t.methodName),
            v ? [' ', labels(verdict(v, past.builds, n))] : null),
          h('p', {class: 'test-message'}, firstLine(msg) || 'No message was recorded.'),
          stack ? h('details', {}, h('summary', {id: 'stack-' + i}, 'Stack of ' + t.methodName), h('pre', {class: 'stack'}, stack)) : null);
      })) : h('p', {}, r.failedTestCount ? `${r.failedTestCount} tests failed; the build server kept no details of them.` : 'No test failed: a step of the build did. Read the logs of the failing jobs.'),
      past ? h('p', {}, h('a', {href: `#/builds/${plan}/tests`, id: 'tests-link'}, 'These and other tests over the last builds')) : null,
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
  // A failed build's failing tests say whether they are new, failing
  // since an earlier build, or flaky: from the plan's test history,
  // drawn again once it is here (the result stays readable without it).
  if (!failed(answer.data) || running(answer.data)) return;
  try {
    const a = await history(plan);
    if (!ctx.alive()) return;
    past = {builds: a.builds || [], rows: new Map((a.tests || []).map(t => [t.class + '#' + t.method, t]))};
    draw(last);
  } catch {
    // Without the history the failures are shown as they are.
  }
}
