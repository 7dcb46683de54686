// source.js - the source view (docs/web-ui.md, "Source view"): one
// function's source file with each line's self and total share beside it
// (GET /api/v1/source), or on a diff each line's shares before and after
// and the change (GET /api/v1/diff/source), scrolled to the hottest line.
// The text is the debuginfo store's (what `ember upload --sources` sent);
// without it the lines with values are listed alone, with the reason and
// the upload command that would add it.  Owns the #view-source section and
// the URL keys fn, file and src.

import { getJSON } from './api.js';
import { uploadCommand } from './debuginfo.js';
import * as fmt from './format.js';

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// The request of state s: its function (and file) over the flame graph's
// selection, or over the diff's two.
export function sourceRequest(s) {
  const common = { type: s.type, function: s.fn, file: s.file };
  if (s.src !== 'diff')
    return ['/api/v1/source', { ...common, query: s.query, from: s.from, to: s.to }];
  return ['/api/v1/diff/source', { ...common, base_query: s.base_query, base_from: s.base_from || s.from,
                                   base_to: s.base_to || s.to, new_query: s.new_query,
                                   new_from: s.new_from || s.from, new_to: s.new_to || s.to }];
}

// Per line number: its shares ({self, total} a side, of each side's total).
function lineShares(doc, file) {
  const diff = 'base_total' in doc, out = new Map();
  for (const l of file.lines)
    out.set(l.line, diff
      ? { base: { self: l.base_self / (doc.base_total || 1), total: l.base_total / (doc.base_total || 1) },
          new: { self: l.new_self / (doc.new_total || 1), total: l.new_total / (doc.new_total || 1) } }
      : { new: { self: l.self / (doc.total || 1), total: l.total / (doc.total || 1) } });
  return out;
}

// The line to scroll to: the largest total share; on a diff, the largest
// growth of the total share (else the largest new total).
function hottest(shares, diff) {
  let best = null, score = -Infinity;
  for (const [no, s] of shares) {
    const v = diff && s.new.total > s.base.total ? 1 + s.new.total - s.base.total : s.new.total;
    if (no > 0 && v > score) [best, score] = [no, v];
  }
  return best;
}

export class SourceView {
  // section: #view-source; onFile(path): another file of the function asked for.
  constructor(section, onFile) {
    this.els = {
      title: section.querySelector('#source-title'), status: section.querySelector('#source-status'),
      files: section.querySelector('#source-files'), missing: section.querySelector('#source-missing'),
      scroll: section.querySelector('#source-scroll'), table: section.querySelector('#source-lines'),
    };
    this.onFile = onFile;
    this.seq = 0;
  }

  async show(s) {
    const els = this.els, seq = ++this.seq;
    els.title.textContent = s.fn ? `${s.fn}${s.src === 'diff' ? ' — before and after' : ''}` : '';
    els.files.replaceChildren();
    els.missing.hidden = true;
    els.table.tBodies[0].replaceChildren();
    if (!s.fn) {
      this.status('no function chosen: pick a frame of the flame graph, a row of the top table or a frame of the diff');
      return;
    }
    this.status('loading…');
    let doc;
    try {
      const [path, params] = sourceRequest(s);
      doc = await getJSON(path, params);
    } catch (e) {
      if (seq === this.seq) this.status(e.message, true);
      return;
    }
    if (seq !== this.seq) return;
    this.render(doc, s);
  }

  status(text, error = false) {
    this.els.status.className = error ? 'status error' : 'status';
    this.els.status.textContent = text;
  }

  render(doc, s) {
    const diff = 'base_total' in doc, file = doc.files[0];
    this.doc = doc;
    if (!file) {
      this.status(`no source lines of ${doc.function} in this selection: no frame of it, or none ` +
                  'with a source file (an unsymbolized frame has none)');
      return;
    }
    this.summary(doc, diff);
    this.fileButtons(doc, s);
    this.explainMissing(file);
    this.head(diff);
    const shares = lineShares(doc, file);
    const hot = hottest(shares, diff);
    const body = this.els.table.tBodies[0];
    const numbers = file.text ? file.text.map((_, i) => i + 1) : [...shares.keys()];
    body.replaceChildren(...numbers.map((no) =>
      this.row(no, file.text ? file.text[no - 1] : '', shares.get(no), diff, no === hot)));
    this.scrollTo(hot);
  }

  summary(doc, diff) {
    const t = (v, total) => fmt.pct(v / (total || 1));
    this.status(diff
      ? `${doc.function}: self ${t(doc.base_function_self, doc.base_total)} → ${t(doc.new_function_self, doc.new_total)}, ` +
        `total ${t(doc.base_function_total, doc.base_total)} → ${t(doc.new_function_total, doc.new_total)} ` +
        `(base ${fmt.count(doc.base_profiles)} profiles, new ${fmt.count(doc.new_profiles)})`
      : `${doc.function}: self ${t(doc.function_self, doc.total)} (${fmt.value(doc.function_self, doc.unit)}), ` +
        `total ${t(doc.function_total, doc.total)} (${fmt.value(doc.function_total, doc.unit)}) of ` +
        `${fmt.value(doc.total, doc.unit)}, ${fmt.count(doc.profiles)} profiles`);
  }

  // The function's files (more than one: a namesake elsewhere, a header).
  fileButtons(doc, s) {
    const shown = doc.files[0].file;
    const items = doc.files.map((f) => {
      const b = el('button', '', f.file || '(no file)');
      b.type = 'button';
      b.setAttribute('aria-pressed', String(f.file === shown));
      b.disabled = !f.file || f.file === shown;
      b.addEventListener('click', () => this.onFile(f.file));
      return b;
    });
    this.els.files.replaceChildren(el('span', 'muted', doc.files.length > 1 ? 'Files: ' : 'File: '), ...items);
    if (s.file) { // one file asked for: the way back to all of them
      const all = el('button', '', 'all files');
      all.type = 'button';
      all.addEventListener('click', () => this.onFile(''));
      this.els.files.append(all);
    }
    if (doc.files[0].build_id) this.els.files.append(el('span', 'muted', ` build ID ${doc.files[0].build_id}`));
  }

  explainMissing(file) {
    const m = this.els.missing;
    if (!file.missing) return;
    m.hidden = false;
    m.replaceChildren(el('p', '', `No source text: ${file.missing.message}.`));
    if (file.missing.reason !== 'not_stored') return;
    const u = uploadCommand({ build_id: file.build_id, file: file.module });
    m.append(u.command ? el('p', '', 'The upload that adds it (the binary with its DWARF, from the build):')
                       : el('p', '', u.why));
    if (u.command) m.append(el('code', 'upload', u.command));
  }

  head(diff) {
    const cols = diff ? ['Line', 'Self base', 'Self new', 'Total base', 'Total new', 'Δ total', 'Source']
                      : ['Line', 'Self', 'Total', 'Source'];
    const tr = el('tr');
    for (const c of cols) {
      const th = el('th', c === 'Source' ? '' : 'num', c);
      th.scope = 'col';
      tr.append(th);
    }
    this.els.table.tHead.replaceChildren(tr);
  }

  row(no, text, s, diff, hot) {
    const tr = el('tr', s ? 'has' : '');
    tr.dataset.line = no;
    const cell = (v) => el('td', 'num', v ? fmt.pct(v) : '');
    tr.append(el('td', 'num lineno', String(no)));
    if (diff) {
      const d = s ? s.new.total - s.base.total : 0;
      tr.append(cell(s && s.base.self), cell(s && s.new.self), cell(s && s.base.total), cell(s && s.new.total),
                el('td', 'num ' + (d > 0 ? 'grew' : d < 0 ? 'shrank' : ''), d ? fmt.points(d) : ''));
      if (d) tr.style.setProperty('--heat', Math.min(1, Math.abs(d) * 4).toFixed(3));
      if (d) tr.classList.add(d > 0 ? 'grew' : 'shrank');
    } else {
      tr.append(cell(s && s.new.self), cell(s && s.new.total));
      if (s) tr.style.setProperty('--heat', Math.min(1, s.new.total * 2).toFixed(3));
    }
    tr.append(el('td', 'code', text));
    if (hot) tr.classList.add('hot');
    return tr;
  }

  // The hot line in the middle of the scrolled box.
  scrollTo(no) {
    const box = this.els.scroll;
    const tr = no && this.els.table.querySelector(`tr[data-line="${no}"]`);
    if (!tr) return;
    const at = tr.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    box.scrollTop = Math.max(0, at - box.clientHeight / 2 + tr.offsetHeight / 2);
  }
}
