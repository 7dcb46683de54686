// splittable.js - the top table split by a label: a row per function, a
// column per value of the chart's group_by label (its largest values, as
// the chart's legend has them), each cell the function's self share of
// that value's own total, so versions or hosts compare side by side, as
// a Grafana table grouped to a matrix reads.  Each value is its own query
// (GET /api/v1/query, the selection with label="value" added), flattened
// by the tree worker as the flame graph's is (kernel frames hidden alike).
// A header click sorts by that column; a row click focuses the flame
// graph on the function, as the top table's does.

import { loadTree } from './api.js';
import { withMatcher } from './state.js';
import * as fmt from './format.js';

const SHOWN = 300;
export const SPLIT_VALUES = 6;

export class SplitTable {
  // table: a <table> of its own (thead and tbody filled here); onFocus(name).
  constructor(table, onFocus) {
    this.table = table;
    this.onFocus = onFocus;
    this.sortCol = 0;
    this.seq = 0;
    table.addEventListener('click', (e) => {
      const th = e.target.closest('th[data-col]');
      if (th) {
        this.sortCol = Number(th.dataset.col);
        this.render();
        return;
      }
      const tr = e.target.closest('tbody tr');
      if (tr) this.onFocus(tr.dataset.name);
    });
    table.addEventListener('keydown', (e) => {
      const tr = e.target.closest('tbody tr');
      if (tr && (e.key === 'Enter' || e.key === ' ')) {
        e.preventDefault();
        this.onFocus(tr.dataset.name);
      }
    });
  }

  // The selection sel ({type, query, from, to}) split by label into
  // values (at most SPLIT_VALUES); re filters the rows.
  async load(sel, label, values, opts, re) {
    const seq = ++this.seq;
    this.label = label;
    this.values = values.slice(0, SPLIT_VALUES);
    this.re = re;
    this.cols = null;
    this.render();
    const trees = await Promise.all(this.values.map((v) => loadTree('/api/v1/query',
      { type: sel.type, query: withMatcher(sel.query, label, v), from: sel.from, to: sel.to, format: 'json' },
      false, opts)));
    if (seq !== this.seq) return;
    this.cols = trees.map((d) => {
      const m = new Map();
      for (let k = 0; k < d.names.length; k++)
        if (d.topSelf[k] || d.topTotal[k]) m.set(d.names[k], d.total ? d.topSelf[k] / d.total : 0);
      m.delete('total');
      return { unit: d.unit, total: d.total, self: m };
    });
    this.render();
  }

  rows() {
    const names = new Set();
    for (const c of this.cols) for (const n of c.self.keys()) names.add(n);
    const rows = [...names].filter((n) => !this.re || this.re.test(n))
      .map((n) => ({ name: n, v: this.cols.map((c) => c.self.get(n) || 0) }));
    const k = this.sortCol;
    rows.sort((a, b) => b.v[k] - a.v[k] || a.name.localeCompare(b.name));
    return rows;
  }

  render() {
    const t = this.table;
    t.replaceChildren();
    const cap = t.createCaption();
    cap.textContent = `Top functions by ${this.label}: self % of each value's total`;
    const hr = t.createTHead().insertRow();
    const th0 = document.createElement('th');
    th0.scope = 'col';
    th0.textContent = 'Function';
    hr.append(th0);
    this.values.forEach((v, k) => {
      const th = document.createElement('th');
      th.scope = 'col';
      th.className = 'num';
      th.dataset.col = String(k);
      th.setAttribute('aria-sort', k === this.sortCol ? 'descending' : 'none');
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `${this.label}=${v || '(none)'}`;
      if (this.cols) b.title = `total ${fmt.value(this.cols[k].total, this.cols[k].unit)}`;
      th.append(b);
      hr.append(th);
    });
    const body = t.createTBody();
    if (!this.cols) return;
    for (const r of this.rows().slice(0, SHOWN)) {
      const tr = body.insertRow();
      tr.tabIndex = 0;
      tr.dataset.name = r.name;
      tr.insertCell().textContent = r.name;
      for (const x of r.v) {
        const td = tr.insertCell();
        td.className = 'num';
        td.textContent = fmt.pct(x);
      }
    }
  }
}
