// chartpanel.js - the chart above every view and the controls beside it
// (docs/web-ui.md, "The chart"): Group by (one line per value of a label,
// a click on a line or its legend entry adds label="value" to the
// selector), the top table split by that label (splittable.js), Compare
// two ranges (drag the base, drag the new, one click opens their diff),
// and the flame view's Hide kernel.  On the diff view the chart draws the
// base and the new selections, two lines over both ranges, each range
// marked.  Its URL state: group_by, split, kernel (state.js); main.js
// calls show() where it loaded the series before.

import { getJSON, currentTenant } from './api.js';
import { TimeChart } from './chart.js';
import { SeriesSource, timeMs } from './series.js';
import { SplitTable } from './splittable.js';
import { withMatcher } from './state.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);
const LINES = 12; // group_by: the lines of largest total drawn

export class ChartPanel {
  // nav: state() the UI's state (a copy), navigate(changes, replace),
  // remember(changes), focus(name) the flame graph on a function.
  constructor(nav) {
    this.nav = nav;
    this.source = new SeriesSource();
    this.labels = new Map();
    this.values = [];
    this.seq = 0;
    this.chart = new TimeChart($('chart'), $('chart-info'), {
      legend: $('chart-legend'),
      onRange: (from, to) => nav.navigate({ from: String(from), to: String(to), zoom: '', dzoom: '' }),
      onPick: (k) => this.pick(k),
      onMark: (marks) => { $('compare-open').disabled = marks.length < 2; },
    });
    this.split = document.createElement('table');
    this.split.id = 'split-table';
    this.split.className = 'grid';
    this.split.hidden = true;
    $('top').after(this.split);
    this.splitTable = new SplitTable(this.split, (name) => nav.focus(name));
    $('group-by').addEventListener('change', () => {
      const g = $('group-by').value;
      nav.remember({ group_by: g, split: g ? nav.state().split : '' });
      this.show();
    });
    $('split-top').addEventListener('change', () => {
      nav.remember({ split: $('split-top').checked ? '1' : '' });
      this.show();
    });
    $('hide-kernel').addEventListener('change', () =>
      nav.navigate({ kernel: $('hide-kernel').checked ? 'hide' : '' }, true));
    $('compare').addEventListener('click', () => this.setCompare(!this.chart.compare));
    $('compare-open').addEventListener('click', () => this.openDiff());
  }

  // No chart (no type in range).
  set(doc) {
    this.chart.set(doc);
  }

  // What loadTree takes for the flame view's trees.
  treeOpts() {
    return { hideKernel: this.nav.state().kernel === 'hide' };
  }

  setCompare(on) {
    if (!on) this.forced = false;
    this.chart.setCompare(on);
    $('compare').setAttribute('aria-pressed', String(on));
    $('compare-open').disabled = this.chart.marks.length < 2;
  }

  // Load and draw the view's chart (after the view has filled its
  // defaults: the diff's sides are read a turn later).
  async show() {
    const seq = ++this.seq;
    await null;
    const st = this.nav.state();
    this.controls(st);
    try {
      if (st.view === 'diff') await this.showDiff(st, seq);
      else await this.showGroups(st, seq);
    } catch (e) {
      if (seq !== this.seq) return;
      this.chart.set(null);
      $('chart-info').textContent = e.message;
    }
  }

  controls(st) {
    $('split-top').checked = st.split === '1' && !!st.group_by;
    $('split-top').disabled = !st.group_by;
    $('hide-kernel').checked = st.kernel === 'hide';
    $('group-by').disabled = st.view === 'diff';
    // the diff view's drags mark ranges; leaving it ends what it started
    if (st.view === 'diff' && !this.chart.compare) this.setCompare(this.forced = true);
    else if (st.view !== 'diff' && this.forced) this.setCompare(this.forced = false);
    this.fillLabels(st);
  }

  // The group-by choices: the label names of the type and range.
  async fillLabels(st) {
    const key = `${currentTenant()}|${st.type}|${st.from}|${st.to}`;
    if (!this.labels.has(key))
      this.labels.set(key, getJSON('/api/v1/labels', { type: st.type, from: st.from, to: st.to })
        .then((d) => d.names.filter((n) => n !== '__name__')).catch(() => []));
    const names = await this.labels.get(key), sel = $('group-by');
    if (st.group_by && !names.includes(st.group_by)) names.unshift(st.group_by);
    sel.replaceChildren(new Option('nothing', ''), ...names.map((n) => new Option(n, n)));
    sel.value = st.group_by;
  }

  async showGroups(st, seq) {
    const sel = { type: st.type, query: st.query, from: st.from, to: st.to };
    const g = st.group_by;
    const doc = await this.source.load(sel, g ? { group_by: g, limit: LINES } : {});
    if (seq !== this.seq) return;
    this.values = g ? (doc.series || []).map((s) => s.labels[g] ?? '') : [];
    this.chart.set(doc, this.values.map((v) => `${g}=${v || '(none)'}`), this.chart.compare ? null : []);
    const split = st.view === 'flame' && g && st.split === '1' && this.values.length > 0;
    this.split.hidden = !split;
    $('top').hidden = split;
    $('top-more').hidden = split;
    if (split) await this.splitTable.load(sel, g, this.values, this.treeOpts(), fmt.searchRegex(st.search));
  }

  // The diff's two selections over the range that holds both, on one grid.
  async showDiff(st, seq) {
    const now = Date.now();
    const side = (s) => ({ query: st[s + '_query'], from: timeMs(st[s + '_from'] || st.from, now),
                           to: timeMs(st[s + '_to'] || st.to, now) });
    const b = side('base'), n = side('new');
    const from = String(Math.min(b.from, n.from)), to = String(Math.max(b.to, n.to));
    const doc = await this.source.load({ type: st.type, query: b.query, from, to });
    const other = await getJSON('/api/v1/series',
      { type: st.type, query: n.query, from, to, step: doc.step_ms + 'ms' });
    if (seq !== this.seq) return;
    const sum = (d) => {
      const v = new Array(doc.points).fill(0);
      for (const s of d.series || []) s.values.forEach((x, i) => { if (i < v.length) v[i] += x; });
      return { labels: {}, values: v };
    };
    this.values = [];
    const spans = [{ from: b.from, to: b.to, kind: 'base' }, { from: n.from, to: n.to, kind: 'new' }];
    this.chart.set({ ...doc, series: [sum(doc), sum(other)] },
                   [`base ${b.query || '{}'}`, `new ${n.query || '{}'}`], spans, spans);
  }

  // Line k clicked: its value selected (the flame view's group_by lines).
  pick(k) {
    const st = this.nav.state();
    if (st.view === 'diff' || !st.group_by || k >= this.values.length) return;
    this.nav.navigate({ query: withMatcher(st.query, st.group_by, this.values[k]), zoom: '', focus: '' });
  }

  // The two marked ranges' diff: the same selectors (the diff's own on
  // the diff view, else the selection's), base the first range.
  openDiff() {
    const st = this.nav.state(), [b, n] = this.chart.marks;
    if (!b || !n) return;
    const q = st.view === 'diff' ? [st.base_query, st.new_query] : [st.query, st.query];
    this.setCompare(false);
    this.nav.navigate({ view: 'diff', base_query: q[0], new_query: q[1], base_from: String(b.from),
                        base_to: String(b.to), new_from: String(n.from), new_to: String(n.to), dzoom: '' });
  }
}
