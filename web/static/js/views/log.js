// A job's log read in the page (#/builds/PROJ-CORE/6/log/JOB1, a line:
// .../log/JOB1/120): numbered lines, each with its own address, error
// lines marked, a search that jumps between hits; a running job's log
// grows as the build server appends to it.

import {get, request, sameOrigin, enc} from '../api.js';
import {h, fill} from '../dom.js';
import {REST, items, running, poll, resultPath, jobsOf, isLog, downloadLink} from './buildparts.js';

// errorLine marks the lines people look for in a failed build's log.
const errorLine = /\b(error|errors|fail|failed|failure|fatal|exception)\b|^\s*at\s|\[ERROR\]/i;

// buildLog shows a job's log in the page: from the job's build log file
// when Bamboo kept one, else from the job result's logEntries (a job whose
// log is only there, such as a packaging job). Lines are numbered, each
// has its own address, error lines are marked, and a search jumps between
// hits. Long logs are drawn in slices between frames, so the tab keeps
// answering while 10,000 lines appear. While the job runs, the log is
// asked again every two seconds with If-None-Match and new lines are
// appended; the view follows them when it was scrolled to the end.
export async function buildLog(ctx, plan, n, job, line) {
  const r = (await request(resultPath(plan, n), {conditional: true})).data;
  if (!ctx.alive()) return;
  const key = `${plan}-${job}-${n}`;
  const jobOf = res => jobsOf(res).find(j => (j.buildResultKey || j.key) === key);
  const jobResult = jobOf(r);
  const live = res => running(jobOf(res) || res);
  const jobName = (jobResult && jobResult.jobName) || job;
  const name = r.planName || plan;
  const file = items(r.artifacts, 'artifact').find(a => a.producerJobKey === key && isLog(a));
  const heading = h('h1', {tabindex: '-1', id: 'log-h'}, `Log of ${jobName} in ${name} #${n}`);
  const crumbs = h('p', {class: 'crumbs'}, h('a', {href: '#/builds'}, 'All projects'), ' › ', h('a', {href: '#/builds/' + plan}, name),
    ' › ', h('a', {href: `#/builds/${plan}/${n}`}, '#' + n));
  fill(ctx.el, crumbs, heading, h('p', {}, 'Loading the log…'));
  const source = file ? fileSource(sameOrigin(file.link.href)) : entrySource(`${REST}/result/${enc(key)}?expand=logEntries`);
  const lines = await source.more(!live(r));
  if (!ctx.alive()) return;
  if (!lines.length && !live(r)) {
    fill(ctx.el, crumbs, heading, h('p', {}, 'This job kept no log.'));
    return;
  }
  const base = `#/builds/${plan}/${n}/log/${job}`;
  const box = h('div', {id: 'log', class: 'log', role: 'region', tabindex: '0'});
  const search = h('input', {type: 'search', id: 'log-search', autocomplete: 'off', 'aria-describedby': 'log-search-count'});
  const count = h('span', {id: 'log-search-count', class: 'hint', 'aria-live': 'polite'});
  const size = h('span', {id: 'log-size'});
  const runningNote = h('span', {id: 'log-running'}, live(r) ? ' The job is still running: new lines appear as they are written.' : '');
  let errors = 0;
  const sizeText = () => {
    fill(size, `${lines.length.toLocaleString('en')} ${lines.length === 1 ? 'line' : 'lines'}`, errors ? `, ${errors.toLocaleString('en')} marked as errors` : '', '.');
    box.setAttribute('aria-label', `Log of ${jobName}, ${lines.length} lines`);
  };
  fill(ctx.el, crumbs, heading,
    h('p', {class: 'hint log-lines'}, size, runningNote,
      file ? [' ', downloadLink(ctx, file, 'Download the log', {'data-log': job})] : ' Read from the job result: the build server kept no log file for this job.'),
    h('form', {class: 'inline log-search', role: 'search', onsubmit: e => e.preventDefault()},
      h('label', {for: 'log-search'}, 'Search the log'), search,
      h('button', {type: 'button', id: 'log-next', class: 'secondary', onclick: () => jump(1)}, 'Next'),
      h('button', {type: 'button', id: 'log-prev', class: 'secondary', onclick: () => jump(-1)}, 'Previous'), count),
    box);

  const rows = [];
  // A line's own address: the address bar changes without redrawing the
  // view. Declared before the first slice, which selects the address's
  // line when the log is short enough to be drawn in it.
  let selected = null;
  function select(no, scroll) {
    const row = rows[no - 1];
    if (!row) return;
    if (selected) selected.classList.remove('selected');
    selected = row;
    row.classList.add('selected');
    if (scroll) row.scrollIntoView({block: 'center'});
  }
  // draw appends the rows of lines[from, to), in parts of PART rows: each
  // part after the first is laid out only near the screen (.part in
  // app.css), so neither a slice nor a jump to a line lays the whole log
  // out again. A part not yet full (the tail of a running job's log) takes
  // the next rows.
  const PART = 500;
  let part = null, inPart = 0;
  const draw = (from, to) => {
    const frag = document.createDocumentFragment();
    for (let i = from; i < to; i++) {
      if (!part || inPart === PART) {
        part = h('div', {class: 'part'});
        inPart = 0;
        frag.append(part);
      }
      const no = i + 1;
      const row = document.createElement('div');
      const err = errorLine.test(lines[i]);
      if (err) errors++;
      row.className = err ? 'line err' : 'line';
      row.id = 'L' + no;
      const a = document.createElement('a');
      a.className = 'ln';
      a.href = base + '/' + no;
      a.textContent = no;
      a.setAttribute('aria-label', 'Line ' + no);
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = lines[i];
      row.append(a, text);
      part.append(row);
      inPart++;
      rows[i] = row;
    }
    box.append(frag);
  };
  const started = performance.now();
  let drawn = 0, slices = 0;
  const slice = () => {
    if (!ctx.alive()) return;
    slices++;
    const end = Math.min(lines.length, drawn + 2500);
    draw(drawn, end);
    drawn = end;
    if (drawn < lines.length) {
      requestAnimationFrame(slice);
      return;
    }
    sizeText();
    box.dataset.drawnMs = String(Math.round(performance.now() - started));
    box.dataset.slices = String(slices);
    box.dataset.ready = 'true';
    if (line) select(line, true);
    else if (live(r)) box.scrollTop = box.scrollHeight; // a running log is read at its end
    ctx.status(`Log of ${jobName}: ${lines.length.toLocaleString('en')} lines.`);
    if (live(r)) tail();
  };
  slice();

  // tail appends what the job writes while it runs, following it when
  // the view was at its end; the job's end is the last look.
  function tail() {
    poll(ctx, async () => {
      const res = await request(resultPath(plan, n), {conditional: true});
      const more = await source.more(!live(res.data));
      if (!ctx.alive()) return false;
      if (source.replaced) {
        // The file was replaced, not appended to: start the view again.
        ctx.status('The log was replaced; reading it again.');
        return buildLog(ctx, plan, n, job, line).then(() => false);
      }
      if (more.length) {
        const end = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
        const from = lines.length;
        lines.push(...more);
        draw(from, lines.length);
        if (search.value) mark(from);
        sizeText();
        if (end) box.scrollTop = box.scrollHeight;
        box.dataset.tailed = String(lines.length);
      }
      if (live(res.data)) return true;
      runningNote.textContent = ' The job has finished.';
      ctx.status(`The job has finished: ${lines.length.toLocaleString('en')} lines.`);
      return false;
    });
  }

  box.addEventListener('click', e => {
    const a = e.target.closest('a.ln');
    if (!a) return;
    e.preventDefault();
    history.pushState(null, '', a.getAttribute('href'));
    select(Number(a.textContent), false);
  });

  // Search: every hit marked, Next and Previous (Enter, Shift+Enter) jump.
  let hits = [], at = -1;
  // mark adds the hits among lines[from...].
  const mark = from => {
    const q = search.value.toLowerCase();
    for (let i = from; q && i < lines.length; i++) {
      if (!lines[i].toLowerCase().includes(q)) continue;
      hits.push(i);
      if (rows[i]) rows[i].classList.add('hit');
    }
    count.textContent = q ? (hits.length ? `${hits.length} ${hits.length === 1 ? 'line matches' : 'lines match'}.` : 'No line matches.') : '';
  };
  search.addEventListener('input', () => {
    for (const i of hits) rows[i] && rows[i].classList.remove('hit', 'current');
    hits = [];
    at = -1;
    mark(0);
  });
  search.addEventListener('keydown', e => {
    if (e.key === 'Enter') { e.preventDefault(); jump(e.shiftKey ? -1 : 1); }
  });
  function jump(step) {
    if (!hits.length) return;
    if (at >= 0 && rows[hits[at]]) rows[hits[at]].classList.remove('current');
    at = (at + step + hits.length) % hits.length;
    const row = rows[hits[at]];
    if (!row) return;
    row.classList.add('current');
    row.scrollIntoView({block: 'center'});
    count.textContent = `Line ${hits[at] + 1}: match ${at + 1} of ${hits.length}.`;
  }
}

// fileSource reads a log file, each time the lines added since the last
// read. While the job runs it asks with If-None-Match: the service keeps
// a running job's log and answers an unchanged one with a 304, so many
// watchers cost the build server one read. An answer that does not start
// as the text already read is a file replaced (replaced is set). While
// the job runs only whole lines are taken: a line still being written
// waits for its end; final (the job has finished) takes the last line
// without one.
function fileSource(href) {
  let seen = 0, mark = '';
  const src = {replaced: false};
  src.more = async final => {
    const a = await request(href, {conditional: !final || seen > 0, accept: 'text/plain, */*'});
    const text = typeof a.data === 'string' ? a.data : '';
    if (text.length < seen || text.slice(Math.max(0, seen - 64), seen) !== mark) {
      src.replaced = true;
      return [];
    }
    const rest = text.slice(seen);
    const cut = final ? rest.length : rest.lastIndexOf('\n') + 1;
    seen += cut;
    mark = text.slice(Math.max(0, seen - 64), seen);
    const whole = rest.slice(0, cut).replace(/\r?\n$/, '');
    return cut === 0 || (whole === '' && !rest.startsWith('\n')) ? [] : whole.split('\n').map(l => l.replace(/\r$/, ''));
  };
  return src;
}

// entrySource reads a job result's logEntries, each time the entries not
// yet read (If-None-Match: an unchanged list costs a 304).
function entrySource(path) {
  let seen = 0;
  return {
    replaced: false,
    async more() {
      const a = await request(path, {conditional: true});
      const all = items(a.data.logEntries, 'logEntry').map(e => e.unstyledLog !== undefined ? e.unstyledLog : e.log);
      const out = all.slice(seen);
      seen = Math.max(seen, all.length);
      return out;
    },
  };
}
