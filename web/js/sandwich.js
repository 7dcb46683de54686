// sandwich.js - the views of the flame-graph page (docs/web-ui.md, "Views"):
// a function's sandwich (its callers merged above it, its callees below
// it: GET /api/v1/query's sandwich= and sandwich_side=, drawn by two
// flame graphs), only the stacks through a function (through=) and the
// frames an RE2 pattern matches hidden into their callers (hide=).
// Owns the views bar, a frame's context menu of them (a right-click), the
// sandwich panel and the URL keys through, hide and sandwich; main.js
// tells it the function picked (a frame clicked, a top-table row) and the
// graph whose frames have the menu, adds viewParams() to its query, and
// shows it.

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
    $('views-sandwich').addEventListener('click', () => this.act('sandwich'));
    $('views-through').addEventListener('click', () => this.act('through'));
    $('views-hide-it').addEventListener('click', () => this.act('hide'));
    this.menu = $('views-menu');
    for (const b of this.menu.querySelectorAll('button'))
      b.addEventListener('click', () => { this.closeMenu(); this.act(b.dataset.views); });
    this.menu.addEventListener('keydown', (e) => { if (e.key === 'Escape') this.closeMenu(); });
    document.addEventListener('click', (e) => { if (!this.menu.contains(e.target)) this.closeMenu(); });
    $('views-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.navigate({ through: $('views-through-name').value.trim(), hide: $('views-hide').value.trim(),
                      zoom: '', focus: '' });
    });
    $('views-clear').addEventListener('click', () => this.navigate({ through: '', hide: '', sandwich: '' }));
    $('sandwich-close').addEventListener('click', () => this.navigate({ sandwich: '' }));
  }

  // A view of the function picked: 'sandwich', 'through' or 'hide'.
  act(what) {
    const it = this.picked;
    if (what === 'sandwich') this.navigate({ sandwich: it });
    else if (what === 'through') this.navigate({ through: it, zoom: '', focus: '' });
    else {
      const h = this.state().hide;
      this.navigate({ hide: h ? `${h}|${literal(it)}` : literal(it), zoom: '', focus: '' });
    }
  }

  // A right-click on a frame of graph (the whole flame graph): the frame's
  // function picked, and the views of it as a menu under the pointer.
  contextMenu(graph) {
    graph.canvas.addEventListener('contextmenu', (e) => {
      const r = graph.canvas.getBoundingClientRect();
      const i = graph.data ? graph.hit(e.clientX - r.left, e.clientY - r.top) : -1;
      if (i <= 0) return;
      e.preventDefault();
      this.pick(graph.label(i));
      Object.assign(this.menu.style, {
        position: 'fixed', left: `${e.clientX}px`, top: `${e.clientY}px`, zIndex: 30, display: 'flex',
        flexDirection: 'column', gap: '2px', padding: '4px', background: '#fff',
        border: '1px solid #8c959f', boxShadow: '0 2px 8px rgba(0,0,0,.2)',
      });
      this.menu.hidden = false;
      this.menu.querySelector('button').focus();
    });
  }

  closeMenu() {
    this.menu.hidden = true;
    this.menu.style.display = 'none';
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
