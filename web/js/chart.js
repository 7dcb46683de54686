// chart.js - totals over time (GET /api/v1/series, fetched by series.js)
// as lines on a canvas: one line, or one per value of a group_by label
// (a legend below, colours from one palette), drawn as a rate (the
// point's value per second of its step, so zooming does not change the
// scale).  Dragging the mouse across it selects a sub-range (from the
// keyboard: Shift+arrows narrow it, Enter takes it); a click on a line,
// or on its legend entry, picks the line.  In compare mode a drag marks
// a range instead: the first the base, the second the new, a third the
// base again.  Marked ranges (the compare's, the diff view's base and
// new) are bands under the lines.

import * as fmt from './format.js';

// Colours told apart by readers with any colour vision (Okabe and Ito),
// darkened to 3:1 on white.
export const PALETTE = ['#0550ae', '#c4432b', '#1a7f37', '#8250df', '#9a6700', '#bf3989',
                        '#0a7c86', '#6e7781', '#953800', '#4d2d8c', '#116329', '#a40e26'];
export const MARKS = { base: 'rgba(9,105,218,0.16)', new: 'rgba(207,34,46,0.14)' };

export class TimeChart {
  // opts: onRange(from, to) a sub-range dragged; onPick(line) a line
  // clicked; onMark(marks) compare mode's marks changed; legend: the
  // element the legend is written into.
  constructor(canvas, info, opts) {
    this.canvas = canvas;
    this.info = info;
    this.opts = typeof opts === 'function' ? { onRange: opts } : opts;
    this.legend = this.opts.legend || null;
    this.doc = null;
    this.drag = null;
    this.kbd = null;
    this.compare = false;
    this.marks = [];           // [{from, to, kind: 'base'|'new'}]
    this.names = [];           // per line, its legend text
    canvas.addEventListener('mousedown', (e) => this.down(e));
    window.addEventListener('mousemove', (e) => this.move(e));
    window.addEventListener('mouseup', (e) => this.up(e));
    canvas.addEventListener('keydown', (e) => this.key(e));
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  // doc: a series answer (null: none); names: a label per line (the
  // legend; [] or one line: no legend); marks: bands to draw (null: the
  // ones there); spans: per line the range it is drawn in ({from, to};
  // none: the whole chart).
  set(doc, names = [], marks = null, spans = []) {
    this.doc = doc;
    this.names = names;
    this.spans = spans;
    if (marks) this.marks = marks;
    this.kbd = null;
    this.writeLegend();
    this.draw();
  }

  setCompare(on) {
    this.compare = on;
    if (!on) this.marks = [];
    this.draw();
  }

  range() {
    const d = this.doc;
    if (!d) return null;
    return { from: d.from_ms, to: d.from_ms + d.points * d.step_ms };
  }

  // Per line, per point: the value per second of the step.
  lines() {
    const d = this.doc, per = Math.max(d.step_ms / 1000, 1e-3);
    return (d.series || []).map((s) => {
      const v = new Float64Array(d.points);
      for (let i = 0; i < s.values.length && i < v.length; i++) v[i] = s.values[i] / per;
      return v;
    });
  }

  colour(k) {
    return PALETTE[k % PALETTE.length];
  }

  xOf(ms, W) {
    const r = this.range();
    return ((ms - r.from) / (r.to - r.from)) * W;
  }

  msOf(x, W) {
    const r = this.range();
    return r.from + (Math.min(Math.max(x, 0), W) / W) * (r.to - r.from);
  }

  size() {
    return { W: this.canvas.clientWidth || 800, H: this.canvas.clientHeight || 90 };
  }

  draw() {
    const cv = this.canvas, ctx = cv.getContext('2d');
    const { W, H } = this.size(), dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, sans-serif';
    this.drawn = [];
    if (!this.doc || !this.doc.points) {
      ctx.fillStyle = '#57606a';
      ctx.fillText('no data in this range', 8, H / 2);
      return;
    }
    const lines = this.lines(), r = this.range();
    let max = 0;
    for (const v of lines) for (const x of v) max = Math.max(max, x);
    const top = 14, bottom = H - 14, h = bottom - top;
    this.drawMarks(ctx, W, H);
    ctx.strokeStyle = '#d0d7de';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(0, bottom + 0.5);
    ctx.lineTo(W, bottom + 0.5);
    ctx.stroke();
    ctx.fillStyle = '#57606a';
    for (let k = 0; k <= 4; k++) {
      const ms = r.from + (k / 4) * (r.to - r.from), x = (k / 4) * W;
      ctx.textAlign = k === 0 ? 'left' : k === 4 ? 'right' : 'center';
      ctx.fillText(fmt.shortTime(ms, r.to - r.from), x, H - 2);
    }
    ctx.textAlign = 'left';
    ctx.fillText('max ' + fmt.value(max, this.doc.unit) + '/s', 4, 10);
    lines.forEach((v, k) => {
      const pts = [], span = this.spans[k], step = this.doc.step_ms;
      ctx.strokeStyle = this.colour(k);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let on = false;
      for (let i = 0; i < v.length; i++) {
        const x = ((i + 0.5) / v.length) * W, y = bottom - (max ? (v[i] / max) * h : 0);
        const t = r.from + i * step, inside = !span || (t + step > span.from && t < span.to);
        pts.push(inside ? y : NaN);
        if (!inside) on = false;
        else if (on) ctx.lineTo(x, y);
        else {
          ctx.moveTo(x, y);
          on = true;
        }
      }
      ctx.stroke();
      this.drawn.push(pts);
    });
    this.drawSelection(ctx, W, H);
  }

  drawMarks(ctx, W, H) {
    for (const m of this.marks) {
      const a = this.xOf(m.from, W), b = this.xOf(m.to, W);
      ctx.fillStyle = MARKS[m.kind] || MARKS.base;
      ctx.fillRect(a, 0, Math.max(b - a, 2), H);
      ctx.fillStyle = '#24292f';
      ctx.fillText(m.kind, Math.max(a + 3, 0), m.kind === 'new' ? 34 : 22); // apart when the ranges meet
    }
  }

  drawSelection(ctx, W, H) {
    const s = this.drag || this.kbd, r = this.range();
    if (s) {
      const a = Math.min(s.a, s.b), b = Math.max(s.a, s.b);
      ctx.fillStyle = this.compare ? MARKS[this.nextMark()] : 'rgba(9,105,218,0.18)';
      ctx.fillRect(a, 0, b - a, H);
      this.info.textContent = `selecting ${fmt.time(this.msOf(a, W))} – ${fmt.time(this.msOf(b, W))}`;
      return;
    }
    const d = this.doc, aligned = d.period_ms ? ` (a whole number of the data's ${d.period_ms / 1000} s period)` : '';
    const how = this.compare
      ? `drag the ${this.nextMark()} range`
      : 'values per second; drag to select a sub-range' + (this.drawn.length > 1 ? ', click a line to select its value' : '');
    this.info.textContent = `${fmt.time(r.from)} – ${fmt.time(r.to)}, step ${d.step_ms / 1000} s${aligned}; ${how}`;
  }

  // Which range compare mode's next drag marks.
  nextMark() {
    return this.marks.length === 1 ? 'new' : 'base';
  }

  writeLegend() {
    if (!this.legend) return;
    this.legend.replaceChildren();
    this.legend.hidden = this.names.length < 2;
    this.names.forEach((name, k) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.line = String(k);
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = this.colour(k);
      b.append(sw, name);
      b.addEventListener('click', () => this.pick(k));
      this.legend.append(b);
    });
  }

  pick(k) {
    if (this.opts.onPick && k >= 0) this.opts.onPick(k);
  }

  // The drawn line nearest to canvas point (x, y), or -1.
  lineAt(x, y) {
    if (!this.drawn || !this.drawn.length || !this.doc.points) return -1;
    const { W } = this.size(), i = Math.min(Math.max(Math.floor((x / W) * this.doc.points), 0), this.doc.points - 1);
    let best = -1, dist = 12;
    this.drawn.forEach((pts, k) => {
      const dd = Math.abs(pts[i] - y);
      if (dd <= dist) { dist = dd; best = k; }
    });
    return best;
  }

  // Where a person would click line k: client coordinates of its highest
  // drawn point, or null (the browser tests move a real mouse there).
  linePoint(k) {
    const pts = this.drawn && this.drawn[k];
    if (!pts || !pts.length) return null;
    let i = -1;
    for (let j = 0; j < pts.length; j++) if (!isNaN(pts[j]) && (i < 0 || pts[j] < pts[i])) i = j;
    if (i < 0) return null;
    const r = this.canvas.getBoundingClientRect();
    return { x: r.left + ((i + 0.5) / pts.length) * this.size().W, y: r.top + pts[i] };
  }

  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  down(e) {
    if (!this.doc || e.button !== 0) return;
    e.preventDefault();
    const p = this.local(e);
    this.drag = { a: p.x, b: p.x, y: p.y };
    this.draw();
  }

  move(e) {
    if (!this.drag) return;
    this.drag.b = this.local(e).x;
    this.draw();
  }

  up() {
    if (!this.drag) return;
    const W = this.canvas.clientWidth, s = this.drag;
    this.drag = null;
    this.draw();
    if (Math.abs(s.b - s.a) < 3) {   // a click, not a selection: a line picked
      this.pick(this.lineAt(s.a, s.y));
      return;
    }
    const from = Math.round(this.msOf(Math.min(s.a, s.b), W));
    const to = Math.round(this.msOf(Math.max(s.a, s.b), W));
    this.take(from, to);
  }

  // A range selected: compare mode marks it, else the view takes it.
  take(from, to) {
    if (!this.compare) {
      this.opts.onRange(from, to);
      return;
    }
    const kind = this.nextMark();
    this.marks = kind === 'base' ? [{ from, to, kind }] : [this.marks[0], { from, to, kind }];
    this.draw();
    if (this.opts.onMark) this.opts.onMark(this.marks);
  }

  key(e) {
    if (!this.doc) return;
    const W = this.canvas.clientWidth, step = W / 20;
    if (!this.kbd) this.kbd = { a: 0, b: W };
    if (e.key === 'ArrowRight' && e.shiftKey) this.kbd.a = Math.min(this.kbd.a + step, this.kbd.b - step);
    else if (e.key === 'ArrowLeft' && e.shiftKey) this.kbd.b = Math.max(this.kbd.b - step, this.kbd.a + step);
    else if (e.key === 'ArrowRight') this.kbd.b = Math.min(this.kbd.b + step, W);
    else if (e.key === 'ArrowLeft') this.kbd.a = Math.max(this.kbd.a - step, 0);
    else if (e.key === 'Enter') {
      const k = this.kbd;
      this.kbd = null;
      this.draw();
      this.take(Math.round(this.msOf(k.a, W)), Math.round(this.msOf(k.b, W)));
      return;
    } else if (e.key === 'Escape') this.kbd = null;
    else return;
    e.preventDefault();
    this.draw();
  }
}
