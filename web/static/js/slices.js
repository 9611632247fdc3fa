// Long lists (a lecture's 5,000 students, a gradebook's preview) are drawn
// on demand, a step at a time: the first STEP rows, then STEP more each
// time the person asks, and a search that reaches any row at once. No
// task holds the tab for long (docs/contract.md §9: never more than
// 200 ms), and a step costs the same however many rows are already
// drawn: each step's rows are a table of their own (same columns, fixed
// widths) in a part the browser lays out and paints only near the screen
// (content-visibility), so appending the 25th step does not lay out the
// 4,800 rows above it again, as one growing table did (up to 399 ms a
// step; docs/performance.md, "web").

import {h} from './dom.js';

export const STEP = 200;

/**
 * drawOnDemand fills box with the first STEP of items, each made by
 * makeRow(item), and more (an element below the box) with a button that
 * appends STEP more while any are left. spec is the table's
 * {caption, heads, cols}: cols are the classes of its columns (their
 * widths, in app.css). box.dataset.shown says how many rows are drawn,
 * for the page's tests.
 */
export function drawOnDemand(box, more, items, makeRow, noun, spec) {
  let shown = 0;
  // One button, its words updated: the focus stays on it as the list
  // grows, without the page moving it (which would lay the table out at
  // once, inside the click).
  const button = h('button', {type: 'button', class: 'secondary show-more'});
  const step = () => {
    const end = Math.min(items.length, shown + STEP);
    const tbody = h('tbody');
    const first = shown === 0;
    for (let i = shown; i < end; i++) tbody.append(makeRow(items[i]));
    // The first part carries the caption and headings people see; each
    // later one repeats them for screen readers only (a table of its own).
    box.append(h('div', {class: 'part'}, h('table', {class: 'parts'},
      h('caption', {class: first ? null : 'visually-hidden'}, first ? spec.caption : `${spec.caption}, ${shown + 1} to ${end} of ${items.length}`),
      h('colgroup', {}, spec.cols.map(c => h('col', {class: c}))),
      h('thead', {class: first ? null : 'visually-hidden'}, h('tr', {}, spec.heads.map(x => h('th', {scope: 'col'}, x)))),
      tbody)));
    shown = end;
    box.dataset.shown = String(shown);
    const left = items.length - shown;
    button.textContent = `Show ${Math.min(STEP, left)} more ${noun} (${shown} of ${items.length} shown)`;
    if (left === 0) button.remove();
  };
  button.addEventListener('click', step);
  box.replaceChildren();
  more.replaceChildren(button);
  step();
}
