// main.js - the web UI's state and views (docs/web-ui.md).  The whole
// state lives in the URL's query string (state.js's keys), so a link
// reproduces what its sender saw: selection, range, view, zoom, search.

import { getJSON, getBlob, loadTree, url, setTenant, ApiError } from './api.js';
import { FlameGraph, svgDocument } from './flame.js';
import { ChartPanel } from './chartpanel.js';
import { SelectorInput } from './selector.js';
import { TopTable } from './toptable.js';
import { renderDiffTable } from './difftable.js';
import { DebuginfoView } from './debuginfo.js';
import { SourceView } from './source.js';
import { TenantField } from './tenant.js';
import { timeParts } from './series.js';
import { subtreeProfile, gzipBlob } from './pprof.js';
import { DEFAULTS, readState, writeState, withMatcher } from './state.js';
import { Views, viewParams } from './sandwich.js';
import { UnsymControls, unsymParams } from './unsym.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);
let state = readState(location.search);
const perf = (window.emberPerf = { renders: [] });

// ---- tenant -----------------------------------------------------------------------

// Another tenant named: a new history entry, and everything loaded again
// as that tenant (its profile types first: each tenant has its own).
const tenantField = new TenantField($('tenant-form'), $('tenant'), $('tenant-note'), (name) => {
  if (name === state.tenant) return;
  perf.click = performance.now();
  readInputs();
  Object.assign(state, { tenant: name, zoom: '', dzoom: '', focus: '' });
  history.pushState(null, '', '?' + writeState(state));
  begin();
});

// Name the state's tenant on every call, then show the state.
async function begin() {
  setTenant(state.tenant);
  tenantField.set(state.tenant);
  await loadTypes();
  fillInputs();
  show();
}

// ---- selection bar ------------------------------------------------------------

const tooltip = $('tooltip');
const selector = new SelectorInput($('query'), $('query-suggest'),
  () => ({ type: $('type').value || state.type, from: $('from').value || state.from, to: $('to').value || state.to }));
// the chart and its controls (group by, compare, hide kernel): chartpanel.js
const chart = new ChartPanel({ state: () => ({ ...state }), navigate, remember,
                               focus: (name) => top.onFocus(name) });

function fillInputs() {
  $('query').value = state.query;
  $('from').value = state.from;
  $('to').value = state.to;
  $('search').value = state.search;
  $('diff-search').value = state.dsearch;
  $('icicle').checked = state.icicle === '1';
  $('diff-icicle').checked = state.icicle === '1';
  for (const b of document.querySelectorAll('[data-range]'))
    b.setAttribute('aria-pressed', String(state.from === 'now-' + b.dataset.range && state.to === 'now'));
  for (const r of document.querySelectorAll('input[name=diff-layout]')) r.checked = r.value === state.layout;
  for (const a of document.querySelectorAll('header nav a')) {
    if (a.dataset.view === state.view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
    a.href = '?' + writeState({ ...state, view: a.dataset.view });
  }
}

function readInputs() {
  state.type = $('type').value || state.type;
  state.query = $('query').value.trim();
  state.from = $('from').value.trim() || DEFAULTS.from;
  state.to = $('to').value.trim() || DEFAULTS.to;
}

// Change the state, put it in the URL (a new history entry unless
// replace), and show it.
function navigate(changes = {}, replace = false) {
  Object.assign(state, changes);
  const q = '?' + writeState(state);
  if (q !== location.search) history[replace ? 'replaceState' : 'pushState'](null, '', q || '?');
  fillInputs();
  show();
}

// Record the state without reloading anything (zoom, search, sort).
function remember(changes) {
  Object.assign(state, changes);
  history.replaceState(null, '', '?' + writeState(state));
  fillInputs();
}

$('sel-form').addEventListener('submit', (e) => {
  e.preventDefault();
  perf.click = e.timeStamp;
  readInputs();
  navigate({ zoom: '', dzoom: '', focus: '' });
});
$('type').addEventListener('change', () => {
  perf.click = performance.now();
  readInputs();
  navigate({ zoom: '', dzoom: '', focus: '' });
});
for (const b of document.querySelectorAll('[data-range]'))
  b.addEventListener('click', () => {
    perf.click = performance.now();
    readInputs();
    navigate({ from: 'now-' + b.dataset.range, to: 'now', zoom: '', dzoom: '' });
  });
for (const a of document.querySelectorAll('header nav a'))
  a.addEventListener('click', (e) => {
    e.preventDefault();
    perf.click = performance.now();
    readInputs();
    navigate({ view: a.dataset.view });
  });
window.addEventListener('popstate', () => {
  const tenant = state.tenant;
  state = readState(location.search);
  if (state.tenant !== tenant) return begin();
  fillInputs();
  show();
});

let typesError = null; // why the profile types could not be had, shown instead of "none"
async function loadTypes() {
  const sel = $('type');
  let types = [];
  typesError = null;
  try {
    types = (await getJSON('/api/v1/profile-types', { from: state.from, to: state.to })).types;
  } catch (e) {
    typesError = e;
    status($('flame-status'), e);
  }
  sel.replaceChildren();
  const ids = types.map((t) => t.id);
  if (state.type && !ids.includes(state.type)) ids.unshift(state.type);
  for (const id of ids) {
    const o = document.createElement('option');
    o.value = id;
    o.textContent = id;
    sel.append(o);
  }
  if (!state.type && ids.length)
    state.type = ids.find((id) => /:cpu:nanoseconds:/.test(id)) || ids[0];
  sel.value = state.type;
  history.replaceState(null, '', '?' + writeState(state));
}

// An error (a server that wants a tenant named: the Tenant field shown
// too), or else text.
function status(el, e, text) {
  if (e) {
    el.className = 'status error';
    el.textContent = e instanceof ApiError ? e.message : String(e.message || e);
    if (e.tenantRequired) {
      el.textContent += ' (the Tenant field, at the top)';
      tenantField.required();
    }
  } else {
    el.className = 'status';
    el.textContent = text || '';
  }
}

// ---- views ----------------------------------------------------------------------

function show() {
  for (const v of ['flame', 'diff', 'debuginfo', 'source']) $('view-' + v).hidden = state.view !== v;
  const sel = { query: state.query, type: state.type, from: state.from, to: state.to };
  if (!state.type && state.view !== 'debuginfo') {
    const none = 'No profiles in this range: widen it, or push some (POST /api/v1/profiles, ' +
      'an agent, or Pyroscope\'s SDKs to /ingest).';
    status($(state.view === 'diff' ? 'diff-status' : 'flame-status'), typesError, none);
    chart.set(null);
    return;
  }
  if (state.type) loadSeries(sel);
  else chart.set(null); // no type in range: nothing to chart (the debuginfo view still shows)
  if (state.view === 'flame') showFlame(sel);
  else if (state.view === 'diff') showDiff();
  else if (state.view === 'source') source.show(state);
  else debuginfo.show(sel);
}

function loadSeries() {
  chart.show();
}

// After the browser has painted what was drawn (two animation frames).
function painted() {
  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
}

// ---- flame graph view ------------------------------------------------------------

const views = new Views({ state: () => state, navigate, tooltip,
  onDrawn: () => perf.renders.push({ view: 'sandwich', painted: performance.now() }) });
const flame = new FlameGraph($('flame'), {
  tooltip, info: $('frame-info'), onSelect: (f, i) => views.pick(f.label(i)),
  onZoom: (f) => { remember({ zoom: f.zoomPath().join(';'), focus: '' }); crumbs($('crumbs'), f); zoomButtons(); unsym.zoomed(); },
});
views.contextMenu(flame);
const unsym = new UnsymControls({ getState: () => state, navigate, flame });
const top = new TopTable($('top'), $('top-more'), (name) => {
  views.pick(name, true);
  flame.focusFunction(name);
  remember({ focus: name, zoom: flame.zoomPath().join(';') });
  crumbs($('crumbs'), flame);
  zoomButtons();
  $('flame').focus();
});
top.onSort = (spec) => remember({ sort: spec });

function zoomButtons() {
  $('zoom-out').disabled = !flame.zoom;
  $('reset-zoom').disabled = !flame.zoom;
  $('diff-zoom-out').disabled = !diffGraphs().some((g) => g.zoom);
  $('open-source').disabled = !flame.zoom;
}

// The path to the zoomed frame as buttons (a way back to any ancestor).
function crumbs(nav, f) {
  nav.replaceChildren();
  if (!f.data) return;
  const path = [];
  for (let i = f.zoom; i >= 0; i = f.data.parent[i]) path.unshift(i);
  path.forEach((i, k) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = f.label(i);
    b.disabled = k === path.length - 1;
    b.addEventListener('click', () => f.zoomTo(i));
    nav.append(b);
  });
}

$('zoom-out').addEventListener('click', () => flame.zoomOut());
$('reset-zoom').addEventListener('click', () => flame.resetZoom());
$('icicle').addEventListener('change', () => {
  remember({ icicle: $('icicle').checked ? '1' : '' });
  flame.setIcicle(state.icicle === '1');
  diffFlame.setIcicle(state.icicle === '1');
});
$('search').addEventListener('input', () => {
  remember({ search: $('search').value });
  applySearch();
});

function applySearch(table = true) {
  const re = fmt.searchRegex(state.search);
  const r = flame.setSearch(re);
  if (table) top.setSearch(re);
  const d = flame.data;
  $('search-info').textContent = !r ? '' : r.frames
    ? `${r.funcs} functions match, ${fmt.pct(r.share)} of the total (${fmt.value(r.value, d.unit)})`
    : 'no frame matches';
}

let flameSeq = 0;
async function showFlame(sel) {
  const seq = ++flameSeq, t0 = performance.now();
  status($('flame-status'), null, 'loading…');
  top.setSort(state.sort);
  const q = { ...sel, ...viewParams(state), format: 'json', ...unsymParams(state) };
  views.show({ ...sel, ...unsymParams(state) });
  $('dl-pprof').href = url('/api/v1/query', { ...sel, ...viewParams(state), format: 'pprof' });
  $('dl-pprof').download = 'profile.pb.gz';
  let d;
  try {
    d = await loadTree('/api/v1/query', q, false, chart.treeOpts());
  } catch (e) {
    if (seq === flameSeq) {
      status($('flame-status'), e);
      flame.setData(null);
      top.setData(null);
    }
    return;
  }
  if (seq !== flameSeq) return;
  const t1 = performance.now();
  flame.batch(() => {
    flame.setIcicle(state.icicle === '1');
    flame.setData(d);
    if (state.zoom) {
      const i = flame.findPath(state.zoom.split(';'));
      if (i > 0) flame.zoomTo(i, false);
    }
    if (state.focus) flame.focusName = d.names.indexOf(state.focus);
    applySearch(false);
  });
  crumbs($('crumbs'), flame);
  zoomButtons();
  unsym.sync();
  const t2 = performance.now();
  // the table in a task of its own: the graph is on screen first, and
  // neither task blocks the page for long
  setTimeout(() => {
    if (seq !== flameSeq) return;
    top.re = fmt.searchRegex(state.search);
    top.setData(d);
  }, 0);
  status($('flame-status'), null, d.profiles
    ? `${fmt.count(d.profiles)} profiles merged, total ${fmt.value(d.total, d.unit)}, ${fmt.count(d.n)} frames, ${fmt.count(d.stacks || 0)} stacks`
    : d.hint || 'no profiles in this selection and range');
  await painted();
  perf.renders.push({ view: 'flame', click: perf.click ?? t0, start: t0, loaded: t1, drawn: t2,
                      painted: performance.now(), frames: d.n, bytes: d.bytes, workerMs: d.workerMs });
}

// Save blob as a file named name, as a download link would.
function saveBlob(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 60e3);
}

// A link to a file of the server: with a tenant named, fetched with its
// X-Scope-OrgID (a link the browser follows sends no header) and saved.
// Registered after the link's other handlers: one that made the file
// here (preventDefault, or a blob: href) goes first.
function serverDownload(a, statusEl) {
  a.addEventListener('click', (e) => {
    if (!state.tenant || e.defaultPrevented || a.href.startsWith('blob:')) return;
    e.preventDefault();
    getBlob(a.href).then((blob) => saveBlob(blob, a.download), (err) => status(statusEl, err));
  });
}

// A link whose file is made when it is clicked (make() returns null: the
// link's own href, the server's file, is what downloads).
function download(a, name, type, make) {
  a.addEventListener('click', () => {
    const text = make();
    if (text === null) return;
    if (a.href.startsWith('blob:')) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(new Blob([text], { type }));
    a.download = name;
  });
}

// Zoomed, the pprof is the drawn subtree's, made here; unzoomed the
// link's own, the server's pprof of the selection.
$('dl-pprof').addEventListener('click', (e) => {
  if (!flame.data || !flame.zoom) return;
  e.preventDefault();
  gzipBlob(subtreeProfile(flame.data, flame.zoom, state.type))
    .then((blob) => saveBlob(blob, 'profile.pb.gz'), (err) => status($('flame-status'), err));
});
serverDownload($('dl-pprof'), $('flame-status'));
download($('dl-folded'), 'profile.folded.txt', 'text/plain', () => flame.toFolded());
download($('dl-svg'), 'flamegraph.svg', 'image/svg+xml',
  () => flame.toSVG(`${state.type} ${state.query || '{}'} ${state.from} – ${state.to}`));

// ---- diff view ---------------------------------------------------------------------

const diffInfo = { tooltip, info: $('diff-frame-info'), onSelect: (f, i) => diffFocus(f, i) };
const diffFlame = new FlameGraph($('diff-flame'), { ...diffInfo, onZoom: diffZoomed });
const sideBase = new FlameGraph($('side-base'), { ...diffInfo, onZoom: diffZoomed });
const sideNew = new FlameGraph($('side-new'), { ...diffInfo, onZoom: diffZoomed });
let diffPick = [], syncing = false;

// The diff's graphs on screen: the overlaid one, or the two sides.
function diffGraphs() {
  return state.layout === 'side' ? [sideBase, sideNew] : [diffFlame];
}

// A diff graph zoomed: side by side, the other side follows to the same
// path of names (its root when it has no such frame); the URL's dzoom,
// the zoom path's buttons and the picked frame follow too.
function diffZoomed(f) {
  if (syncing) return;
  const path = f.zoomPath();
  syncing = true;
  try {
    for (const g of diffGraphs())
      if (g !== f && g.data) g.zoomTo(Math.max(0, g.findPath(path)));
  } finally {
    syncing = false;
  }
  remember({ dzoom: path.join(';') });
  crumbs($('diff-crumbs'), f);
  zoomButtons();
  diffFocus(f, f.zoom);
}

// The frame the "Base/New flame graph" buttons open: its path of names.
function diffFocus(f, i) {
  diffPick = f.data ? f.pathOf(i) : [];
  $('diff-focus-name').textContent = f.data ? `frame: ${f.label(i)} —` : '';
  $('diff-source').disabled = !diffPick.length;
}

// The plain flame graph of one side, zoomed on the picked frame.
function openSide(side) {
  const p = sideParams(side);
  navigate({ view: 'flame', query: p.query, from: p.from, to: p.to,
             zoom: diffPick.join(';'), search: '', focus: '' });
}
$('open-base').addEventListener('click', () => openSide('base'));
$('open-new').addEventListener('click', () => openSide('new'));
$('diff-zoom-out').addEventListener('click', () => diffGraphs()[0].zoomOut());
$('diff-icicle').addEventListener('change', () => {
  remember({ icicle: $('diff-icicle').checked ? '1' : '' });
  for (const f of [flame, diffFlame, sideBase, sideNew]) f.setIcicle(state.icicle === '1');
});
$('diff-search').addEventListener('input', () => {
  remember({ dsearch: $('diff-search').value });
  applyDiffSearch();
});
for (const r of document.querySelectorAll('input[name=diff-layout]'))
  r.addEventListener('change', () => { if (r.checked) navigate({ layout: r.value }, true); });

function sideParams(side) {
  return { query: state[side + '_query'], from: state[side + '_from'], to: state[side + '_to'] };
}

// Without two selections given, the diff compares the range with the same
// range a day earlier.
function diffDefaults() {
  if (!(state.base_from || state.new_from || state.base_query || state.new_query)) dayEarlier();
  for (const side of ['base', 'new']) {
    if (!state[side + '_from']) state[side + '_from'] = state.from;
    if (!state[side + '_to']) state[side + '_to'] = state.to;
  }
}

// Time t moved ms earlier, in the form it was written in.
function shift(t, ms) {
  const p = timeParts(t);
  if ('ago' in p) return `now-${(p.ago + ms) / 3600e3}h`;
  if ('epoch' in p) return String(Math.round(p.epoch - ms * p.perMs));
  return isNaN(p.date) ? t : new Date(p.date - ms).toISOString();
}

function dayEarlier() {
  Object.assign(state, { base_query: state.query, new_query: state.query,
    base_from: shift(state.from, 86400e3), base_to: shift(state.to, 86400e3),
    new_from: state.from, new_to: state.to });
}

$('preset-day').addEventListener('click', () => {
  readInputs();
  dayEarlier();
  navigate({ dzoom: '' });
});
$('preset-ab').addEventListener('click', () => {
  const name = $('preset-name').value, a = $('preset-a').value, b = $('preset-b').value;
  if (!name || !a || !b) return;
  readInputs();
  navigate({ base_query: withMatcher(state.query, name, a), new_query: withMatcher(state.query, name, b),
             base_from: state.from, base_to: state.to, new_from: state.from, new_to: state.to, dzoom: '' });
});
$('preset-name').addEventListener('change', () => presetValues());
$('diff-form').addEventListener('submit', (e) => {
  e.preventDefault();
  perf.click = performance.now();
  const v = (id) => $(id).value.trim();
  navigate({ base_query: v('base-query'), base_from: v('base-from') || state.from, base_to: v('base-to') || state.to,
             new_query: v('new-query'), new_from: v('new-from') || state.from, new_to: v('new-to') || state.to, dzoom: '' });
});

async function presetNames() {
  const sel = $('preset-name'), keep = sel.value;
  let names = [];
  try {
    names = (await getJSON('/api/v1/labels', { type: state.type, from: state.from, to: state.to })).names;
  } catch (e) { /* the diff's own status shows what fails */ }
  sel.replaceChildren(...names.filter((n) => n !== '__name__').map((n) => new Option(n, n)));
  const prefer = ['version', 'service_version', 'release'].find((n) => names.includes(n));
  sel.value = names.includes(keep) ? keep : prefer || sel.value;
  presetValues();
}

async function presetValues() {
  const name = $('preset-name').value;
  let values = [];
  if (name)
    try {
      values = (await getJSON(`/api/v1/labels/${encodeURIComponent(name)}/values`,
                              { type: state.type, from: state.from, to: state.to })).values;
    } catch (e) { /* as above */ }
  for (const [id, k] of [['preset-a', 0], ['preset-b', 1]]) {
    const s = $(id);
    s.replaceChildren(...values.map((v) => new Option(v, v)));
    if (values.length) s.value = values[Math.min(k, values.length - 1)];
  }
}

// The search's matches in the graphs on screen: side by side, each plain
// graph's share of its own total.
function diffSearchShares(re) {
  const [over, b, n] = [diffFlame, sideBase, sideNew].map((f) => f.setSearch(re));
  if (state.layout !== 'side') return over;
  if (!b && !n) return null;
  return { funcs: Math.max(b ? b.funcs : 0, n ? n.funcs : 0), frames: (b ? b.frames : 0) + (n ? n.frames : 0),
           baseShare: b ? b.share : 0, share: n ? n.share : 0 };
}

function applyDiffSearch() {
  const re = fmt.searchRegex(state.dsearch);
  const r = diffSearchShares(re);
  $('diff-search-info').textContent = !r ? '' : r.frames
    ? `${r.funcs} functions match: base ${fmt.pct(r.baseShare)}, new ${fmt.pct(r.share)}`
    : 'no frame matches';
  if (lastDiffTable) renderDiffTable($('regressions'), $('diff-thresholds'), lastDiffTable, re, pickRow);
}

function pickRow(name) {
  const f = diffGraphs()[state.layout === 'side' ? 1 : 0];
  f.focusFunction(name);
  diffFocus(f, f.zoom);
  f.canvas.focus();
}

let diffSeq = 0, lastDiffTable = null;
async function showDiff() {
  diffDefaults();
  history.replaceState(null, '', '?' + writeState(state));
  for (const side of ['base', 'new']) {
    const p = sideParams(side);
    $(side + '-query').value = p.query;
    $(side + '-from').value = p.from;
    $(side + '-to').value = p.to;
  }
  presetNames();
  const seq = ++diffSeq, t0 = performance.now();
  const params = { type: state.type, base_query: state.base_query, base_from: state.base_from,
                   base_to: state.base_to, new_query: state.new_query, new_from: state.new_from,
                   new_to: state.new_to, ...unsymParams(state) };
  $('dl-diff-pprof').href = url('/api/v1/diff', { ...params, format: 'pprof' });
  $('dl-diff-pprof').download = 'diff.pb.gz';
  $('dl-diff-folded').href = url('/api/v1/diff', { ...params, format: 'folded' });
  $('dl-diff-folded').download = 'diff.folded.txt';
  status($('diff-status'), null, 'loading…');
  const side = state.layout === 'side';
  $('diff-overlay').hidden = side;
  $('diff-legend').hidden = side; // side by side, each graph is a plain one
  $('diff-side').hidden = !side;
  let tree, table, sides;
  try {
    [tree, table, sides] = await Promise.all([
      side ? null : loadTree('/api/v1/diff', { ...params, format: 'json' }, true),
      getJSON('/api/v1/diff', { ...params, format: 'table', limit: 200 }),
      side ? Promise.all(['base', 'new'].map((s) => loadTree('/api/v1/query', { type: state.type, ...sideParams(s), format: 'json', ...unsymParams(state) })))
        : null]);
  } catch (e) {
    if (seq === diffSeq) status($('diff-status'), e);
    return;
  }
  if (seq !== diffSeq) return;
  lastDiffTable = table;
  if (tree) diffFlame.setData(tree);
  if (sides) {
    sideBase.setData(sides[0]);
    sideNew.setData(sides[1]);
  }
  const shown = diffGraphs();
  syncing = true; // each graph takes the URL's zoom itself
  try {
    for (const f of shown)
      f.batch(() => {
        f.setIcicle(state.icicle === '1');
        const i = state.dzoom ? f.findPath(state.dzoom.split(';')) : -1;
        if (i > 0) f.zoomTo(i, false);
      });
  } finally {
    syncing = false;
  }
  const lead = shown[shown.length - 1];
  crumbs($('diff-crumbs'), lead);
  diffFocus(lead, lead.zoom);
  zoomButtons();
  applyDiffSearch();
  const unit = tree ? tree.unit : sides[0].unit;
  status($('diff-status'), null,
    `base: ${fmt.count(table.base_profiles)} profiles, total ${fmt.value(table.base_total, unit)}; ` +
    `new: ${fmt.count(table.new_profiles)} profiles, total ${fmt.value(table.new_total, unit)}` +
    (table.base_profiles && table.new_profiles ? '' : ' — one side is empty: compare other ranges'));
  await painted();
  perf.renders.push({ view: 'diff', click: perf.click ?? t0, start: t0, painted: performance.now() });
}

// What is on screen: overlaid, the folded stacks of the zoomed subtree
// ("stack base new", as the API's format=folded); side by side, the API's
// folded diff of the whole selections.  The SVG has both sides when both
// are shown.
download($('dl-diff-folded'), 'diff.folded.txt', 'text/plain',
  () => (state.layout === 'side' || !diffFlame.data ? null : diffFlame.toFolded()));
serverDownload($('dl-diff-folded'), $('diff-status'));
serverDownload($('dl-diff-pprof'), $('diff-status'));
download($('dl-diff-svg'), 'diff-flamegraph.svg', 'image/svg+xml', () => {
  const title = `diff ${state.type}: base ${state.base_query || '{}'} ${state.base_from} – ${state.base_to}; ` +
    `new ${state.new_query || '{}'} ${state.new_from} – ${state.new_to}`;
  return state.layout === 'side'
    ? svgDocument(title, [{ graph: sideBase, heading: 'Base' }, { graph: sideNew, heading: 'New' }])
    : diffFlame.toSVG(title);
});

// ---- debuginfo view -------------------------------------------------------------------

const debuginfo = new DebuginfoView({ summary: $('coverage-summary'), coverage: $('coverage'),
                                      artifacts: $('artifacts'), more: $('artifacts-more') });

// ---- source view (source.js) ---------------------------------------------------------------

// The zoomed frame's function (a row of the top table zooms to its
// heaviest frame), or the diff's picked frame's, line by line.
const source = new SourceView($('view-source'), (file) => navigate({ file }));
$('open-source').addEventListener('click', () => {
  if (flame.zoom) navigate({ view: 'source', fn: flame.label(flame.zoom), file: '', src: '' });
});
$('diff-source').addEventListener('click', () => {
  if (diffPick.length) navigate({ view: 'source', fn: diffPick[diffPick.length - 1], file: '', src: 'diff' });
});

// ---- start ---------------------------------------------------------------------------------

// For the browser tests and the benchmark: the views' objects.
window.ember = { flame, diffFlame, sideBase, sideNew, top, chart, callers: views.callers, callees: views.callees,
                 state: () => ({ ...state }) };

fillInputs();
begin();
