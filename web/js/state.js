// state.js - the UI's whole state as the URL's query string (docs/web-ui.md,
// "URL state"): every key below, written only when it differs from its
// default, so a shared link opens the same view on the same selection.

export const DEFAULTS = Object.freeze({
  view: 'flame',      // flame | diff | debuginfo | source
  tenant: '',         // X-Scope-OrgID of every call (tenant.js); empty: none
  type: '',           // profile type ID (empty: the first CPU type)
  query: '',          // label selector
  from: 'now-1h',     // the API's time syntax: now-15m, RFC 3339, epoch
  to: 'now',
  search: '',         // regex highlighted in the flame graph, filters the table
  zoom: '',           // path of frame names from the root, ';'-joined
  focus: '',          // function focused from the top table
  through: '', hide: '', sandwich: '', // views (sandwich.js): through a function, hidden frames (RE2), a sandwich
  icicle: '1',        // root at the top ('1', the default); in the URL icicle=0: at the bottom
  unsym: '',          // 'frames': each unsymbolized frame (unsym.js); '': per module
  sort: '-self',      // top table: column, '-' for descending
  base_query: '', base_from: '', base_to: '',   // diff: the two selections
  new_query: '', new_from: '', new_to: '',
  layout: 'overlay',  // diff: overlay | side
  dzoom: '',          // diff: zoom path
  dsearch: '',        // diff: search
  fn: '', file: '', src: '',   // source view (source.js): function, file, 'diff' for before/after
  group_by: '',       // the chart: one line per value of this label (chartpanel.js)
  split: '',          // '1': the top table a column per group_by value
  kernel: '',         // 'hide': kernel frames folded into their callers (flame view)
});

export function readState(search) {
  const q = new URLSearchParams(search), s = { ...DEFAULTS };
  for (const k of Object.keys(DEFAULTS)) if (q.has(k)) s[k] = q.get(k);
  if (!['flame', 'diff', 'debuginfo', 'source'].includes(s.view)) s.view = DEFAULTS.view;
  if (!['overlay', 'side'].includes(s.layout)) s.layout = DEFAULTS.layout;
  s.icicle = s.icicle === '0' || s.icicle === '' ? '' : '1'; // '' the flame way up (URL: icicle=0)
  return s;
}

export function writeState(s) {
  const q = new URLSearchParams();
  for (const k of Object.keys(DEFAULTS))
    if (s[k] !== undefined && s[k] !== DEFAULTS[k]) q.set(k, k === 'icicle' && !s[k] ? '0' : s[k]);
  return q.toString();
}

// sel with name="value" in place of any matcher of name.
export function withMatcher(sel, name, value) {
  const m = `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const t = (sel || '').trim();
  const brace = t.indexOf('{');
  if (brace < 0) return `${t}{${m}}`;
  const head = t.slice(0, brace);
  const body = t.slice(brace + 1, t.lastIndexOf('}') < 0 ? t.length : t.lastIndexOf('}'));
  const esc = name.replace(/[.]/g, '\\.');
  const rest = body.split(new RegExp(`,?\\s*${esc}\\s*(?:=~|!~|!=|=)\\s*"(?:[^"\\\\]|\\\\.)*"`)).join('')
    .replace(/^\s*,\s*/, '').trim();
  return `${head}{${rest ? rest.replace(/,\s*$/, '') + ', ' : ''}${m}}`;
}
