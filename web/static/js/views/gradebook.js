// A class's gradebook upload (CSV): a preview (dry run) first, then the
// file applied after a confirmation that says what will and will not be
// applied. A lecture's file has thousands of rows, nearly all "no change":
// the outcome is shown by filter (problems, changes, all), opening on the
// problems, and "all" lists problems first, then changes, then the rest,
// so that 1 refused row is never buried among 2,848 unchanged ones.

import {request, enc} from '../api.js';
import {h, fill, confirmDialog} from '../dom.js';
import {rowWords} from '../words.js';
import {drawOnDemand} from '../slices.js';

const MAX_UPLOAD = 2 * 1024 * 1024; // the service's limit for a gradebook (docs/contract.md §4)

const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/**
 * gradebook is the upload form of class cls. afterApply(data) runs once
 * a file was applied (the class's table and history are redrawn there);
 * say(text) shows words about the person's input.
 */
export function gradebook(ctx, cls, afterApply, say) {
  const file = h('input', {type: 'file', id: 'book-file', accept: '.csv,text/csv', 'aria-describedby': 'book-hint'});
  const out = h('div', {id: 'book-result'});
  const preview = async e => {
    e.preventDefault();
    ctx.clearError();
    const f = file.files[0];
    if (!f) return say('Choose a CSV file first.');
    if (f.size > MAX_UPLOAD) return ctx.fail({code: 'body-too-large'});
    const text = await f.text();
    try {
      const {data} = await upload(cls, text, true);
      if (!ctx.alive()) return;
      const view = outcomeView(data, 'Preview: nothing is saved yet');
      fill(out, view.heading,
        data.changed ? h('button', {type: 'button', class: 'primary', id: 'book-apply', onclick: () => apply(text, data)},
          `Apply ${plural(data.changed, 'change')}…`) : h('p', {}, 'Nothing in this file would change a grade.'),
        view.body);
      view.draw();
      ctx.status(`Preview: ${data.changed} would change, ${data.unchanged} unchanged, ${data.stale} stale, ${data.refused} refused.`);
      ctx.focus(out.querySelector('h3'));
    } catch (err) {
      ctx.fail(err);
    }
  };
  const apply = async (text, seen) => {
    const left = seen.refused + seen.stale;
    const ok = await confirmDialog(`Apply the gradebook to ${cls}?`, [
      `${plural(seen.changed, 'grade')} change, each saved at the version in your file; a grade someone changed since is left as it is.`,
      left ? `${plural(left, 'row')} of the file will not be applied: ` +
        [seen.refused ? `${seen.refused} refused` : '', seen.stale ? `${seen.stale} stale` : ''].filter(Boolean).join(', ') +
        '. They are listed under Problems; correct them in the file and upload it again.' : null,
    ].filter(Boolean), `Apply ${plural(seen.changed, 'change')}`);
    if (!ok) return ctx.status('Nothing was changed.');
    try {
      const {data} = await upload(cls, text, false);
      if (!ctx.alive()) return;
      const view = outcomeView(data, 'Applied');
      fill(out, view.heading, view.body);
      view.draw();
      await afterApply(data);
      ctx.status(`Applied: ${data.changed} changed, ${data.unchanged} unchanged, ${data.stale} stale, ${data.refused} refused.`);
      ctx.focus(out.querySelector('h3'));
    } catch (err) {
      ctx.fail(err);
    }
  };
  return h('form', {id: 'book-form', novalidate: true, onsubmit: preview},
    h('label', {for: 'book-file'}, 'Upload a gradebook (CSV)'), file,
    h('p', {id: 'book-hint', class: 'hint'}, 'Columns student_id, grade and version, as in the download. You see what would change before anything is saved.'),
    h('button', {type: 'submit', id: 'book-preview'}, 'Preview changes'), out);
}

function upload(cls, text, dryRun) {
  return request(`/class/${enc(cls)}/grades${dryRun ? '?dry_run=1' : ''}`,
    {method: 'POST', body: text, headers: {'Content-Type': 'text/csv'}});
}

const outcomeWords = {changed: 'Changed', unchanged: 'No change', stale: 'Not changed', refused: 'Refused'};
const isProblem = r => r.outcome === 'stale' || r.outcome === 'refused';

// outcomeView is the heading, the filter, the search and the rows of a
// gradebook's answer, and the function that draws them (on demand).
function outcomeView(data, heading) {
  const problems = data.rows.filter(isProblem);
  const changes = data.rows.filter(r => r.outcome === 'changed');
  const rest = data.rows.filter(r => !isProblem(r) && r.outcome !== 'changed');
  const lists = {problems, changes, all: [...problems, ...changes, ...rest]};
  const names = {problems: 'Problems', changes: 'Changes', all: 'All rows'};
  let chosen = problems.length ? 'problems' : changes.length ? 'changes' : 'all';
  const row = r => {
    let what = '';
    if (r.outcome === 'changed') what = `${r.previous_grade || 'none'} → ${r.grade}`;
    else if (r.outcome === 'stale') what = `${rowWords(r.code)} Now ${r.previous_grade || 'none'}${r.updated_by ? ', by ' + r.updated_by : ''}.`;
    else if (r.outcome === 'refused') what = rowWords(r.code);
    else what = 'already ' + (r.grade || 'without a grade');
    return h('tr', {'data-line': r.line, class: 'outcome-' + r.outcome},
      h('td', {}, r.line), h('td', {}, r.student_id), h('td', {}, r.grade || '—'),
      h('td', {}, h('strong', {}, r.outcome === 'changed' && data.dry_run ? 'Would change' : outcomeWords[r.outcome] || r.outcome), ' ', what));
  };
  const box = h('div', {class: 'scroll', id: 'book-rows', tabindex: '0', role: 'region', 'aria-label': 'Rows of the gradebook'});
  const more = h('p', {id: 'book-more'});
  const count = h('p', {id: 'book-count', class: 'hint', 'aria-live': 'polite'});
  const search = h('input', {type: 'search', id: 'book-search', autocomplete: 'off', 'aria-describedby': 'book-count', oninput: () => draw()});
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const list = lists[chosen];
    const shown = q ? list.filter(r => r.student_id.toLowerCase().includes(q)) : list;
    count.textContent = q ? `${shown.length} of ${list.length} rows (${names[chosen].toLowerCase()}) match “${search.value.trim()}”.`
      : chosen === 'all' ? 'Problems first, then changes, then the rest, each in file order.' : '';
    drawOnDemand(box, more, shown, row, 'rows', {caption: `${names[chosen]} of the gradebook`,
      heads: ['Line', 'Student', 'Grade', 'Outcome'], cols: ['w-line', 'w-id', 'w-grade', 'w-outcome']});
  };
  const filter = h('fieldset', {id: 'book-filter', class: 'filter'}, h('legend', {}, 'Show'),
    Object.keys(lists).map(k => h('span', {class: 'choice'},
      h('input', {type: 'radio', name: 'book-filter', id: 'book-filter-' + k, value: k, checked: k === chosen,
        onchange: () => { chosen = k; draw(); }}),
      h('label', {for: 'book-filter-' + k}, `${names[k]} (${lists[k].length})`))));
  return {
    heading: h('h3', {tabindex: '-1'}, `${heading}: ${data.changed} ${data.dry_run ? 'would change' : 'changed'}, ${data.unchanged} unchanged, ${data.stale} stale, ${data.refused} refused`),
    body: [filter, h('div', {class: 'field'}, h('label', {for: 'book-search'}, 'Find a student in the file'), search, count), box, more],
    draw,
  };
}
