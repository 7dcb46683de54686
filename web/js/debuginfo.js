// debuginfo.js - the debuginfo view: the symbolization coverage of the
// selection (GET /api/v1/coverage: the share of the profile type's value
// whose leaf frame is named and whose every frame is, and per module (its
// path as the profiles name it, its build ID) how much it leaves
// unnamed and the command that fixes it: `ember upload` of that path, or
// the agent's --upload-missing; JIT code, which has no file, gets neither)
// and the build IDs stored (GET /api/v1/artifacts, a page at a time: what
// each candidate carries, when it was uploaded).

import { getJSON } from './api.js';
import * as fmt from './format.js';

function cell(tr, text, cls) {
  const td = document.createElement('td');
  if (text instanceof Node) td.append(text);
  else td.textContent = text;
  if (cls) td.className = cls;
  tr.append(td);
  return td;
}

function yesNo(on, yes = 'yes', no = 'no') {
  const s = document.createElement('span');
  s.className = on ? 'yes' : 'no';
  s.textContent = on ? yes : no;
  return s;
}

function code(text) {
  const c = document.createElement('code');
  c.textContent = text;
  return c;
}

// What a candidate's features string says it carries.
function carries(features) {
  const f = new Set((features || '').split(',').filter(Boolean));
  const dwarf = [...f].find((x) => /^dwarf\d+$/.test(x));
  const cfi = ['eh_frame', 'debug_frame'].filter((x) => f.has(x));
  return { dwarf: dwarf ? 'DWARF ' + dwarf.slice(5) : '', symtab: f.has('symtab'),
           dynsym: f.has('dynsym'), gopclntab: f.has('gopclntab'), cfi };
}

// One word a POSIX shell reads literally: as it is when every character
// is one no shell treats specially (the set of Python's shlex.quote),
// else in single quotes, an embedded ' written '\''.
export function shellWord(s) {
  return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

// The command that would fix a build ID's missing debug info, or why none
// is shown: its text comes from pushed profiles, so a build ID that is
// not hex, or a file name holding a control character (a newline ends a
// pasted command), gets no command, and every other value is one quoted
// shell word (docs/security.md).  {command} or {why}.
export function uploadCommand(row) {
  const id = row.build_id;
  if (!/^[0-9a-fA-F]+$/.test(id)) return { why: 'not a hex build ID: no upload command' };
  const file = row.file || row.filename;
  if (file && /[\x00-\x1f\x7f]/.test(file)) return { why: 'a control character in the file name: no upload command' };
  const path = file ? shellWord(file) : `PATH/TO/the-binary-with-build-id-${id.slice(0, 12)}`;
  return { command: `ember upload --server ${shellWord(location.origin)} --token "$EMBER_TOKEN" --sources ${path}` };
}

// The cell of the command, or of the reason there is none.
function commandCell(row) {
  if (row.jit)
    return 'JIT or anonymous code: no file to upload; the runtime names it in a perf map ' +
      '(perf-PID.map) or jitdump the agent reads';
  if (!row.build_id || row.reason === 'no_build_id')
    return 'build without a build ID can not be matched: link with -Wl,--build-id';
  const u = uploadCommand(row);
  if (!u.command) return u.why;
  const frag = document.createDocumentFragment();
  frag.append(code(u.command));
  if (row.file) {
    const hint = document.createElement('div');
    hint.className = 'muted';
    hint.textContent = 'on a host that has the file; or run ember-agent there with --upload-missing';
    frag.append(hint);
  }
  return frag;
}

const pct = (v) => v.toFixed(2) + '%';

// The summary line of a coverage answer.
function summaryText(cov) {
  if (!cov.profiles) return 'no profiles in this range.';
  const stored = `${fmt.count(cov.resolved_samples)} of ${fmt.count(cov.samples)} samples in ${fmt.count(cov.profiles)} profiles fully symbolized (${cov.resolved_pct.toFixed(2)}%)`;
  if (!cov.named) {
    return stored + (cov.build_ids.length ? `; ${cov.build_ids.length} build IDs leave samples unsymbolized:` : '; nothing to upload.');
  }
  return `leaf frame named: ${pct(cov.named.leaf_named_pct)}, every frame named: ${pct(cov.named.all_named_pct)}; ` +
    `at ingest ${stored}; ` +
    (cov.modules.length ? `${cov.modules.length} modules leave frames unnamed:` : 'nothing to upload.');
}

export class DebuginfoView {
  constructor(els) {
    this.els = els;
    this.next = null;
    this.stored = new Map();
    els.more.addEventListener('click', () => this.page());
  }

  async show(sel) {
    const els = this.els;
    els.summary.textContent = 'loading…';
    els.artifacts.tBodies[0].replaceChildren();
    els.coverage.tBodies[0].replaceChildren();
    this.next = null;
    this.stored.clear();
    await this.page();
    try {
      const cov = await getJSON('/api/v1/coverage', { query: sel.query, type: sel.type,
                                                     from: sel.from, to: sel.to, limit: 0 });
      this.coverage(cov);
    } catch (e) {
      els.summary.textContent = `coverage: ${e.message}`;
      els.summary.className = 'status error';
    }
  }

  // One row a module (a type selected: cov.modules), else one a stored
  // record's build ID (its samples' share in the unnamed column).
  coverage(cov) {
    const els = this.els;
    els.summary.className = '';
    els.summary.textContent = summaryText(cov);
    const rows = cov.modules || cov.build_ids.map((r) => ({ ...r, file: '', unnamed_pct: r.pct }));
    const frag = document.createDocumentFragment();
    for (const row of rows) {
      const tr = document.createElement('tr');
      cell(tr, row.file ? code(row.file) : row.jit ? '(anonymous)' : '—');
      cell(tr, code(row.build_id || '(no build ID)'));
      cell(tr, row.jit ? 'jit' : row.reason || '—');
      cell(tr, pct(row.unnamed_pct), 'num');
      cell(tr, row.leaf_named_pct === undefined ? '—' : pct(row.leaf_named_pct), 'num');
      cell(tr, row.all_named_pct === undefined ? '—' : pct(row.all_named_pct), 'num');
      const st = this.stored.get(row.build_id);
      cell(tr, !row.build_id ? '—' : st === undefined ? '…' : yesNo(st));
      cell(tr, commandCell(row));
      tr.dataset.buildId = row.build_id;
      frag.append(tr);
      if (st === undefined && row.build_id) this.lookup(row.build_id, tr.children[6]);
    }
    els.coverage.tBodies[0].replaceChildren(frag);
  }

  async lookup(id, td) {
    try {
      const l = await getJSON(`/api/v1/artifacts/${encodeURIComponent(id)}`);
      td.replaceChildren(yesNo(l.artifacts.length > 0, `yes (${l.artifacts.length} files)`, 'no'));
    } catch (e) {
      td.textContent = e.message;
    }
  }

  async page() {
    const els = this.els;
    let doc;
    try {
      doc = await getJSON('/api/v1/artifacts', { after: this.next, limit: 100 });
    } catch (e) {
      const tr = document.createElement('tr');
      cell(tr, `cannot list the build IDs: ${e.message}`).colSpan = 9;
      els.artifacts.tBodies[0].append(tr);
      return;
    }
    const frag = document.createDocumentFragment();
    for (const id of doc.build_ids) {
      this.stored.set(id.build_id, id.artifacts.length > 0);
      id.artifacts.forEach((a, k) => {
        const tr = document.createElement('tr');
        const c = carries(a.features);
        cell(tr, k ? '' : code(id.build_id));
        cell(tr, a.name || a.sha256.slice(0, 12));
        cell(tr, a.kinds.join(', ') || '—');
        cell(tr, c.dwarf ? yesNo(true, c.dwarf) : yesNo(false));
        cell(tr, c.symtab ? yesNo(true) : c.dynsym || c.gopclntab ? (c.gopclntab ? 'gopclntab' : 'dynsym only') : yesNo(false));
        cell(tr, c.cfi.length ? yesNo(true, c.cfi.join(', ')) : yesNo(false));
        cell(tr, k ? '' : `${id.sources_stored} of ${id.sources_named} named`);
        cell(tr, fmt.bytes(a.size), 'num');
        cell(tr, fmt.time(a.uploaded * 1000));
        tr.dataset.buildId = id.build_id;
        frag.append(tr);
      });
    }
    els.artifacts.tBodies[0].append(frag);
    if (!doc.build_ids.length && !this.next) {
      const tr = document.createElement('tr');
      cell(tr, 'no build IDs stored yet: `ember upload` sends them').colSpan = 9;
      els.artifacts.tBodies[0].append(tr);
    }
    this.next = doc.next;
    els.more.hidden = !doc.next;
  }
}
