// Accounts: the caller's accounts with balances (#/accounts), and one
// account's statement with a transfer form (#/accounts/1001). A transfer
// says what will happen and asks before anything is sent; amounts are
// shown in the account's currency. The statement pages back to the
// account's first transfer on demand ("Show older transfers" follows the
// service's sealed next), narrows to a date range, and downloads the range
// as CSV through a real link.

import {get, request, enc, usingToken} from '../api.js';
import {h, fill, money, decimals, table, confirmDialog, saveFile} from '../dom.js';
import {explain} from '../words.js';

// Shown to whoever holds an account here (/auth/me's has; without it,
// a pasted token of an older service, to everyone).
export const allowed = me => !me.has || me.has.accounts;

const amountSyntax = /^(0|[1-9][0-9]{0,14})(\.[0-9]+)?$/;

export async function render(ctx, parts) {
  const [id] = parts;
  return id ? account(ctx, id) : list(ctx);
}

// mine reads every page of the caller's accounts.
async function mine() {
  const out = [];
  let path = '/rs/account?limit=100';
  for (let i = 0; path && i < 20; i++) {
    const page = await get(path);
    out.push(...page.accounts);
    path = page.next;
  }
  return out;
}

async function list(ctx) {
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your accounts'), h('p', {}, 'Loading…'));
  const accounts = await mine();
  if (!ctx.alive()) return;
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your accounts'),
    accounts.length ? table('Your accounts and their balances', ['Account', 'Owner', 'Balance'],
      accounts.map(a => h('tr', {'data-account': a.account_id},
        h('td', {}, h('a', {href: '#/accounts/' + enc(a.account_id)}, a.account_id)),
        h('td', {}, a.owner),
        h('td', {class: 'balance num'}, money(a.balance, a.currency)))), {id: 'accounts-list'})
      : h('p', {}, 'You hold no account here. If you should, ask your bank.'));
  ctx.status(accounts.length + (accounts.length === 1 ? ' account.' : ' accounts.'));
}

const PAGE = 50; // statement entries per page

// statementQuery is the range's query string ("" for the whole history).
function statementQuery(range) {
  const q = new URLSearchParams();
  if (range.from) q.set('from', range.from);
  if (range.to) q.set('to', range.to);
  return q.toString();
}

function statementRow(t) {
  const credit = t.direction === 'credit';
  return h('tr', {'data-transfer': t.transfer_id, class: credit ? 'credit' : 'debit'},
    h('td', {class: 'date'}, statementDate(t.created_at)),
    h('td', {}, h('span', {class: 'dir ' + (credit ? 'in' : 'out')}, h('span', {'aria-hidden': 'true'}, credit ? '↓ ' : '↑ '),
      credit ? 'Money in' : 'Money out'), ' ', credit ? 'from ' + t.counterparty_account_id : 'to ' + t.counterparty_account_id),
    h('td', {class: 'ref'}, t.reference || h('span', {class: 'hint'}, '—')),
    h('td', {class: 'num'}, money(t.amount, t.currency)),
    h('td', {class: 'num after'}, t.balance_after === undefined ? '—' : money(t.balance_after, t.currency)));
}

async function account(ctx, id, range = {from: '', to: ''}) {
  const q = statementQuery(range);
  const [a, st, others] = await Promise.all([
    get(`/rs/account/${enc(id)}`), get(`/rs/account/${enc(id)}/transfers?limit=${PAGE}${q ? '&' + q : ''}`), mine()]);
  if (!ctx.alive()) return;
  const rows = st.transfers.map(statementRow);
  fill(ctx.el, 
    h('p', {class: 'crumbs'}, h('a', {href: '#/accounts'}, 'Your accounts')),
    h('h1', {tabindex: '-1', id: 'account-h'}, 'Account ' + a.account_id),
    h('p', {class: 'big'}, 'Balance: ', h('strong', {id: 'balance'}, money(a.balance, a.currency)),
      h('span', {class: 'hint'}, ` (owner ${a.owner})`)),
    h('p', {id: 'transfer-result', class: 'result', tabindex: '-1', hidden: !ctx.result}, ctx.result || ''),
    transferForm(ctx, a, others.filter(o => o.account_id !== a.account_id)),
    h('h2', {id: 'statement-h'}, 'Statement'),
    rangeForm(ctx, a, range),
    rows.length ? table(`Statement of ${a.account_id}, newest first`, ['Date', 'Money in or out', 'Reference', 'Amount', 'Balance after'], rows, {id: 'statement'})
      : h('p', {id: 'statement-empty'}, q ? 'No money moved in or out of this account in this range.' : 'No money has moved in or out of this account yet.'),
    older(ctx, st.next));
  ctx.status(`Account ${a.account_id}: ${rows.length} ${rows.length === 1 ? 'entry' : 'entries'}${st.next ? ' shown; older ones on request' : ''}.`);
}

// older is the button that appends the next, older page (the service's
// next, which keeps the range), until the range's first transfer is shown.
function older(ctx, next) {
  const p = h('p', {id: 'statement-older'});
  if (!next) return p;
  const button = h('button', {type: 'button', class: 'secondary', id: 'statement-more'}, 'Show older transfers');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const page = await get(next);
      if (!ctx.alive()) return;
      document.querySelector('#statement tbody').append(...page.transfers.map(statementRow));
      next = page.next;
      const n = document.querySelectorAll('#statement tbody tr').length;
      if (!next) {
        p.replaceChildren(h('span', {class: 'hint'}, 'This is the first transfer of the range.'));
        ctx.status(`${n} entries: back to the first.`);
        return;
      }
      button.disabled = false;
      ctx.status(`${n} entries shown.`);
    } catch (err) {
      button.disabled = false;
      ctx.fail(err);
    }
  });
  p.append(button);
  return p;
}

// rangeForm narrows the statement to whole days (dates, inclusive) and
// offers the range as a CSV file: a real link to the service's
// transfers.csv, which the browser downloads itself on a session.
function rangeForm(ctx, a, range) {
  const from = h('input', {type: 'date', id: 'range-from', value: range.from});
  const to = h('input', {type: 'date', id: 'range-to', value: range.to});
  const q = statementQuery(range);
  const name = `${a.account_id}-statement${range.from && range.to ? `-${range.from}-${range.to}` : ''}.csv`;
  const href = `/rs/account/${enc(a.account_id)}/transfers.csv${q ? '?' + q : ''}`;
  const csv = h('a', {href, id: 'statement-csv', download: '', onclick: e => downloadCSV(ctx, e, href, name)},
    q ? 'Download this range as CSV' : 'Download the whole statement as CSV');
  const show = async e => {
    e.preventDefault();
    ctx.clearError();
    if (from.value && to.value && from.value > to.value) {
      showWords('The range ends before it starts. Choose a "from" day on or before the "to" day.');
      from.focus();
      return;
    }
    try {
      await account(ctx, a.account_id, {from: from.value, to: to.value});
      ctx.focus(document.getElementById('statement-h'));
    } catch (err) {
      ctx.fail(err);
    }
  };
  return h('form', {id: 'range-form', class: 'inline', novalidate: true, onsubmit: show, 'aria-label': 'Statement range'},
    h('label', {for: 'range-from'}, 'From'), from,
    h('label', {for: 'range-to'}, 'To'), to,
    h('button', {type: 'submit', id: 'range-show'}, 'Show'),
    range.from || range.to ? h('button', {type: 'button', class: 'secondary', id: 'range-clear',
      onclick: () => account(ctx, a.account_id).catch(err => ctx.fail(err))}, 'Whole history') : null,
    csv);
}

// downloadCSV lets the browser follow the link on a session (the cookie
// authorizes it). A pasted token cannot ride on a link, so in token mode,
// and only there, the file is fetched and handed over from memory.
async function downloadCSV(ctx, e, href, name) {
  if (!usingToken()) return;
  e.preventDefault();
  try {
    const res = await request(href, {raw: true, accept: 'text/csv'});
    const blob = await res.blob();
    if (!ctx.alive()) return;
    saveFile(blob, name);
    ctx.status('Downloaded ' + name + '.');
  } catch (err) {
    ctx.fail(err);
  }
}

const dateFormat = new Intl.DateTimeFormat('en-GB', {day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit'});

// statementDate shows the date and time with the year, as a bank
// statement does (a relative "3 days ago" cannot be reconciled).
function statementDate(iso) {
  const t = new Date(iso);
  return isNaN(t) ? '—' : h('time', {datetime: t.toISOString()}, dateFormat.format(t));
}

// checkAmount applies the API's amount rules before asking, so a typo is
// explained at once and a transfer the service would refuse is never
// offered (docs/contract.md §5); the server checks again.
function checkAmount(text, a) {
  const currency = a.currency;
  if (/^-/.test(text)) return 'The amount must be more than zero. To move money back, send it from the other account.';
  if (/^0[0-9]/.test(text)) return 'Write the amount without leading zeros, e.g. 7 rather than 007.';
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) return 'Write the amount with digits and a dot for decimals, e.g. 12.50.';
  const d = (text.split('.')[1] || '').length;
  if (d > decimals(currency)) return `${currency} has ${decimals(currency)} decimals at most. Round the amount.`;
  if (Number(text) <= 0) return 'The amount must be more than zero.';
  if (!amountSyntax.test(text) || (a.transfer_limit !== undefined && Number(text) > a.transfer_limit)) {
    return `One transfer may move at most ${money(a.transfer_limit ?? 1e15 - 1, currency)}. Send a smaller amount, or split it into several transfers.`;
  }
  if (Number(text) > a.balance) {
    return `Account ${a.account_id} holds ${money(a.balance, currency)}: send at most that, or pay money in first.`;
  }
  return '';
}

function transferForm(ctx, a, others) {
  const to = h('input', {id: 'transfer-to', type: 'text', autocomplete: 'off', list: 'own-accounts', 'aria-describedby': 'to-hint', required: true});
  const amount = h('input', {id: 'transfer-amount', type: 'text', inputmode: 'decimal', autocomplete: 'off', 'aria-describedby': 'amount-hint', required: true});
  const ref = h('input', {id: 'transfer-ref', type: 'text', autocomplete: 'off', maxlength: '140', 'aria-describedby': 'ref-hint'});
  let pending = null; // {to, amount, ref, key}: the idempotency key of an attempt, reused when it is retried unchanged
  const send = async e => {
    e.preventDefault();
    ctx.clearError();
    const dest = to.value.trim(), sum = amount.value.trim(), words = ref.value.trim();
    const problem = !dest ? 'Write the account to pay into.' : dest === a.account_id ? 'Choose another account than this one.' : checkAmount(sum, a);
    if (problem) {
      ctx.status(''); // the last transfer's result is not this attempt's
      showWords(problem);
      (dest && dest !== a.account_id ? amount : to).focus();
      return;
    }
    const after = a.balance - Number(sum);
    const ok = await confirmDialog('Send this transfer?', [
      `${money(Number(sum), a.currency)} leaves account ${a.account_id} and goes to account ${dest}.`,
      words ? `Reference: ${words}` : null,
      `${a.account_id} will then hold ${money(after, a.currency)}.`,
      'Once sent, only the receiver can send it back.'].filter(Boolean), `Send ${money(Number(sum), a.currency)}`);
    if (!ok) return ctx.status('Nothing was sent.');
    if (!pending || pending.to !== dest || pending.amount !== sum || pending.ref !== words) {
      pending = {to: dest, amount: sum, ref: words, key: crypto.randomUUID()};
    }
    ctx.status('Sending…');
    try {
      const {data} = await request(`/rs/transfer/from/${enc(a.account_id)}/to/${enc(dest)}/amount/${enc(sum)}`,
        words ? {method: 'POST', headers: {'Idempotency-Key': pending.key, 'Content-Type': 'application/json'}, body: JSON.stringify({reference: words})}
          : {method: 'POST', headers: {'Idempotency-Key': pending.key}});
      pending = null;
      ctx.result = `Sent ${money(data.amount, data.currency)} from ${data.from_account_id} to ${data.to_account_id}` +
        (data.reference ? ` (${data.reference}).` : '.');
      await account(ctx, a.account_id);
      ctx.status(ctx.result);
      ctx.focus(document.getElementById('transfer-result'));
    } catch (err) {
      ctx.status('');
      if (err && err.code === 'destination-refused') {
        showWords(`You may not pay into account ${dest}. ${explain(err)}`);
        to.focus();
        return;
      }
      ctx.fail(err);
    }
  };
  return h('form', {id: 'transfer-form', novalidate: true, onsubmit: send, 'aria-labelledby': 'transfer-h'},
    h('h2', {id: 'transfer-h'}, 'Send money from ' + a.account_id),
    h('div', {class: 'field'}, h('label', {for: 'transfer-to'}, 'To account'), to,
      h('p', {id: 'to-hint', class: 'hint'}, 'The account number of the receiver.'),
      h('datalist', {id: 'own-accounts'}, others.map(o => h('option', {value: o.account_id}, `${o.account_id} (${o.currency})`)))),
    h('div', {class: 'field'}, h('label', {for: 'transfer-amount'}, `Amount in ${a.currency}`), amount,
      h('p', {id: 'amount-hint', class: 'hint'}, (decimals(a.currency) ? `With a dot for decimals, e.g. ${(12.5).toFixed(decimals(a.currency))}.` : 'Whole units, e.g. 500.') +
        ` At most ${money(Math.min(a.balance, a.transfer_limit ?? a.balance), a.currency)} now.`)),
    h('div', {class: 'field'}, h('label', {for: 'transfer-ref'}, 'Reference (optional)'), ref,
      h('p', {id: 'ref-hint', class: 'hint'}, 'What the receiver reads on their statement, e.g. Rent March.')),
    h('button', {type: 'submit', id: 'transfer-review', class: 'primary'}, 'Review transfer…'));
}

function showWords(text) {
  const e = document.getElementById('error');
  e.textContent = text;
  e.hidden = false;
}
