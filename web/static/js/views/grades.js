// Grades. A student sees their own grade and its history (#/grades). A
// professor picks a class (#/grades), sees its students and grades
// (#/grades/english-101), a student's history (#/grades/english-101/alice),
// changes a grade after confirming it, and downloads or uploads the
// gradebook (CSV) with a dry-run preview first. Staff who may only view a
// class get no change controls.

import {get, request, ApiError, enc} from '../api.js';
import {h, fill, when, fullDate, confirmDialog, saveFile} from '../dom.js';
import {explain} from '../words.js';
import {drawOnDemand} from '../slices.js';
import {gradebook} from './gradebook.js';
import {classPosting} from './posting.js';

// Shown to students and to grading staff with a class here (/auth/me's has).
export const allowed = me => (me.role === 'student' || me.role === 'professor') && (!me.has || me.has.classes);

// Written by `go generate ./web` from grades.Scale (grades/grade.go), the
// one list of the grades. Do not edit down to the end marker.
const SCALE = ['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'F'];
// End of the written scale.

const gradePath = s => `/student/${enc(s)}/english/grade`;

export async function render(ctx, parts) {
  if (ctx.me.role === 'student') return ownGrade(ctx);
  const [cls, student] = parts;
  if (!cls) return classList(ctx);
  return classView(ctx, cls, student);
}

// ownGrade is a student's page: their grade and its history.
async function ownGrade(ctx) {
  const sub = ctx.me.sub;
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your grade'), h('p', {}, 'Loading…'));
  let rec;
  try {
    rec = await get(gradePath(sub));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not-found') {
      fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your grade'),
        h('p', {id: 'own-grade'}, 'You have no english grade yet. It appears here once your professor sets it.'));
      return;
    }
    // Never posted: a grade may exist, but its student learns nothing of
    // it (not even that) until the class's staff release it.
    if (err instanceof ApiError && err.code === 'grade-not-posted') {
      fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your grade'), h('p', {id: 'own-grade', class: 'big'}, explain(err)));
      return;
    }
    throw err;
  }
  const history = h('section', {'aria-labelledby': 'history-h'});
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your grade'),
    h('p', {id: 'own-grade', class: 'big'}, 'English: ', h('strong', {}, rec.grade)),
    h('p', {id: 'own-grade-by'}, byWhom(rec.updated_by, 'Given by ' + rec.updated_by, 'Recorded when the grades were loaded'), ' on ', fullDay(rec.updated_at), '.'),
    history);
  await drawHistory(ctx, history, sub, false, true);
}

// byWhom names who set a grade in a person's words: grades loaded with
// the service's data were set by no person ("seed").
function byWhom(who, named, loaded = 'recorded when the grades were loaded') {
  return who === 'seed' ? loaded : named;
}

const dayFormat = new Intl.DateTimeFormat('en-GB', {day: 'numeric', month: 'long', year: 'numeric'});

// fullDay is a date with its year, in a <time> with the exact moment.
function fullDay(iso) {
  const t = new Date(iso);
  return isNaN(t) ? '—' : h('time', {datetime: t.toISOString(), title: fullDate(iso)}, dayFormat.format(t));
}

async function classList(ctx) {
  const {classes} = await get('/class');
  if (!ctx.alive()) return;
  fill(ctx.el, h('h1', {tabindex: '-1'}, 'Your classes'),
    classes.length ? h('ul', {id: 'classes', class: 'plain'}, classes.map(c =>
      h('li', {}, h('a', {href: '#/grades/' + enc(c.class_id)}, c.class_id))))
      : h('p', {}, 'You teach or assist no class. Ask your department if that is wrong.'));
  ctx.status(classes.length + (classes.length === 1 ? ' class.' : ' classes.'));
}

// loadClass reads every page of the class's students (a lecture has
// thousands: every one is reachable, none cut at a fixed count).
async function loadClass(cls) {
  let path = `/class/${enc(cls)}/grades?limit=100`;
  const students = [];
  for (let i = 0; path && i < 10000; i++) {
    const page = await get(path);
    students.push(...page.students);
    path = page.next;
  }
  return students;
}

async function classView(ctx, cls, openStudent) {
  const students = await loadClass(cls);
  if (!ctx.alive()) return;
  const anyChange = students.some(s => s.can_change);
  const state = {cls, anyChange, students: new Map(students.map(s => [s.student_id, s]))};
  const heads = ['Student', 'Grade', anyChange ? 'Change' : null, 'History'].filter(Boolean);
  const cols = ['w-id', 'w-grade', anyChange ? 'w-change' : null, 'w-link'].filter(Boolean);
  const box = h('div', {class: 'scroll', id: 'students', tabindex: '0', role: 'region', 'aria-label': 'Students of ' + cls});
  const more = h('p', {id: 'students-more'});
  const history = h('section', {id: 'history-panel', 'aria-labelledby': 'history-h'});
  // Posting and the class at a glance (docs/contract.md §4): also for a
  // class without a grade yet, whose lecturer holds grades before any is
  // entered.
  const glance = classPosting(ctx, cls, async () => {
    await refresh();
    // A post changes what the history beside a grade says: redrawn.
    if (history.dataset.student) await drawHistory(ctx, history, history.dataset.student);
  });
  const refresh = async () => {
    const fresh = await loadClass(cls);
    if (!ctx.alive()) return;
    state.students = new Map(fresh.map(s => [s.student_id, s]));
    drawRows();
    await glance.update();
  };
  const book = anyChange ? gradebook(ctx, cls, async data => {
    await refresh();
    const shown = history.dataset.student;
    if (shown && data.rows.some(r => r.student_id === shown && r.outcome === 'changed')) await drawHistory(ctx, history, shown);
  }, text => showWords(ctx, text)) : null;
  // A search by student narrows the table; the rows are drawn on demand
  // (slices.js), so a lecture of 5,000 never holds the tab.
  const search = h('input', {type: 'search', id: 'student-search', autocomplete: 'off', 'aria-describedby': 'student-count',
    oninput: () => drawRows()});
  const count = h('p', {id: 'student-count', class: 'hint', 'aria-live': 'polite'});
  const drawRows = () => {
    const q = search.value.trim().toLowerCase();
    const all = [...state.students.values()];
    const shown = q ? all.filter(s => s.student_id.toLowerCase().includes(q)) : all;
    count.textContent = q ? `${shown.length} of ${all.length} students match “${search.value.trim()}”.` : `${all.length} students.`;
    drawOnDemand(box, more, shown, s => row(ctx, state, s, refresh, history), 'students',
      {caption: `Students of ${cls} and their english grades`, heads, cols});
  };
  drawRows();
  await glance.update();
  if (!ctx.alive()) return;
  fill(ctx.el,
    h('p', {class: 'crumbs'}, h('a', {href: '#/grades'}, 'Your classes')),
    h('h1', {tabindex: '-1', id: 'class-h'}, 'Class ' + cls),
    anyChange ? null : h('p', {class: 'note', id: 'view-only'}, 'You may view this class\'s grades; changing them is for its teachers.'),
    glance.posting,
    h('div', {class: 'beside'},
      glance.chart,
      h('div', {class: 'main-col'},
        h('div', {class: 'field'}, h('label', {for: 'student-search'}, 'Find a student'), search, count),
        box, more)),
    anyChange ? h('datalist', {id: 'grade-scale'}, SCALE.map(g => h('option', {value: g}))) : null,
    h('h2', {}, 'Gradebook'),
    h('p', {}, h('button', {type: 'button', class: 'secondary', id: 'book-download', onclick: () => downloadBook(ctx, cls)},
      'Download gradebook (CSV)')),
    book,
    history);
  ctx.status(`${state.students.size} students in ${cls}.`);
  if (openStudent && state.students.has(openStudent)) await drawHistory(ctx, history, openStudent, true);
}

function row(ctx, state, s, refresh, history) {
  const id = 'grade-' + s.student_id;
  let control = null;
  if (state.anyChange) {
    // A text field offering the scale (one shared datalist), not a
    // <select>: Chromium lays out each select's menu, about 1 ms apiece,
    // which made a step of 200 rows hold the tab for 250-400 ms; a field
    // costs a tenth of that, and grade books are typed into anyway.
    const select = h('input', {id, list: 'grade-scale', class: 'grade-input', autocomplete: 'off', spellcheck: 'false',
      size: '4', maxlength: '2'});
    control = h('td', {}, s.can_change ? h('span', {class: 'inline'},
      h('label', {for: id, class: 'visually-hidden'}, 'New grade for ' + s.student_id), select,
      h('button', {type: 'button', 'data-save': s.student_id, onclick: () => change(ctx, state, s, select, refresh, history)},
        s.grade ? 'Change…' : 'Set…')) : '—');
  }
  return h('tr', {'data-student': s.student_id},
    h('th', {scope: 'row'}, s.student_id),
    h('td', {}, h('span', {class: 'grade'}, s.grade || h('span', {class: 'hint'}, 'none yet')),
      // Marked in words, not colour alone: its student does not see it yet.
      s.grade && s.posted === false ? h('span', {class: 'tag unposted'}, 'Not posted') : null,
      s.grade ? h('span', {class: 'hint block'}, `version ${s.version}, ${byWhom(s.updated_by, 'by ' + s.updated_by)}, `, when(s.updated_at)) : null),
    control,
    h('td', {}, h('a', {href: `#/grades/${enc(state.cls)}/${enc(s.student_id)}`, 'data-history': s.student_id,
      'aria-label': 'History of ' + s.student_id}, 'History')));
}

// change confirms and sends one grade, with the version last read as
// If-Match: a change someone made since is explained, not overwritten.
async function change(ctx, state, s, select, refresh, history) {
  ctx.clearError();
  const to = select.value.trim().toUpperCase();
  if (!to) {
    ctx.fail({code: 'choose-grade'});
    showWords(ctx, `Choose a grade for ${s.student_id} first.`);
    select.focus();
    return;
  }
  if (!SCALE.includes(to)) {
    ctx.fail({code: 'choose-grade'});
    showWords(ctx, `“${select.value.trim()}” is not a grade. Type one of ${SCALE.join(', ')} for ${s.student_id}.`);
    select.focus();
    return;
  }
  select.value = to;
  if (to === s.grade) {
    ctx.status(`${s.student_id} already has ${to}; nothing to change.`);
    return;
  }
  const ok = await confirmDialog(`${s.grade ? 'Change' : 'Set'} ${s.student_id}'s grade?`,
    [s.grade ? `From ${s.grade} to ${to}.` : `Set it to ${to} (there is none yet).`,
      `The change is recorded with your name in the grade's history.`],
    s.grade ? `Change to ${to}` : `Set ${to}`);
  if (!ok) {
    ctx.status('Nothing was changed.');
    select.focus();
    return;
  }
  ctx.status('Saving…');
  const body = JSON.stringify({grade: to});
  const headers = {'Content-Type': 'application/json'};
  try {
    const method = s.grade ? 'PUT' : 'POST';
    if (s.grade) headers['If-Match'] = `"${s.version}"`;
    const {data} = await request(gradePath(s.student_id), {method, body, headers});
    await refresh();
    await drawHistory(ctx, history, s.student_id);
    ctx.status(`${s.student_id}'s grade is now ${data.grade}.`);
  } catch (err) {
    if (!(err instanceof ApiError) || !['version-mismatch', 'grade-exists'].includes(err.code)) {
      ctx.status('');
      return ctx.fail(err);
    }
    await conflict(ctx, s, to, refresh, history);
  }
  ctx.focus(document.getElementById('grade-' + s.student_id));
}

// conflict says who changed the grade to what, refreshes the row and the
// history, and leaves the choice to the person.
async function conflict(ctx, s, wanted, refresh, history) {
  const cur = await get(gradePath(s.student_id));
  await refresh();
  await drawHistory(ctx, history, s.student_id);
  ctx.status('');
  showWords(ctx, `Not saved: while you were looking, ${cur.updated_by} ${s.grade ? 'changed' : 'set'} ${s.student_id}'s grade to ` +
    `${cur.grade} (version ${cur.version}, ${fullDate(cur.updated_at)}). Your choice, ${wanted}, was not sent. ` +
    `The list and the history now show the current grade; choose again if it should still change.`);
}

function showWords(ctx, text) {
  if (!ctx.alive()) return;
  const e = document.getElementById('error');
  e.textContent = text;
  e.hidden = false;
}

// drawHistory shows a grade's changes, newest first, beside the grade:
// redrawn whenever that grade changes. own: the student's own page, in
// the words a student uses (no version numbers).
async function drawHistory(ctx, panel, student, focus, own) {
  const {versions} = await get(gradePath(student) + '/history');
  if (!ctx.alive()) return;
  panel.dataset.student = student;
  const heading = h('h2', {id: 'history-h', tabindex: '-1'}, own ? 'How your grade changed' : 'History of ' + student + '\'s grade');
  panel.replaceChildren(heading, h('ul', {id: 'history', class: 'history plain'}, versions.map(v => h('li', {'data-version': v.version},
    own ? '' : h('span', {class: 'hint'}, `Version ${v.version}: `),
    v.previous_grade ? `${v.previous_grade} → ${v.grade}, ` : `${v.grade}, `,
    byWhom(v.updated_by, (v.previous_grade ? 'changed by ' : 'given by ') + v.updated_by), ', ', fullDay(v.updated_at),
    // Staff see when each version reached its student, or that it has not.
    own ? null : v.posted === false ? h('span', {class: 'tag unposted'}, 'Not posted')
      : v.posted_by && v.posted_by !== 'seed' ? [`; posted by ${v.posted_by}, `, fullDay(v.posted_at)] : null))));
  if (focus) ctx.focus(heading);
}

async function downloadBook(ctx, cls) {
  try {
    const {data} = await request(`/class/${enc(cls)}/grades`, {accept: 'text/csv'});
    if (!ctx.alive()) return;
    saveFile(new Blob([data], {type: 'text/csv'}), `${cls}-grades.csv`);
    ctx.status(`Downloaded ${cls}-grades.csv.`);
  } catch (err) {
    ctx.fail(err);
  }
}
