// The builds overview at any size: every project and plan the person may
// see (every page of the project list), each plan with its latest state
// (every page of the latest results, never a call per plan), the person's
// favourites first, and a search over all of them, drawn or not. Rows are
// drawn in slices of a few milliseconds, so the first screen shows at once
// and the tab keeps answering while thousands of plans are drawn; the
// latest results are asked again (If-None-Match) while the overview is
// shown, and a changed state redraws only its row.

import {h, fill, when, table} from '../dom.js';
import {REST, items, planOf, badge, star, planName, readPages, poll} from './buildparts.js';

const PROJECTS = REST + '/project?expand=projects.project.plans';
const LATEST = REST + '/result?expand=results.result&includeAllStates=true';
const SLICE_MS = 12; // drawing per task, well under a frame
const heads = () => [h('span', {class: 'visually-hidden'}, 'Favourite'), 'Plan', 'Latest', 'Build', 'When'];

// planList is every plan of the project list's pages, in project order.
function planList(answers) {
  const projects = [], plans = [];
  for (const p of answers.flatMap(a => items(a.data.projects, 'project'))) {
    const project = {key: p.key, name: p.name, plans: []};
    for (const pl of items(p.plans, 'plan')) {
      const name = pl.shortName || pl.name || pl.key;
      const plan = {key: pl.key, name, fav: !!pl.isFavourite, find: (name + ' ' + pl.key + ' ' + p.name).toLowerCase()};
      project.plans.push(plan);
      plans.push(plan);
    }
    projects.push(project);
  }
  return {projects, plans};
}

const latestOf = answers => new Map(answers.flatMap(a => items(a.data.results, 'result')).map(r => [planOf(r), r]));

// groups are the sections to draw: favourites first, then each project
// with its other plans; only plans matching q (lower case) when set.
function groups(model, q) {
  const match = pl => !q || pl.find.includes(q);
  const out = [];
  const favs = model.plans.filter(pl => pl.fav && match(pl));
  if (favs.length) {
    out.push({id: 'favourites', title: 'Your favourites', caption: 'Your favourite plans with their latest build', plans: favs});
  }
  for (const p of model.projects) {
    const plans = p.plans.filter(pl => !pl.fav && match(pl));
    if (plans.length) out.push({project: p.key, title: planName(p.name, p.key), caption: `Plans of ${p.name} with their latest build`, plans});
  }
  return out;
}

export async function overview(ctx) {
  performance.mark('builds:start');
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'), h('p', {}, 'Loading projects…'));
  // Both lists at once; the latest results hold at most one per plan,
  // which says how many pages of them to ask for together.
  const reading = readPages(PROJECTS, 'projects');
  const plansSeen = reading.then(p => planList(p.answers).plans.length, () => 0);
  const [projects, latest] = await Promise.all([reading, readPages(LATEST, 'results', plansSeen)]);
  if (!ctx.alive()) return;
  const model = {...planList(projects.answers), latest: latestOf(latest.answers)};
  if (!model.projects.length) {
    fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'),
      h('p', {}, 'There are no projects you may see. Ask your team lead for access if you need it.'));
    return;
  }
  const rows = new Map(); // plan key -> {tr, cells, seen}: each row made once, moved by redraws

  // show writes a row's latest state, when it changed.
  const show = (pl, r) => {
    const res = model.latest.get(pl.key);
    const seen = res ? [res.buildResultKey || res.key, res.lifeCycleState, res.buildState].join(' ') : '';
    if (r.seen === seen) return;
    r.seen = seen;
    const [state, build, at] = r.cells;
    fill(state, badge(res));
    fill(build, res ? h('a', {href: `#/builds/${pl.key}/${res.buildNumber}`, 'aria-label': `${pl.name} build ${res.buildNumber}`}, '#' + res.buildNumber) : '—');
    fill(at, res ? when(res.buildCompletedTime || res.buildStartedTime) : '—');
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

  const box = h('div', {id: 'plans'});
  let drawing = 0;
  // draw replaces the sections with list's, a slice of rows per task.
  const draw = list => {
    const mine = ++drawing;
    box.replaceChildren();
    box.dataset.complete = 'false';
    let g = 0, i = 0, body = null, first = true, slices = 0;
    const slice = () => {
      if (mine !== drawing || !ctx.alive()) return;
      slices++;
      const started = performance.now();
      while (g < list.length && performance.now() - started < SLICE_MS) {
        const grp = list[g];
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
      if (first) {
        first = false;
        requestAnimationFrame(() => mine === drawing && performance.mark('builds:first-screen'));
      }
      if (g < list.length) {
        setTimeout(slice, 0);
        return;
      }
      box.dataset.slices = String(slices);
      box.dataset.complete = 'true';
      performance.mark('builds:drawn');
    };
    slice();
  };

  const search = h('input', {type: 'search', id: 'plan-search', autocomplete: 'off', 'aria-describedby': 'plan-search-hint',
    'aria-controls': 'plans'});
  const none = h('p', {id: 'plan-search-none', hidden: true}, 'No plan matches. Try part of its name or key.');
  // apply draws what the search keeps (everything when empty).
  const apply = () => {
    const q = search.value.trim().toLowerCase();
    const list = groups(model, q);
    draw(list);
    const shown = list.reduce((n, grp) => n + grp.plans.length, 0);
    none.hidden = shown > 0;
    if (q) ctx.status(`${shown} ${shown === 1 ? 'plan matches' : 'plans match'} “${search.value.trim()}”.`);
    return shown;
  };
  let typing = 0;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      if (!apply()) return;
      if (!search.value.trim()) ctx.status(shownText(model));
    }, model.plans.length > 500 ? 150 : 0);
  });
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Builds'),
    h('div', {class: 'search'}, h('label', {for: 'plan-search'}, 'Find a plan'), search,
      h('p', {class: 'hint', id: 'plan-search-hint'}, 'By name or key, among all your plans. Press / to come back here.')),
    box, none);
  apply();
  ctx.status(shownText(model));

  // Live: a new build or a changed state redraws its row.
  poll(ctx, async () => {
    const again = await readPages(LATEST, 'results', model.plans.length);
    if (!ctx.alive() || !again.changed) return;
    model.latest = latestOf(again.answers);
    for (const pl of model.plans) {
      const r = rows.get(pl.key);
      if (r) show(pl, r);
    }
  });
}

const shownText = model => {
  const p = model.projects.length, n = model.plans.length;
  return `${p.toLocaleString('en')} ${p === 1 ? 'project' : 'projects'}, ${n.toLocaleString('en')} ${n === 1 ? 'plan' : 'plans'}.`;
};
