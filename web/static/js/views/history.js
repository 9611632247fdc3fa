// Builds over time (docs/contract.md §9): a plan's recent builds as a
// chart (#/builds/PROJ-CORE/trend, from GET /builds/{K-P}/trend), its
// tests across them (#/builds/PROJ-CORE/tests, from GET
// /builds/{K-P}/tests), and what a failing test's history says about one
// build: new, failing since #N (k builds), flaky (verdict, used by the
// result view).
//
// The chart is hand-written SVG: duration bars coloured by state, a
// failed bar also hatched and every bar labelled (colour is never the
// only sign), each bar a link to its result; the same numbers as a table
// below it. A charting library would bring tens of kilobytes, its own
// accessibility gaps and styles that the page's CSP refuses
// (style-src 'self': no inline style attributes), for one bar chart.

import {get, enc} from '../api.js';
import {h, fill, when, duration, table} from '../dom.js';
import {REST, planName} from './buildparts.js';
import {drawOnDemand} from '../slices.js';

export const TREND_LAST = 50, TESTS_LAST = 30;
const SVG = 'http://www.w3.org/2000/svg';
let charts = 0; // numbers the hatching pattern of each chart drawn

// s builds an SVG element (no HTML parsing, like h).
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// stateWord: a build's state in the chart and the tables.
const stateWord = st => ({Successful: 'Passed', Failed: 'Failed'}[st] || 'Unknown');
const stateCls = st => ({Successful: 'ok', Failed: 'bad'}[st] || 'none');
const short = rev => String(rev || '').slice(0, 10);

function crumbs(plan, name, here) {
  return h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ',
    h('a', {href: '#/builds/' + plan}, name), ' › ', here);
}

// nameOf is the plan's name as people know it (its key when unknown).
const nameOf = plan => get(`${REST}/plan/${enc(plan)}`).then(p => p.shortName || p.name || plan, () => plan);

function tabs(plan, current) {
  const link = (to, text) => h('a', {href: `#/builds/${plan}${to}`, 'aria-current': to === current ? 'page' : null}, text);
  return h('nav', {class: 'subnav', 'aria-label': 'Views of this plan'},
    link('', 'Results'), link('/trend', 'Builds over time'), link('/tests', 'Tests over time'));
}

/**
 * chart draws builds (newest first, as /trend answers) as SVG bars,
 * oldest on the left: height is the duration, colour and pattern the
 * state, each bar a link to the result with its words as its name.
 */
export function chart(plan, builds, room = 880) {
  const id = ++charts;
  const list = builds.slice().reverse();
  const bar = Math.max(12, Math.min(36, Math.floor((room - 64) / Math.max(1, list.length))));
  const left = 56, top = 10, height = 180, bottom = 34;
  const width = left + list.length * bar + 8;
  const max = Math.max(1, ...list.map(b => b.duration_ms || 0));
  const scale = v => height * v / max;
  const hatch = `hatch-${id}`;
  const bars = list.map((b, i) => {
    const hgt = Math.max(2, scale(b.duration_ms || 0));
    const x = left + i * bar + 1, y = top + height - hgt;
    const word = stateWord(b.state);
    const label = `Build ${b.number}: ${word}, took ${duration(Math.round((b.duration_ms || 0) / 1000))}`;
    return s('a', {href: `#/builds/${plan}/${b.number}`, 'aria-label': label, class: 'bar ' + stateCls(b.state), 'data-build': b.number},
      s('title', {}, label),
      s('rect', {x, y, width: bar - 2, height: hgt, class: 'fill'}),
      b.state === 'Failed' ? s('rect', {x, y, width: bar - 2, height: hgt, fill: `url(#${hatch})`, class: 'hatch'}) : null,
      // A letter at the bar's foot: state without colour.
      s('text', {x: x + (bar - 2) / 2, y: top + height + 13, 'text-anchor': 'middle', class: 'mark', 'aria-hidden': 'true'},
        b.state === 'Failed' ? '✗' : b.state === 'Successful' ? '✓' : '?'));
  });
  const every = Math.ceil(list.length / Math.floor((width - left) / 44));
  const numbers = list.map((b, i) => (list.length - 1 - i) % every === 0 // the newest always
    ? s('text', {x: left + i * bar + bar / 2, y: top + height + 28, 'text-anchor': 'middle', class: 'axis'}, '#' + b.number) : null);
  const ticks = [0, 0.5, 1].map(f => [
    s('line', {x1: left - 4, x2: width, y1: top + height - f * height, y2: top + height - f * height, class: 'grid'}),
    s('text', {x: left - 6, y: top + height - f * height + 4, 'text-anchor': 'end', class: 'axis'}, axisTime(f * max)),
  ]);
  const svg = s('svg', {width, height: top + height + bottom, viewBox: `0 0 ${width} ${top + height + bottom}`, class: 'trend',
    role: 'group', 'aria-label': `Duration of the last ${list.length} builds of ${plan}, oldest first`},
  s('defs', {}, s('pattern', {id: hatch, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)'},
    s('line', {x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line'}))),
  ticks, bars, numbers);
  return h('div', {class: 'chart scroll', id: 'trend-chart'}, svg);
}

// axisTime writes a duration short enough for the chart's axis.
const axisTime = ms => ms >= 60000 ? `${(ms / 60000).toFixed(ms >= 600000 ? 0 : 1)} min` : `${Math.round(ms / 1000)} s`;

function legend() {
  return h('p', {class: 'legend', id: 'trend-legend'},
    h('span', {class: 'key-ok'}, '✓ Passed: solid green'), ' ',
    h('span', {class: 'key-bad'}, '✗ Failed: hatched red'), ' ',
    h('span', {class: 'key-none'}, '? Other: grey'), ' ',
    h('span', {class: 'hint'}, 'Height is the duration; each bar opens its build.'));
}

function trendTable(plan, builds) {
  return table(`The last ${builds.length} builds of ${plan}, newest first`, ['Build', 'State', 'Duration', 'Tests', 'Finished'],
    builds.map(b => h('tr', {'data-build': b.number},
      h('td', {}, h('a', {href: `#/builds/${plan}/${b.number}`}, '#' + b.number)),
      h('td', {}, h('span', {class: 'state ' + stateCls(b.state)}, stateWord(b.state))),
      h('td', {}, duration(Math.round((b.duration_ms || 0) / 1000))),
      h('td', {}, countsText(b.tests)),
      h('td', {}, when(b.completed_at)))), {id: 'trend-table'});
}

const countsText = t => !t ? '—' : [`${t.passed} passed`, t.failed ? `${t.failed} failed` : '', t.skipped ? `${t.skipped} skipped` : ''].filter(Boolean).join(', ');

/** recentChart fills box on a plan's page with its last 20 builds' chart
 * (nothing when it has none, or the history cannot be read). */
export async function recentChart(ctx, plan, box) {
  let a;
  try {
    a = await get(`/builds/${enc(plan)}/trend?last=20`);
  } catch {
    return; // the results below say what there is
  }
  if (!ctx.alive() || !(a.builds || []).length) return;
  fill(box, h('h2', {}, 'Recent builds'), chart(plan, a.builds, box.clientWidth || 880),
    h('p', {class: 'hint'}, 'Height is the duration: ✓ passed (green), ✗ failed (hatched red). ',
      h('a', {href: `#/builds/${plan}/trend`}, 'Builds over time, with the numbers')));
}

// trend is the view #/builds/K-P/trend (the last TREND_LAST builds) and
// #/builds/K-P/trend/N (the last N, 1 to 100).
export async function trend(ctx, plan, last = TREND_LAST) {
  performance.mark('trend:start');
  last = Math.min(100, Math.max(1, last));
  const [a, name] = await Promise.all([get(`/builds/${enc(plan)}/trend?last=${last}`), nameOf(plan)]);
  if (!ctx.alive()) return;
  const builds = a.builds || [];
  const room = ctx.el.clientWidth || 880;
  const numbers = h('div', {id: 'trend-numbers'});
  fill(ctx.el, crumbs(plan, name, 'Builds over time'),
    h('h1', {tabindex: '-1'}, 'Builds over time of ', planName(name, plan)),
    tabs(plan, '/trend'),
    h('p', {class: 'hint', id: 'trend-last'}, 'Show the last ', [20, 50, 100].flatMap((n, i) => [i ? ', ' : '',
      n === last ? h('strong', {}, String(n)) : h('a', {href: `#/builds/${plan}/trend${n === TREND_LAST ? '' : '/' + n}`}, String(n))]), ' builds.'),
    builds.length ? [chart(plan, builds, room), legend(), h('h2', {}, 'The numbers'), numbers]
      : h('p', {}, 'This plan has no finished builds yet.'));
  const box = document.getElementById('trend-chart');
  if (box) box.scrollLeft = box.scrollWidth; // the newest builds in view
  // The table in a task of its own: the chart shows first.
  await new Promise(ok => setTimeout(ok, 0));
  if (!ctx.alive()) return;
  fill(numbers, trendTable(plan, builds));
  performance.mark('trend:drawn');
  ctx.status(`${builds.length} ${builds.length === 1 ? 'build' : 'builds'} shown.`);
}

/**
 * verdict says what a test's history (a row of /tests and its builds,
 * newest first) says about build n: {kind: 'new' | 'since' | 'passing',
 * since, count, flaky, text}. From n's point of view: its run of failures
 * back to the build where it began (a skipped or absent build neither
 * breaks nor extends it). null when n is not among the builds.
 */
export function verdict(row, builds, n) {
  const at = builds.findIndex(b => b.number === Number(n));
  if (at < 0) return null;
  let since = null, count = 0, open = true;
  if (row.outcomes[at] === 'failed') {
    for (let i = at; i < builds.length; i++) {
      const o = row.outcomes[i];
      if (o === 'passed') { open = false; break; }
      if (o === 'failed') { since = builds[i].number; count++; }
    }
  }
  const out = {kind: since === null ? 'passing' : since === Number(n) && !open ? 'new' : 'since', since, count, flaky: !!row.flaky};
  if (out.kind === 'new') out.text = 'New: first failed in this build';
  else if (out.kind === 'since') out.text = `Failing since #${since} (${count} ${count === 1 ? 'build' : 'builds'}${open ? ', or longer' : ''})`;
  else out.text = row.outcomes[at] === 'passed' ? 'Passed in this build' : 'Did not fail in this build';
  if (since === Number(n) && open && count === 1) out.text = `Failing since #${since} (1 build, or longer: the builds before it are outside the last ${builds.length})`;
  if (row.flaky && row.flaky_evidence) {
    const e = row.flaky_evidence;
    out.flakyText = `Flaky: passed in #${e.passed} and failed in #${e.failed}, both of revision ${short(e.vcs_revision)}`;
  }
  return out;
}

// labels are a verdict's words as badges.
export function labels(v) {
  if (!v) return null;
  return h('span', {class: 'verdicts'},
    v.kind === 'passing' ? null : h('span', {class: 'verdict ' + v.kind}, v.text),
    v.flakyText ? [' ', h('span', {class: 'verdict flaky'}, v.flakyText)] : null);
}

/** history reads /tests for a plan (the result view's labels). */
export const history = plan => get(`/builds/${enc(plan)}/tests?last=${TESTS_LAST}`);

const OUTCOME = {passed: ['✓', 'passed'], failed: ['✗', 'failed'], skipped: ['–', 'skipped'], absent: ['·', 'not run']};

// strip is a test's outcomes across the builds, oldest first, as marks
// (colour and symbol; a run of one outcome is one element, titled with
// its builds), with the whole of it in words for screen readers.
function strip(row, builds) {
  const marks = [];
  for (let i = builds.length - 1; i >= 0;) {
    const o = row.outcomes[i] || 'absent';
    let j = i;
    while (j > 0 && (row.outcomes[j - 1] || 'absent') === o) j--;
    const [sym, word] = OUTCOME[o] || OUTCOME.absent;
    const span = i === j ? `#${builds[i].number}` : `#${builds[i].number} to #${builds[j].number}`;
    marks.push(h('span', {class: 'o ' + o, title: `${span} ${word}`}, sym.repeat(i - j + 1)));
    i = j - 1;
  }
  const n = k => row.outcomes.filter(o => o === k).length;
  const words = `Oldest to newest: ${n('failed')} failed, ${n('passed')} passed` + (n('skipped') ? `, ${n('skipped')} skipped` : '') + (n('absent') ? `, ${n('absent')} not run` : '');
  return h('span', {class: 'strip'}, h('span', {'aria-hidden': 'true'}, marks), h('span', {class: 'visually-hidden'}, words));
}

// tests is the view #/builds/K-P/tests: every test that failed in the
// last builds, its outcome in each, what its history says, searchable;
// drawn STEP rows at a time.
export async function tests(ctx, plan) {
  performance.mark('tests:start');
  const [a, name] = await Promise.all([history(plan), nameOf(plan)]);
  if (!ctx.alive()) return;
  const builds = a.builds || [], all = (a.tests || []).map(t => ({...t, find: (t.class + ' ' + t.method).toLowerCase()}));
  const newest = builds.length ? builds[0].number : null;
  const box = h('div', {id: 'tests'}), more = h('div', {id: 'tests-more'});
  const makeRow = t => {
    const v = verdict(t, builds, newest);
    const error = String(t.latest_error || '').split('\n')[0];
    return h('tr', {'data-test': t.class + '.' + t.method},
      h('td', {}, h('span', {class: 'key block'}, t.class), h('strong', {class: 'block'}, t.method),
        labels(v), v && v.kind === 'passing' ? h('span', {class: 'hint block'}, 'Passing now') : null,
        error ? h('span', {class: 'test-message block'}, error) : null),
      h('td', {}, strip(t, builds), h('span', {class: 'hint block'}, `${t.failures} ${t.failures === 1 ? 'failure' : 'failures'}`)));
  };
  const search = h('input', {type: 'search', id: 'test-search', autocomplete: 'off', 'aria-describedby': 'test-search-hint', 'aria-controls': 'tests'});
  const none = h('p', {id: 'test-search-none', hidden: true}, 'No test matches. Try part of its class or method name.');
  const apply = () => {
    const q = search.value.trim().toLowerCase();
    const list = q ? all.filter(t => t.find.includes(q)) : all;
    drawOnDemand(box, more, list, makeRow, 'tests', {caption, heads, cols: ['w-test', 'w-outcomes']});
    none.hidden = list.length > 0;
    if (q) ctx.status(`${list.length} ${list.length === 1 ? 'test matches' : 'tests match'} “${search.value.trim()}”.`);
  };
  let typing = 0;
  search.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(apply, all.length > 300 ? 150 : 0); });
  const caption = `Tests that failed in the last ${builds.length} builds of ${plan}, failing now first`;
  const heads = ['Test, what its history says, its latest error', `Outcomes, #${builds.length ? builds[builds.length - 1].number : ''} to #${newest || ''}`];
  const tbl = h('div', {class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption}, box);
  fill(ctx.el, crumbs(plan, name, 'Tests over time'),
    h('h1', {tabindex: '-1'}, 'Tests over time of ', planName(name, plan)),
    tabs(plan, '/tests'),
    all.length ? [
      h('div', {class: 'search'}, h('label', {for: 'test-search'}, 'Find a test'), search,
        h('p', {class: 'hint', id: 'test-search-hint'}, 'By class or method name.')),
      h('p', {class: 'legend'}, 'Outcomes, oldest to newest: ✓ passed, ✗ failed, – skipped, · not run.'),
      tbl, more, none,
    ] : h('p', {}, builds.length ? `No test failed in the last ${builds.length} builds.` : 'This plan has no finished builds yet.'));
  if (all.length) apply();
  performance.mark('tests:drawn');
  ctx.status(`${all.length} ${all.length === 1 ? 'test' : 'tests'} failed in the last ${builds.length} builds.`);
}
