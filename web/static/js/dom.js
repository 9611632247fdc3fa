// Small DOM and formatting helpers shared by the views. Everything is
// built with createElement and textContent: no HTML from data, ever.

/**
 * h builds an element: h('a', {href: '#/x', class: 'y'}, 'text', child).
 * Attributes starting with "on" become listeners; null/false skip.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** money formats an amount in its currency, with the currency's decimals. */
export function money(amount, currency) {
  try {
    return new Intl.NumberFormat('en-GB', {style: 'currency', currency, currencyDisplay: 'code'}).format(amount);
  } catch {
    return amount + ' ' + currency;
  }
}

/** decimals is how many decimals a currency has (EUR 2, JPY 0, KWD 3). */
export function decimals(currency) {
  try {
    return new Intl.NumberFormat('en', {style: 'currency', currency}).resolvedOptions().maximumFractionDigits;
  } catch {
    return 2;
  }
}

const full = new Intl.DateTimeFormat('en-GB', {dateStyle: 'full', timeStyle: 'long'});
const rel = new Intl.RelativeTimeFormat('en', {numeric: 'auto'});

/** when shows a time relative to now, with the full date and year on hover
 * (and for screen readers, through <time datetime>). */
export function when(iso, now = Date.now()) {
  const t = new Date(iso);
  if (isNaN(t)) return h('span', {}, '—');
  const s = Math.round((t.getTime() - now) / 1000);
  const units = [['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400], ['hour', 3600], ['minute', 60]];
  let text = rel.format(s, 'second');
  for (const [u, n] of units) {
    if (Math.abs(s) >= n) { text = rel.format(Math.round(s / n), u); break; }
  }
  return h('time', {datetime: t.toISOString(), title: full.format(t)}, text);
}

/** fullDate is the date and time with the year, for text that is read. */
export function fullDate(iso) {
  const t = new Date(iso);
  return isNaN(t) ? '' : full.format(t);
}

/** duration writes seconds as "1 min 5 s". */
export function duration(seconds) {
  if (seconds === undefined || seconds === null) return '—';
  const m = Math.floor(seconds / 60), s = seconds % 60;
  return m ? `${m} min ${s} s` : `${s} s`;
}

/** table builds a table with a caption, column headings and rows. */
export function table(caption, heads, rows, attrs = {}) {
  return h('div', {class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption},
    h('table', attrs,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, heads.map(x => h('th', {scope: 'col'}, x)))),
      h('tbody', {}, rows)));
}

/**
 * confirmDialog asks a yes/no question in a modal dialog and resolves
 * true when the person confirms. Escape and Cancel resolve false.
 */
export function confirmDialog(title, lines, yes, no = 'Cancel') {
  return new Promise(resolve => {
    const ok = h('button', {type: 'button', class: 'primary', id: 'confirm-yes'}, yes);
    const cancel = h('button', {type: 'button', class: 'secondary', id: 'confirm-no'}, no);
    const d = h('dialog', {id: 'confirm', 'aria-labelledby': 'confirm-h'},
      h('h2', {id: 'confirm-h'}, title), lines.map(l => h('p', {}, l)), h('div', {class: 'actions'}, ok, cancel));
    const done = v => { d.close(); d.remove(); resolve(v); };
    ok.addEventListener('click', () => done(true));
    cancel.addEventListener('click', () => done(false));
    d.addEventListener('cancel', e => { e.preventDefault(); done(false); });
    document.body.append(d);
    d.showModal();
    cancel.focus(); // the safe choice has the focus: Enter does not send
  });
}

/** saveFile hands a blob to the browser as a download. */
export function saveFile(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', {href: url, download: name, hidden: true});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** fill replaces el's children (arrays flattened, null and false left out). */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter(c => c !== null && c !== undefined && c !== false)
    .map(c => (c instanceof Node ? c : document.createTextNode(String(c)))));
  return el;
}
