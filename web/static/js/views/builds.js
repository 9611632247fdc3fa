// Builds: projects and plans with each plan's latest state, a plan's
// results, one result's jobs and artifacts, and a job's log read in the
// page. Addresses: #/builds, #/builds/PROJ-CORE, #/builds/PROJ-CORE/from/10,
// #/builds/PROJ-CORE/6, #/builds/PROJ-CORE/6/log/JOB1. A running build's
// views ask again every few seconds with If-None-Match.

import {get, request, sameOrigin, enc} from '../api.js';
import {h, fill, when, duration, table, saveFile} from '../dom.js';

export const title = 'Builds';
export const allowed = () => true;

const REST = '/rest/api/latest';
const PAGE = 10; // results per page
const REFRESH_MS = 3000; // how often a running build is asked about again
const planKey = /^[A-Z][A-Z0-9]{0,63}-[A-Z0-9]{1,64}$/;
const jobKey = /^[A-Z0-9]{1,64}$/;

export async function render(ctx, parts) {
  const [plan, second, third, job] = parts;
  if (!plan) return overview(ctx);
  if (!planKey.test(plan)) return notFound(ctx);
  if (!second) return planResults(ctx, plan, 0);
  if (second === 'from' && /^\d+$/.test(third || '')) return planResults(ctx, plan, Number(third));
  if (!/^\d+$/.test(second)) return notFound(ctx);
  if (third === 'log' && jobKey.test(job || '')) return buildLog(ctx, plan, second, job);
  if (third) return notFound(ctx);
  return result(ctx, plan, second);
}

function notFound(ctx) {
  fill(ctx.el, h('h1', {}, 'Builds'), h('p', {}, 'There is no such build page. '),
    h('a', {href: '#/builds'}, 'Go to all projects'));
}

// stateOf gives a result's state at a glance: word, icon, colour class.
export function stateOf(r) {
  if (!r) return {word: 'Never built', icon: '○', cls: 'none'};
  if (r.lifeCycleState && !['Finished', 'NotBuilt'].includes(r.lifeCycleState)) {
    return {word: 'Running', icon: '◔', cls: 'running'};
  }
  if (r.buildState === 'Successful') return {word: 'Passed', icon: '✓', cls: 'ok'};
  if (r.buildState === 'Failed') return {word: 'Failed', icon: '✗', cls: 'bad'};
  return {word: 'Unknown', icon: '?', cls: 'none'};
}

function badge(r) {
  const s = stateOf(r);
  return h('span', {class: 'state ' + s.cls}, h('span', {'aria-hidden': 'true'}, s.icon + ' '), s.word);
}

const running = r => stateOf(r).cls === 'running';

function tests(r) {
  if (!r || r.successfulTestCount === undefined) return '—';
  const failed = r.failedTestCount || 0;
  return failed ? `${failed} failed, ${r.successfulTestCount} passed` : `${r.successfulTestCount} passed`;
}

const planOf = r => (r.planResultKey && r.planResultKey.entityKey && r.planResultKey.entityKey.key) || (r.plan && r.plan.key);

async function overview(ctx) {
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'), h('p', {}, 'Loading projects…'));
  const [projects, latest] = await Promise.all([
    get(REST + '/project?expand=projects.project.plans&max-results=100'),
    get(REST + '/result?expand=results.result&max-results=100'),
  ]);
  if (!ctx.alive()) return;
  const byPlan = new Map((latest.results.result || []).map(r => [planOf(r), r]));
  const list = (projects.projects.project || []);
  const sections = list.map(p => h('section', {class: 'project', 'aria-labelledby': 'p-' + p.key},
    h('h2', {id: 'p-' + p.key}, p.name + ' ', h('span', {class: 'key'}, p.key)),
    table('Plans of ' + p.name + ' with their latest build', ['Plan', 'Latest', 'Build', 'When'],
      ((p.plans && p.plans.plan) || []).map(pl => {
        const r = byPlan.get(pl.key);
        return h('tr', {'data-plan': pl.key},
          h('td', {}, h('a', {href: '#/builds/' + pl.key}, pl.shortName || pl.name)),
          h('td', {}, badge(r)),
          h('td', {}, r ? h('a', {href: `#/builds/${pl.key}/${r.buildNumber}`}, '#' + r.buildNumber) : '—'),
          h('td', {}, r ? when(r.buildCompletedTime || r.buildStartedTime) : '—'));
      }))));
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'),
    list.length ? sections : h('p', {}, 'There are no projects you may see. Ask your team lead for access if you need it.'));
  ctx.status(list.length + (list.length === 1 ? ' project shown.' : ' projects shown.'));
}

async function planResults(ctx, plan, start) {
  // One more than a page is asked for: its presence says an older page exists.
  const path = `${REST}/result/${enc(plan)}?expand=results.result&max-results=${PAGE + 1}&start-index=${start}&includeAllStates=true`;
  const draw = answer => {
    const all = answer.results.result || [];
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
      h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects')),
      h('h1', {tabindex: '-1', id: 'results-h'}, 'Results of ' + plan),
      rs.length ? table(`Results of ${plan}, newest first`, ['Build', 'State', 'Finished', 'Tests'], rows, {id: 'results'})
        : h('p', {}, 'This plan has no results yet.'),
      nav);
    ctx.status(rs.length + (rs.length === 1 ? ' result shown.' : ' results shown.'));
    return rs.some(running);
  };
  const answer = await request(path, {conditional: true});
  if (!ctx.alive()) return;
  if (draw(answer.data)) refreshWhileRunning(ctx, path, draw);
}

// refreshWhileRunning asks path again every REFRESH_MS with If-None-Match
// and redraws on a change, until nothing runs or the view is left.
function refreshWhileRunning(ctx, path, draw) {
  let stop = false;
  ctx.every(REFRESH_MS, async () => {
    if (stop) return;
    try {
      const a = await request(path, {conditional: true});
      if (ctx.alive() && !a.notModified) stop = !draw(a.data);
    } catch (err) {
      ctx.fail(err);
    }
  });
}

const resultPath = (plan, n) => `${REST}/result/${enc(plan)}-${enc(n)}?expand=stages.stage.results.result,artifacts`;

function jobsOf(r) {
  return ((r.stages && r.stages.stage) || []).flatMap(s => (s.results && s.results.result) || []);
}

function shortJob(jobResultKey, plan, n) {
  // PROJ-CORE-JOB1-6 -> JOB1
  return jobResultKey.slice(plan.length + 1, jobResultKey.length - String(n).length - 1);
}

async function result(ctx, plan, n) {
  const path = resultPath(plan, n);
  const draw = r => {
    const jobs = jobsOf(r);
    const artifacts = (r.artifacts && r.artifacts.artifact) || [];
    fill(ctx.el, 
      h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', h('a', {href: '#/builds/' + plan}, plan)),
      h('h1', {tabindex: '-1', id: 'result-h'}, `${plan} #${n} `, badge(r)),
      h('dl', {class: 'facts'},
        h('dt', {}, 'Started'), h('dd', {}, when(r.buildStartedTime)),
        h('dt', {}, 'Finished'), h('dd', {}, running(r) ? 'still running' : when(r.buildCompletedTime)),
        h('dt', {}, 'Duration'), h('dd', {}, duration(r.buildDurationInSeconds)),
        h('dt', {}, 'Tests'), h('dd', {}, tests(r))),
      h('h2', {}, 'Jobs'),
      jobs.length ? table(`Jobs of ${plan} #${n}`, ['Job', 'State', 'Log'], jobs.map(j => {
        const short = shortJob(j.buildResultKey || j.key, plan, n);
        return h('tr', {'data-job': short},
          h('td', {}, j.jobName || short),
          h('td', {}, badge(j)),
          h('td', {}, h('a', {href: `#/builds/${plan}/${n}/log/${short}`}, 'Read the log of ' + (j.jobName || short))));
      }), {id: 'jobs'}) : h('p', {}, 'No jobs.'),
      h('h2', {}, 'Artifacts'),
      artifacts.length ? h('ul', {id: 'artifacts', class: 'plain'}, artifacts.map(a => h('li', {},
        h('button', {type: 'button', class: 'secondary', 'data-artifact': a.name, onclick: () => download(ctx, a)},
          'Download ' + a.name), ' ', h('span', {class: 'hint'}, a.prettySizeDescription || ''))))
        : h('p', {}, 'This build kept no artifacts.'));
    return running(r);
  };
  const answer = await request(path, {conditional: true});
  if (!ctx.alive()) return;
  if (draw(answer.data)) refreshWhileRunning(ctx, path, draw);
  ctx.status(`Build ${plan} #${n}.`);
}

async function download(ctx, artifact) {
  const path = sameOrigin(artifact.link && artifact.link.href);
  if (!path) return ctx.fail({code: 'not-found'});
  ctx.status('Downloading ' + artifact.name + '…');
  try {
    const res = await request(path, {raw: true, accept: '*/*'});
    const blob = await res.blob();
    if (!ctx.alive()) return;
    saveFile(blob, artifact.name);
    ctx.status('Downloaded ' + artifact.name + '.');
  } catch (err) {
    ctx.fail(err);
  }
}

// buildLog streams a job's log through the facade's download route into
// the page, chunk by chunk, so a long log shows while it arrives.
async function buildLog(ctx, plan, n, job) {
  const r = (await request(resultPath(plan, n))).data;
  if (!ctx.alive()) return;
  const key = `${plan}-${job}-${n}`;
  const log = ((r.artifacts && r.artifacts.artifact) || []).find(a =>
    a.producerJobKey === key && a.link && /\/build_logs\//.test(a.link.href));
  const pre = h('pre', {id: 'log', tabindex: '0', 'aria-label': `Log of ${job}`});
  fill(ctx.el, 
    h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', h('a', {href: '#/builds/' + plan}, plan),
      ' › ', h('a', {href: `#/builds/${plan}/${n}`}, '#' + n)),
    h('h1', {tabindex: '-1', id: 'log-h'}, `Log of ${job} in ${plan} #${n}`),
    log ? pre : h('p', {}, 'This job kept no log.'));
  if (!log) return;
  const res = await request(sameOrigin(log.link.href), {raw: true, accept: 'text/plain, */*'});
  const reader = res.body.getReader();
  const text = new TextDecoder();
  let lines = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (!ctx.alive()) return reader.cancel();
    if (done) break;
    const chunk = text.decode(value, {stream: true});
    lines += chunk.split('\n').length - 1;
    pre.append(chunk);
  }
  pre.append(text.decode());
  ctx.status(`Log of ${job}: ${lines} lines.`);
}
