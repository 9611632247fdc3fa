// Long lists (a lecture's 5,000 students, a gradebook's preview) are drawn
// on demand, a step at a time: the first STEP rows, then STEP more each
// time the person asks, and a search that reaches any row at once. No
// task holds the tab for long (docs/contract.md §9: never more than
// 200 ms): a whole lecture's table drawn at once, even in slices between
// frames, has the browser lay all of it out again, far past that, while
// a step of STEP rows stays well inside it (docs/performance.md, "web").

export const STEP = 200;

/**
 * drawOnDemand fills tbody with makeRow(item) for the first STEP items,
 * and more (an element below the table) with a button that appends STEP
 * more while any are left. tbody.dataset.shown says how many rows are
 * drawn, for the page's tests.
 */
export function drawOnDemand(tbody, more, items, makeRow, noun) {
  let shown = 0;
  // One button, its words updated: the focus stays on it as the list
  // grows, without the page moving it (which would lay the table out at
  // once, inside the click).
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'secondary show-more';
  const step = () => {
    const part = document.createDocumentFragment();
    const end = Math.min(items.length, shown + STEP);
    for (; shown < end; shown++) part.append(makeRow(items[shown]));
    tbody.append(part);
    tbody.dataset.shown = String(shown);
    const left = items.length - shown;
    button.textContent = `Show ${Math.min(STEP, left)} more ${noun} (${shown} of ${items.length} shown)`;
    if (left === 0) button.remove();
  };
  button.addEventListener('click', step);
  tbody.replaceChildren();
  more.replaceChildren(button);
  step();
}
