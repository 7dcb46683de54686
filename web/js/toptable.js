// toptable.js - the top table: per function self and total (values,
// samples, percentages of the total), sortable by any column, filtered by
// the search box; a row click (or Enter/Space on it) focuses the flame
// graph on that function.  Rows are from the worker's count over the tree
// (tree-worker.js), the same rule as GET /api/v1/query?format=top.

import * as fmt from './format.js';

const SHOWN = 300;

export class TopTable {
  constructor(table, more, onFocus) {
    this.table = table;
    this.body = table.tBodies[0];
    this.more = more;
    this.onFocus = onFocus;
    this.sort = { key: 'self', dir: -1 };
    this.re = null;
    this.rows = [];
    for (const th of table.tHead.rows[0].cells)
      th.querySelector('button').addEventListener('click', () => this.sortBy(th.dataset.key));
    this.body.addEventListener('click', (e) => this.pick(e.target.closest('tr')));
    this.body.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.pick(e.target.closest('tr'));
      } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        const tr = e.target.closest('tr');
        const next = e.key === 'ArrowDown' ? tr.nextElementSibling : tr.previousElementSibling;
        if (next) next.focus();
      }
    });
  }

  setData(d) {
    this.data = d;
    this.rows = [];
    if (d) {
      const T = d.total || 1;
      for (let k = 0; k < d.names.length; k++) {
        if (d.names[k] === 'total' && k === d.name[0]) continue; // the root
        if (!d.topTotal[k] && !d.topSelf[k]) continue;
        this.rows.push({ name: d.names[k], self: d.topSelf[k], total: d.topTotal[k],
                         self_pct: d.topSelf[k] / T, total_pct: d.topTotal[k] / T });
      }
    }
    this.render();
  }

  setSort(spec) {
    if (!spec) return;
    const dir = spec.startsWith('-') ? -1 : 1, key = spec.replace(/^-/, '');
    if (['name', 'self', 'self_pct', 'total', 'total_pct'].includes(key)) this.sort = { key, dir };
  }

  sortSpec() {
    return (this.sort.dir < 0 ? '-' : '') + this.sort.key;
  }

  sortBy(key) {
    if (this.sort.key === key) this.sort.dir = -this.sort.dir;
    else this.sort = { key, dir: key === 'name' ? 1 : -1 };
    this.render();
    if (this.onSort) this.onSort(this.sortSpec());
  }

  setSearch(re) {
    this.re = re;
    this.render();
  }

  render() {
    const { key, dir } = this.sort, re = this.re, d = this.data;
    let rows = re ? this.rows.filter((r) => re.test(r.name)) : this.rows.slice();
    rows.sort((a, b) => {
      const c = key === 'name' ? a.name.localeCompare(b.name) : a[key] - b[key];
      return c ? dir * c : a.name.localeCompare(b.name);
    });
    for (const th of this.table.tHead.rows[0].cells)
      th.setAttribute('aria-sort', th.dataset.key === key ? (dir < 0 ? 'descending' : 'ascending') : 'none');
    const frag = document.createDocumentFragment();
    for (const r of rows.slice(0, SHOWN)) {
      const tr = document.createElement('tr');
      tr.tabIndex = 0;
      tr.dataset.name = r.name;
      const cells = [r.name, `${fmt.value(r.self, d.unit)} (${fmt.count(fmt.samples(r.self, d))})`,
        fmt.pct(r.self_pct), `${fmt.value(r.total, d.unit)} (${fmt.count(fmt.samples(r.total, d))})`,
        fmt.pct(r.total_pct)];
      cells.forEach((c, k) => {
        const td = document.createElement('td');
        td.textContent = c;
        if (k) td.className = 'num';
        tr.append(td);
      });
      frag.append(tr);
    }
    this.body.replaceChildren(frag);
    this.more.textContent = rows.length > SHOWN ? `${SHOWN} of ${rows.length} functions shown (search to narrow)`
      : `${rows.length} functions` + (d ? `; values in ${d.unit}, samples in parentheses` : '');
  }

  pick(tr) {
    if (tr && tr.dataset.name !== undefined) this.onFocus(tr.dataset.name);
  }
}
