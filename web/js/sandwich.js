// sandwich.js - the views of the flame-graph page (docs/web-ui.md, "Views"):
// a function's sandwich (its callers merged above it, its callees below
// it: GET /api/v1/query's sandwich= and sandwich_side=, drawn by two
// flame graphs), only the stacks through a function (through=) and the
// frames an RE2 pattern matches hidden into their callers (hide=).
// Owns the views bar, the sandwich panel and the URL keys through, hide
// and sandwich; main.js tells it the function picked (a frame clicked, a
// top-table row), adds viewParams() to its query, and shows it.

import { loadTree } from './api.js';
import { FlameGraph } from './flame.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

// The query parameters of the views in state (the sandwich is asked apart).
export function viewParams(state) {
  return { through: state.through, hide: state.hide };
}

// A function's name as an RE2 pattern matching it, whole, alone.
export function literal(name) {
  return name.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

export class Views {
  // state: () => the UI's state; navigate(changes): a new history entry,
  // shown again; onDrawn(): the sandwich is on screen.
  constructor({ state, navigate, tooltip, onDrawn }) {
    this.state = state;
    this.navigate = navigate;
    this.onDrawn = onDrawn || (() => {});
    this.picked = '';
    this.seq = 0;
    this.panel = $('sandwich');
    this.main = [$('crumbs'), $('flame'), $('frame-info')]; // the whole graph, hidden meanwhile
    const graph = (id) => {
      const cv = $(id);
      cv.style.width = '100%';
      cv.style.display = 'block';
      return new FlameGraph(cv, { tooltip, info: $('sandwich-info'),
                                  onSelect: (f, i) => { if (i > 0) this.pick(f.label(i)); } });
    };
    this.callers = graph('sandwich-callers');
    this.callees = graph('sandwich-callees');
    this.callees.setIcicle(true); // the function on top, its callees below it
    $('views-sandwich').addEventListener('click', () => this.navigate({ sandwich: this.picked }));
    $('views-through').addEventListener('click', () => this.navigate({ through: this.picked, zoom: '', focus: '' }));
    $('views-hide-it').addEventListener('click', () => {
      const h = this.state().hide, it = literal(this.picked);
      this.navigate({ hide: h ? `${h}|${it}` : it, zoom: '', focus: '' });
    });
    $('views-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.navigate({ through: $('views-through-name').value.trim(), hide: $('views-hide').value.trim(),
                      zoom: '', focus: '' });
    });
    $('views-clear').addEventListener('click', () => this.navigate({ through: '', hide: '', sandwich: '' }));
    $('sandwich-close').addEventListener('click', () => this.navigate({ sandwich: '' }));
  }

  // A function picked: the bar's buttons act on it.  From the top table
  // while a sandwich is shown, the sandwich is of it from now on (as in
  // Pyroscope's sandwich view).
  pick(name, fromTable = false) {
    if (!name || name === 'all') return;
    this.picked = name;
    if (fromTable && this.state().sandwich && this.state().sandwich !== name) {
      this.navigate({ sandwich: name });
      return;
    }
    this.fill();
  }

  // The bar as the state and the pick say.
  fill() {
    const s = this.state();
    $('views-through-name').value = s.through;
    $('views-hide').value = s.hide;
    $('views-picked').textContent = this.picked ? `Function: ${this.picked}` : 'Click a frame or a table row to pick a function';
    for (const id of ['views-sandwich', 'views-through', 'views-hide-it']) $(id).disabled = !this.picked;
    const on = [];
    if (s.through) on.push(`only stacks through ${s.through}`);
    if (s.hide) on.push(`hiding /${s.hide}/`);
    if (s.sandwich) on.push(`sandwich of ${s.sandwich}`);
    $('views-active').textContent = on.length ? `Showing ${on.join(', ')}` : '';
    $('views-clear').disabled = !on.length;
  }

  // The sandwich of the state's function over sel (with the other views),
  // or the whole graph back when there is none.
  async show(sel) {
    const s = this.state(), seq = ++this.seq;
    this.fill();
    this.panel.hidden = !s.sandwich;
    for (const el of this.main) el.hidden = !!s.sandwich;
    if (!s.sandwich) return;
    $('sandwich-title').textContent = `Sandwich of ${s.sandwich}`;
    $('sandwich-status').textContent = 'loading…';
    const q = (side) => loadTree('/api/v1/query', { ...sel, ...viewParams(s), format: 'json',
                                                     sandwich: s.sandwich, sandwich_side: side });
    let callers, callees;
    try {
      [callers, callees] = await Promise.all([q('callers'), q('callees')]);
    } catch (e) {
      if (seq === this.seq) $('sandwich-status').textContent = e.message;
      return;
    }
    if (seq !== this.seq) return;
    this.callers.setData(callers);
    this.callees.setData(callees);
    $('sandwich-status').textContent = callees.total
      ? `${s.sandwich}: total ${fmt.value(callees.total, callees.unit)} — callers above it (read upwards), callees below it`
      : `no stack of this selection has ${s.sandwich}`;
    this.onDrawn();
  }
}
