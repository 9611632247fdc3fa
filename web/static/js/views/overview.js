// The builds overview at any size: every project and plan the person may
// see (every page of the project list), each plan with its latest state
// (every page of the latest results, never a call per plan), the person's
// favourites first, and a search over all of them, drawn or not.
//
// The first screen is drawn from what arrives first (docs/contract.md §9:
// within 1 s of a warm load at 3,000 plans): the person's favourites and
// the first page of projects, both small, then the latest results of the
// few projects on that screen (a small list each, asked of the service at
// once). The whole project list and every page of the latest results
// stream in behind it: new projects are appended as their page arrives,
// and a row's state is written when the page holding it arrives ("…"
// until then). Rows are drawn in slices of a few milliseconds, so the tab
// keeps answering while thousands are drawn; the latest results are asked
// again (If-None-Match) while the overview is shown, and a changed state
// redraws only its row.

import {request, enc} from '../api.js';
import {h, fill, when, table} from '../dom.js';
import {REST, LIST_MAX, items, planOf, badge, star, planName, readPages, poll} from './buildparts.js';

const PROJECTS = REST + '/project?expand=projects.project.plans';
const LATEST = REST + '/result?expand=results.result&includeAllStates=true';
const projectLatest = key => `${REST}/result/${enc(key)}?expand=results.result&includeAllStates=true&max-results=${LIST_MAX}`;
const SLICE_MS = 12; // drawing per task, well under a frame
// The first screen: the first HEAD projects are asked for alone, and the
// latest results of the projects holding its first SCREEN_ROWS rows (the
// favourites' first), at most SCREEN_CALLS small lists, are asked before
// the whole list's pages (a browser opens six connections to a host).
const HEAD = 10, SCREEN_ROWS = 40, SCREEN_CALLS = 4;
// The whole lists are read in pages of these sizes (about 1 MB at most at
// Bamboo's sizes): a page of 1,000 latest results is 2 MB of JSON, whose
// parsing alone held the tab for over 100 ms on a busy machine.
const LATEST_PAGE = 500, PROJECT_PAGE = 100;
const heads = () => [h('span', {class: 'visually-hidden'}, 'Favourite'), 'Plan', 'Latest', 'Build', 'When'];

// addProjects adds the projects of list answers to the model, each plan
// once (a favourite is the same plan in the favourites' list and in its
// project); favouritesOnly answers add their plans but not their projects.
function addProjects(model, answers, favouritesOnly = false) {
  const added = [];
  for (const p of answers.flatMap(a => items(a.data.projects, 'project'))) {
    if (!favouritesOnly && model.projectKeys.has(p.key)) continue;
    const project = {key: p.key, name: p.name, plans: []};
    for (const pl of items(p.plans, 'plan')) {
      let plan = model.byKey.get(pl.key);
      if (!plan) {
        const name = pl.shortName || pl.name || pl.key;
        plan = {key: pl.key, project: p.key, name, fav: !!pl.isFavourite, find: (name + ' ' + pl.key + ' ' + p.name).toLowerCase()};
        model.byKey.set(pl.key, plan);
        model.plans.push(plan);
      }
      project.plans.push(plan);
    }
    if (favouritesOnly) continue;
    model.projectKeys.add(p.key);
    model.projects.push(project);
    added.push(project);
  }
  return added;
}

// screenProjects are the projects whose latest results the first screen
// needs: the favourites' projects, then the first ones, up to SCREEN_ROWS
// rows and SCREEN_CALLS projects.
function screenProjects(model) {
  const keys = [];
  let rows = 0;
  for (const pl of model.plans.filter(p => p.fav)) {
    if (!keys.includes(pl.project)) keys.push(pl.project);
    rows++;
  }
  for (const p of model.projects) {
    if (rows >= SCREEN_ROWS) break;
    if (!keys.includes(p.key)) keys.push(p.key);
    rows += p.plans.filter(pl => !pl.fav).length;
  }
  return keys.slice(0, SCREEN_CALLS);
}

// groups are the sections to draw for projects: favourites first (when
// withFavourites), then each project with its other plans; only plans
// matching q (lower case) when set.
function groups(model, projects, q, withFavourites) {
  const match = pl => !q || pl.find.includes(q);
  const out = [];
  const favs = withFavourites ? model.plans.filter(pl => pl.fav && match(pl)) : [];
  if (favs.length) {
    out.push({id: 'favourites', title: 'Your favourites', caption: 'Your favourite plans with their latest build', plans: favs});
  }
  for (const p of projects) {
    const plans = p.plans.filter(pl => !pl.fav && match(pl));
    if (plans.length) out.push({project: p.key, title: planName(p.name, p.key), caption: `Plans of ${p.name} with their latest build`, plans});
  }
  return out;
}

export async function overview(ctx) {
  performance.mark('builds:start');
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'), h('p', {}, 'Loading projects…'));
  const model = {projects: [], plans: [], byKey: new Map(), projectKeys: new Set(), latest: new Map(),
    known: new Set(), allKnown: false, allProjects: false};
  // What arrives first: the favourites (few) and the first projects.
  const [favs, head] = await Promise.all([
    readPages(PROJECTS + '&favourite', 'projects'),
    request(`${PROJECTS}&max-results=${HEAD}&start-index=0`, {conditional: true}),
  ]);
  if (!ctx.alive()) return;
  addProjects(model, favs.answers, true);
  addProjects(model, [head]);
  const total = Number((head.data.projects || {}).size) || 0;
  model.allProjects = items(head.data.projects, 'project').length < HEAD || total <= HEAD;
  if (!model.projects.length && model.allProjects) {
    fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'),
      h('p', {}, 'There are no projects you may see. Ask your team lead for access if you need it.'));
    return;
  }
  const rows = new Map(); // plan key -> {tr, cells, seen}: each row made once, moved by redraws
  // The first screen's latest results, asked before anything is drawn
  // (a list that failed: its rows wait for the whole list).
  await Promise.all(screenProjects(model).map(key => request(projectLatest(key), {conditional: true}).then(a => {
    model.known.add(key);
    for (const r of items(a.data.results, 'result')) model.latest.set(planOf(r), r);
  }, () => {})));
  if (!ctx.alive()) return;

  // show writes a row's latest state, when it changed; "…" while the
  // page holding it has not arrived.
  const show = (pl, r) => {
    const res = model.latest.get(pl.key);
    const pending = !res && !model.allKnown && !model.known.has(pl.project);
    const seen = res ? [res.buildResultKey || res.key, res.lifeCycleState, res.buildState].join(' ') : pending ? '…' : '';
    if (r.seen === seen) return;
    r.seen = seen;
    const [state, build, at] = r.cells;
    fill(state, pending ? h('span', {class: 'state none'}, h('span', {'aria-hidden': 'true'}, '… '), 'Loading') : badge(res));
    fill(build, res ? h('a', {href: `#/builds/${pl.key}/${res.buildNumber}`, 'aria-label': `${pl.name} build ${res.buildNumber}`}, '#' + res.buildNumber) : '—');
    fill(at, res ? when(res.buildCompletedTime || res.buildStartedTime) : '—');
  };
  const showAll = plans => {
    for (const pl of plans) {
      const r = rows.get(pl.key);
      if (r) show(pl, r);
    }
  };
  // learn takes a page of latest results in and redraws their rows that
  // are drawn, a slice per task (a page holds a thousand).
  const stale = [];
  let learning = false;
  const relearn = () => {
    const started = performance.now();
    while (stale.length && performance.now() - started < SLICE_MS) {
      const batch = stale.splice(0, 50);
      showAll(batch);
    }
    learning = stale.length > 0;
    if (learning) setTimeout(relearn, 0);
    else finish();
  };
  const restate = plans => {
    stale.push(...plans.filter(pl => rows.has(pl.key)));
    if (!learning && stale.length) {
      learning = true;
      setTimeout(relearn, 0);
    }
  };
  const learn = answer => {
    const plans = [];
    for (const r of items(answer.data.results, 'result')) {
      const key = planOf(r);
      model.latest.set(key, r);
      if (model.byKey.has(key)) plans.push(model.byKey.get(key));
    }
    restate(plans);
  };
  const row = pl => {
    let r = rows.get(pl.key);
    if (!r) {
      const cells = [h('td'), h('td'), h('td')];
      const tr = h('tr', {'data-plan': pl.key},
        h('td', {class: 'fav'}, star(ctx, pl.key, pl.name, pl.fav, now => { pl.fav = now; apply(); })),
        h('td', {}, h('a', {href: '#/builds/' + pl.key}, pl.name), ' ', h('span', {class: 'key'}, pl.key)),
        cells);
      r = {tr, cells, seen: null};
      rows.set(pl.key, r);
      show(pl, r);
    }
    return r.tr;
  };

  const box = h('div', {id: 'plans', 'aria-busy': 'true'});
  const more = h('p', {id: 'plans-more', class: 'hint'}, 'Loading more projects…');
  // The drawing: a queue of sections, drawn a slice of rows per task;
  // extend appends sections (a page of projects that arrived), draw
  // starts over with others (a search).
  let queue = [], g = 0, i = 0, body = null, drawing = 0, slices = 0, busy = false;
  const finish = () => {
    box.dataset.slices = String(slices);
    if (!model.allProjects || !model.allKnown || busy || learning) return;
    box.dataset.complete = 'true';
    if (!more.hidden) performance.mark('builds:drawn');
    box.removeAttribute('aria-busy');
    more.hidden = true;
  };
  const slice = mine => {
    if (mine !== drawing || !ctx.alive()) return;
    slices++;
    const started = performance.now();
    while (g < queue.length && performance.now() - started < SLICE_MS) {
      const grp = queue[g];
      if (!body) {
        const hid = grp.id ? 'p-' + grp.id : 'p-' + grp.project;
        const t = table(grp.caption, heads(), []);
        body = t.querySelector('tbody');
        box.append(h('section', {class: 'project', id: grp.id, 'data-project': grp.project, 'aria-labelledby': hid},
          h('h2', {id: hid}, grp.title), t));
      }
      const end = Math.min(grp.plans.length, i + 20);
      const frag = document.createDocumentFragment();
      for (; i < end; i++) frag.append(row(grp.plans[i]));
      body.append(frag);
      if (i === grp.plans.length) { g++; i = 0; body = null; }
    }
    if (g < queue.length) {
      setTimeout(() => slice(mine), 0);
      return;
    }
    busy = false;
    finish();
  };
  const run = () => {
    if (busy) return;
    busy = true;
    slice(drawing);
  };
  const draw = list => {
    drawing++;
    busy = false;
    queue = list; g = 0; i = 0; body = null;
    box.replaceChildren();
    box.dataset.complete = 'false';
    run();
  };
  const extend = list => {
    queue.push(...list);
    box.dataset.complete = 'false';
    run();
  };

  const search = h('input', {type: 'search', id: 'plan-search', autocomplete: 'off', 'aria-describedby': 'plan-search-hint',
    'aria-controls': 'plans'});
  const none = h('p', {id: 'plan-search-none', hidden: true}, 'No plan matches. Try part of its name or key.');
  const query = () => search.value.trim().toLowerCase();
  const shownCount = () => queue.reduce((n, grp) => n + grp.plans.length, 0);
  // apply draws what the search keeps (everything when empty).
  const apply = () => {
    const q = query();
    draw(groups(model, model.projects, q, true));
    const shown = shownCount();
    none.hidden = shown > 0 || !model.allProjects;
    if (q) ctx.status(`${shown} ${shown === 1 ? 'plan matches' : 'plans match'} “${search.value.trim()}”${model.allProjects ? '' : ' so far'}.`);
    return shown;
  };
  let typing = 0;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      if (!apply()) return;
      if (!query()) ctx.status(shownText(model));
    }, model.plans.length > 500 ? 150 : 0);
  });
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'),
    h('div', {class: 'search'}, h('label', {for: 'plan-search'}, 'Find a plan'), search,
      h('p', {class: 'hint', id: 'plan-search-hint'}, 'By name or key, among all your plans. Press / to come back here.')),
    box, none, more);
  apply();

  // The rest of both lists, asked once the first screen is drawn, so that
  // neither the connections nor the tab are busy with them before.
  requestAnimationFrame(() => ctx.alive() && performance.mark('builds:first-screen'));
  let plansCounted;
  const latestRead = readPages(LATEST, 'results', new Promise(ok => { plansCounted = ok; }), a => ctx.alive() && learn(a), 0, LATEST_PAGE);
  const projectsRead = model.allProjects ? Promise.resolve() : readPages(PROJECTS, 'projects', 0, a => {
    if (!ctx.alive()) return;
    const added = addProjects(model, [a]);
    if (added.length) extend(groups(model, added, query(), false));
  }, HEAD, PROJECT_PAGE);
  await projectsRead;
  if (!ctx.alive()) return;
  model.allProjects = true;
  plansCounted(model.plans.length);
  await latestRead;
  if (!ctx.alive()) return;
  model.allKnown = true;
  restate(model.plans); // "…" becomes "Never built" where no result came
  if (query()) apply();
  else finish();
  ctx.status(shownText(model));

  // Live: a new build or a changed state redraws its row.
  poll(ctx, async () => {
    const again = await readPages(LATEST, 'results', model.plans.length, null, 0, LATEST_PAGE);
    if (!ctx.alive() || !again.changed) return;
    model.latest = new Map(again.answers.flatMap(a => items(a.data.results, 'result')).map(r => [planOf(r), r]));
    restate(model.plans);
  });
}

const shownText = model => {
  const p = model.projects.length, n = model.plans.length;
  return `${p.toLocaleString('en')} ${p === 1 ? 'project' : 'projects'}, ${n.toLocaleString('en')} ${n === 1 ? 'plan' : 'plans'}.`;
};
