// A class's posting and the class at a glance, on its staff's page
// (docs/contract.md §4 and §9): when students see a grade (the class's
// policy, switched by those who may post), "Post N grades" with a
// confirmation naming how many students will see their grade, and the
// distribution of the class's grades as a chart with its numbers as text.

import {get, request, enc} from '../api.js';
import {h, fill, confirmDialog} from '../dom.js';

const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/**
 * classPosting answers {posting, chart, update}: the posting section and
 * the chart, filled by update() (again after every change to the class).
 * refresh redraws the class's table (and calls update). The controls
 * are offered to those the posting answer says may post (can_post).
 */
export function classPosting(ctx, cls, refresh) {
  const posting = h('section', {id: 'posting', 'aria-labelledby': 'posting-h'});
  const chart = h('section', {id: 'distribution', class: 'glance', 'aria-labelledby': 'distribution-h'});
  const path = `/class/${enc(cls)}`;
  let last = null; // the last posting answer, for the controls' handlers
  const post = async () => {
    const n = last.unposted;
    const ok = await confirmDialog(`Post ${plural(n, 'grade')} of ${cls}?`, [
      `${plural(n, 'student')} will see ${n === 1 ? 'their grade' : 'their grades'} (or the change to it) as soon as you post.`,
      'Each posting is recorded with your name in the grade\'s history.'], `Post ${plural(n, 'grade')}`);
    if (!ok) return ctx.status('Nothing was posted.');
    try {
      const {data} = await request(`${path}/grades/post`, {method: 'POST'});
      await refresh();
      ctx.status(`Posted ${plural(data.posted, 'grade')}: ${plural(data.posted, 'student')} ${data.posted === 1 ? 'sees' : 'see'} ${data.posted === 1 ? 'their grade' : 'their grades'} now.`);
      ctx.focus(document.getElementById('posting-h'));
    } catch (err) {
      ctx.fail(err);
    }
  };
  const setPolicy = async (to, radio) => {
    const lines = to === 'automatic'
      ? [last.unposted ? `The ${plural(last.unposted, 'grade')} not posted yet ${last.unposted === 1 ? 'is' : 'are'} posted now: ${plural(last.unposted, 'student')} will see ${last.unposted === 1 ? 'their grade' : 'their grades'}.` : 'No grade waits to be posted.',
        'From then on, each grade is released to its student as soon as it is entered.']
      : ['From then on, a grade entered or changed stays hidden from its student until someone posts it.',
        'Grades students already see stay as they are.'];
    const ok = await confirmDialog(to === 'automatic' ? 'Release grades as they are entered?' : 'Hold grades until they are posted?',
      lines, to === 'automatic' ? 'Release as entered' : 'Hold until posted');
    if (!ok) {
      document.getElementById('policy-' + last.policy).checked = true;
      radio.focus();
      return ctx.status('The policy was not changed.');
    }
    try {
      await request(`${path}/posting`, {method: 'PUT', body: JSON.stringify({policy: to}), headers: {'Content-Type': 'application/json'}});
      await refresh();
      ctx.status(to === 'automatic' ? 'Grades of this class are released as they are entered.' : 'Grades of this class are held until they are posted.');
      ctx.focus(document.getElementById('policy-' + to));
    } catch (err) {
      document.getElementById('policy-' + last.policy).checked = true;
      ctx.fail(err);
    }
  };
  const update = async () => {
    const [p, summary] = await Promise.all([get(`${path}/posting`), get(`${path}/grades/summary`)]);
    if (!ctx.alive()) return;
    last = p;
    const canPost = p.can_post;
    fill(posting, h('h2', {id: 'posting-h', tabindex: '-1'}, 'Releasing grades'),
      h('p', {id: 'posting-state'}, p.policy === 'manual'
        ? ['Students see a grade once it is posted. ', h('strong', {}, p.unposted ? `${plural(p.unposted, 'grade')} not posted yet` : 'Every grade is posted'), '.']
        : 'Students see each grade as soon as it is entered.'),
      canPost ? [
        h('fieldset', {id: 'posting-policy', class: 'filter'}, h('legend', {}, 'When students see a grade'),
          [['automatic', 'As soon as it is entered'], ['manual', 'Once it is posted']].map(([v, words]) => h('span', {class: 'choice'},
            h('input', {type: 'radio', name: 'posting-policy', id: 'policy-' + v, value: v, checked: p.policy === v,
              onchange: e => setPolicy(v, e.target)}),
            h('label', {for: 'policy-' + v}, words)))),
        p.unposted ? h('button', {type: 'button', class: 'primary', id: 'post-all', onclick: post}, `Post ${plural(p.unposted, 'grade')}…`) : null,
      ] : h('p', {class: 'hint', id: 'posting-who'}, 'Posting grades and changing when students see them is for the class\'s lecturers.'));
    drawChart(chart, cls, summary);
  };
  return {posting, chart, update};
}

const svgNS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

// drawChart draws the class's distribution as bars, best grade first,
// each with its count written above it; the same numbers are a table
// for screen readers (the drawing itself is hidden from them).
function drawChart(el, cls, s) {
  const W = 280, H = 150, top = 16, bottom = 20, n = s.counts.length, bw = W / n;
  const most = Math.max(1, ...s.counts.map(c => c.count));
  const bars = s.counts.map((c, i) => {
    const bh = Math.round((H - top - bottom) * c.count / most);
    const x = i * bw;
    return svg('g', {}, svg('rect', {x: x + 2, y: H - bottom - bh, width: bw - 4, height: bh, class: 'bar'}),
      svg('text', {x: x + bw / 2, y: H - bottom - bh - 4, 'text-anchor': 'middle', class: 'count'}, String(c.count)),
      svg('text', {x: x + bw / 2, y: H - 6, 'text-anchor': 'middle', class: 'label'}, c.grade));
  });
  const drawing = svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'dist', 'aria-hidden': 'true', focusable: 'false'},
    svg('line', {x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: 'axis'}), ...bars);
  fill(el, h('h2', {id: 'distribution-h'}, 'Grades at a glance'),
    h('p', {id: 'distribution-text'}, `${s.graded} of ${plural(s.enrolled, 'student')} graded`,
      s.median ? `; median ${s.median}` : '', s.unposted ? `; ${s.unposted} not posted` : '', '.'),
    drawing,
    // A table sizes itself to its cells whatever its width: the box
    // around it is what stays 1px wide.
    h('div', {class: 'visually-hidden'}, h('table', {id: 'distribution-table'},
      h('caption', {}, `How many students of ${cls} have each grade`),
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Grade'), h('th', {scope: 'col'}, 'Students'))),
      h('tbody', {}, s.counts.map(c => h('tr', {}, h('th', {scope: 'row'}, c.grade), h('td', {}, c.count)))))));
}
