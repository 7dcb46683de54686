// chart.js - the total over time (GET /api/v1/series) as a line chart on
// a canvas, with a sub-range selected by dragging the mouse across it (or,
// from the keyboard, Shift+arrows to narrow it and Enter to take it).

import * as fmt from './format.js';

export class TimeChart {
  constructor(canvas, info, onRange) {
    this.canvas = canvas;
    this.info = info;
    this.onRange = onRange;
    this.doc = null;
    this.drag = null;
    this.kbd = null;
    canvas.addEventListener('mousedown', (e) => this.down(e));
    window.addEventListener('mousemove', (e) => this.move(e));
    window.addEventListener('mouseup', (e) => this.up(e));
    canvas.addEventListener('keydown', (e) => this.key(e));
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  set(doc) {
    this.doc = doc;
    this.kbd = null;
    this.draw();
  }

  range() {
    const d = this.doc;
    if (!d) return null;
    return { from: d.from_ms, to: d.from_ms + d.points * d.step_ms };
  }

  // One line: the sum over the series of each point.
  values() {
    const d = this.doc, v = new Float64Array(d.points);
    for (const s of d.series || [])
      for (let i = 0; i < s.values.length && i < v.length; i++) v[i] += s.values[i];
    return v;
  }

  xOf(ms, W) {
    const r = this.range();
    return ((ms - r.from) / (r.to - r.from)) * W;
  }

  msOf(x, W) {
    const r = this.range();
    return r.from + (Math.min(Math.max(x, 0), W) / W) * (r.to - r.from);
  }

  draw() {
    const cv = this.canvas, ctx = cv.getContext('2d');
    const W = cv.clientWidth || 800, H = cv.clientHeight || 90, dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, sans-serif';
    if (!this.doc || !this.doc.points) {
      ctx.fillStyle = '#57606a';
      ctx.fillText('no data in this range', 8, H / 2);
      return;
    }
    const v = this.values(), r = this.range();
    let max = 0;
    for (const x of v) max = Math.max(max, x);
    const top = 14, bottom = H - 14, h = bottom - top;
    ctx.strokeStyle = '#d0d7de';
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
    ctx.fillText('max ' + fmt.value(max / Math.max(this.doc.step_ms / 1000, 1), this.doc.unit) + '/s', 4, 10);
    ctx.strokeStyle = '#0550ae';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < v.length; i++) {
      const x = ((i + 0.5) / v.length) * W, y = bottom - (max ? (v[i] / max) * h : 0);
      if (i) ctx.lineTo(x, y);
      else ctx.moveTo(x, y);
    }
    ctx.stroke();
    const s = this.drag || this.kbd;
    if (s) {
      const a = Math.min(s.a, s.b), b = Math.max(s.a, s.b);
      ctx.fillStyle = 'rgba(9,105,218,0.18)';
      ctx.fillRect(a, 0, b - a, H);
      this.info.textContent = `selecting ${fmt.time(this.msOf(a, W))} – ${fmt.time(this.msOf(b, W))}`;
    } else {
      this.info.textContent = `${fmt.time(r.from)} – ${fmt.time(r.to)}, step ${this.doc.step_ms / 1000} s; drag to select a sub-range`;
    }
  }

  local(e) {
    return e.clientX - this.canvas.getBoundingClientRect().left;
  }

  down(e) {
    if (!this.doc || e.button !== 0) return;
    e.preventDefault();
    const x = this.local(e);
    this.drag = { a: x, b: x };
    this.draw();
  }

  move(e) {
    if (!this.drag) return;
    this.drag.b = this.local(e);
    this.draw();
  }

  up() {
    if (!this.drag) return;
    const W = this.canvas.clientWidth, s = this.drag;
    this.drag = null;
    this.draw();
    if (Math.abs(s.b - s.a) < 3) return; // a click, not a selection
    const from = Math.round(this.msOf(Math.min(s.a, s.b), W));
    const to = Math.round(this.msOf(Math.max(s.a, s.b), W));
    this.onRange(from, to);
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
      this.onRange(Math.round(this.msOf(k.a, W)), Math.round(this.msOf(k.b, W)));
      return;
    } else if (e.key === 'Escape') this.kbd = null;
    else return;
    e.preventDefault();
    this.draw();
  }
}
