// flame.js - the flame graph on a canvas: plain (one selection) or
// differential (two), flame (root at the bottom) or icicle (root at the
// top).  Data come flattened from tree-worker.js; a draw walks only the
// frames at least a third of a pixel wide (a narrower frame's subtree is
// skipped whole through end[]), so an hour of 20 series draws in a few
// milliseconds.  Hover shows a frame's name, file, self and total; a click
// zooms into it (its callers stay, dimmed); the keyboard moves between
// frames (arrows), zooms (Enter, Space) and zooms out (Escape).

import * as fmt from './format.js';

const ROW = 18;
const MIN_PX = 0.35;
const FONT = '12px system-ui, "DejaVu Sans", sans-serif';

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

// flamegraph.pl's warm palette, from the function's name (stable colours).
function warm(name) {
  const h = hash(name);
  return `rgb(${205 + (h % 51)},${(h >>> 8) % 231},${(h >>> 16) % 56})`;
}

// Red grew, blue shrank, saturated by the change against the largest one
// (the server's differential SVG uses the same rule).
export function diffColour(delta, max) {
  const k = max > 0 ? Math.min(1, Math.abs(delta) / max) : 0;
  const c = Math.round(235 - 200 * k);
  if (delta > 0 && k > 0.004) return { fill: `rgb(255,${c},${c})`, dark: k > 0.75 };
  if (delta < 0 && k > 0.004) return { fill: `rgb(${c},${c},255)`, dark: k > 0.55 };
  return { fill: 'rgb(225,225,225)', dark: false };
}

// Text for the exported SVG: the characters XML 1.0 forbids (controls but
// tab and LF, U+FFFE, U+FFFF, lone surrogates) as U+FFFD, as the server's
// flame graphs have them (profile-model/out.c), and markup escaped.
const XML_FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const esc = (s) => String(s).replace(XML_FORBIDDEN, '\ufffd')
  .replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

// One SVG document of graphs drawn side by side as they are on screen
// (parts: [{ graph, heading }]), under a title line.
export function svgDocument(title, parts) {
  const GAP = 12, head = parts.some((p) => p.heading) ? 18 : 0;
  let W = 0, H = 0;
  for (const p of parts) {
    W += (W ? GAP : 0) + p.graph.canvas.clientWidth;
    H = Math.max(H, p.graph.canvas.clientHeight);
  }
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + 24 + head}" viewBox="0 0 ${W} ${H + 24 + head}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`, `<text x="4" y="16" font-size="13">${esc(title)}</text>`];
  let x = 0;
  for (const p of parts) {
    if (p.heading) out.push(`<text x="${x + 4}" y="${24 + 13}" font-weight="bold">${esc(p.heading)}</text>`);
    out.push(`<g transform="translate(${x},${24 + head})">`, ...p.graph.svgFrames(), '</g>');
    x += p.graph.canvas.clientWidth + GAP;
  }
  out.push('</svg>\n');
  return out.join('\n');
}

export class FlameGraph {
  constructor(canvas, opts = {}) {
    this.canvas = canvas;
    this.opts = opts;
    this.tooltip = opts.tooltip || null;
    this.info = opts.info || null;
    this.data = null;
    this.zoom = 0;
    this.history = [];
    this.icicle = false;
    this.match = null;       // Uint8Array per name, or null
    this.focusName = -1;
    this.sel = -1;           // the keyboard's frame
    this.rows = [];          // per row of the last draw: [x0, x1, idx, ...]
    this.drawn = [];         // the last draw's frames, for the SVG export
    this.ctx = canvas.getContext('2d');
    canvas.addEventListener('mousemove', (e) => this.onMove(e));
    canvas.addEventListener('mouseleave', () => this.hideTip());
    canvas.addEventListener('click', (e) => this.onClick(e));
    canvas.addEventListener('keydown', (e) => this.onKey(e));
    canvas.addEventListener('focus', () => { if (this.sel < 0 && this.data) this.select(this.zoom); });
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(canvas);
  }

  setData(data) {
    this.data = data;
    this.zoom = 0;
    this.history = [];
    this.sel = -1;
    this.match = null;
    this.focusName = -1;
    if (data && data.diff) {
      let max = 0;
      for (let i = 0; i < data.n; i++) max = Math.max(max, Math.abs(this.delta(i)));
      this.maxDelta = max;
    }
    this.draw();
  }

  // The change of node i's share of each side's total (diff only).
  delta(i) {
    const d = this.data;
    const b = d.base_total ? d.btotal[i] / d.base_total : 0;
    const n = d.new_total ? d.ntotal[i] / d.new_total : 0;
    return n - b;
  }

  setIcicle(on) {
    this.icicle = on;
    this.draw();
  }

  // Highlight the frames whose name matches re (null: none).  Returns the
  // number of matching functions and their share (nested matches once).
  setSearch(re) {
    const d = this.data;
    if (!d || !re) {
      if (this.match) {
        this.match = null;
        this.draw();
      }
      return null;
    }
    const m = new Uint8Array(d.names.length);
    let funcs = 0;
    for (let k = 0; k < d.names.length; k++)
      if (re.test(d.names[k])) { m[k] = 1; funcs++; }
    this.match = m;
    this.draw();
    return { funcs, ...this.matchShare() };
  }

  matchShare() {
    const d = this.data;
    let v = 0, b = 0, frames = 0;
    for (let i = 1; i < d.n;) {
      if (this.match[d.name[i]]) {
        frames++;
        if (d.diff) { v += d.ntotal[i]; b += d.btotal[i]; } else v += d.vtotal[i];
        i = d.end[i];
      } else i++;
    }
    if (d.diff)
      return { frames, share: d.new_total ? v / d.new_total : 0,
               baseShare: d.base_total ? b / d.base_total : 0 };
    return { frames, value: v, share: d.total ? v / d.total : 0 };
  }

  // Highlight every frame of function name and zoom to its heaviest frame.
  focusFunction(name) {
    const d = this.data;
    if (!d) return;
    const k = d.names.indexOf(name);
    this.focusName = k;
    if (k < 0) return this.draw();
    let best = -1;
    for (let i = 1; i < d.n; i++)
      if (d.name[i] === k && (best < 0 || d.w[i] > d.w[best])) best = i;
    if (best >= 0) this.zoomTo(best);
    else this.draw();
  }

  zoomTo(i, remember = true) {
    if (!this.data || i === this.zoom) return;
    if (remember) this.history.push(this.zoom);
    this.zoom = i;
    this.sel = i;
    this.draw();
    if (this.opts.onZoom) this.opts.onZoom(this);
  }

  zoomOut() {
    if (!this.data || this.zoom === 0) return;
    const back = this.history.length ? this.history.pop() : this.data.parent[this.zoom];
    this.zoom = Math.max(0, back);
    this.sel = this.zoom;
    this.draw();
    if (this.opts.onZoom) this.opts.onZoom(this);
  }

  resetZoom() {
    this.history = [];
    if (this.zoom) {
      this.zoom = 0;
      this.sel = 0;
      this.draw();
      if (this.opts.onZoom) this.opts.onZoom(this);
    }
  }

  // The names from the root's child down to node i (the URL's zoom).
  pathOf(i) {
    const d = this.data, out = [];
    for (; i > 0; i = d.parent[i]) out.push(d.names[d.name[i]]);
    return out.reverse();
  }

  zoomPath() {
    return this.data ? this.pathOf(this.zoom) : [];
  }

  // The node at the end of a path of names, or -1.
  findPath(names) {
    const d = this.data;
    if (!d) return -1;
    let i = 0;
    for (const name of names) {
      let found = -1;
      for (let j = i + 1; j < d.end[i]; j = d.end[j])
        if (d.names[d.name[j]] === name) { found = j; break; }
      if (found < 0) return -1;
      i = found;
    }
    return i;
  }

  rowY(depth, height) {
    return this.icicle ? depth * ROW : height - (depth + 1) * ROW;
  }

  colour(i, dimmed) {
    const d = this.data, k = d.name[i];
    let fill, dark = false;
    if (this.match && this.match[k]) {
      fill = 'rgb(190,60,200)';
      dark = true;
    } else if (d.diff) {
      ({ fill, dark } = diffColour(this.delta(i), this.maxDelta));
    } else {
      fill = i === 0 ? 'rgb(200,200,200)' : warm(d.names[k]);
    }
    return { fill, dark, alpha: dimmed ? 0.55 : 1 };
  }

  label(i) {
    return i === 0 ? 'all' : this.data.names[this.data.name[i]];
  }

  // Run fn with drawing held, then draw once (a new graph with its zoom,
  // search and orientation is one draw, not one each).
  batch(fn) {
    this.holding = true;
    try {
      fn();
    } finally {
      this.holding = false;
    }
    this.draw();
  }

  draw() {
    if (this.holding) return;
    const cv = this.canvas, ctx = this.ctx, d = this.data;
    const W = cv.clientWidth || 800, dpr = window.devicePixelRatio || 1;
    this.rows = [];
    this.drawn = [];
    if (!d || !d.n) {
      cv.height = ROW * dpr;
      cv.style.height = ROW + 'px';
      cv.width = W * dpr;
      return;
    }
    const z = this.zoom, zx = d.x[z], zw = d.w[z] || 1, dz = d.depth[z];
    // pass 1: which frames are wide enough, and how deep they go
    const vis = [];
    let maxDepth = dz;
    for (let a = d.parent[z]; a >= 0; a = d.parent[a]) vis.push(a);
    vis.reverse();
    for (let i = z; i < d.end[z];) {
      const px = (d.w[i] / zw) * W;
      if (px < MIN_PX) { i = d.end[i]; continue; }
      vis.push(i);
      if (d.depth[i] > maxDepth) maxDepth = d.depth[i];
      i++;
    }
    const H = (maxDepth + 1) * ROW;
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
    cv.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    if (!this.charW) this.charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz_.()*ABC').width / 34;
    for (let r = 0; r <= maxDepth; r++) this.rows.push([]);
    for (const i of vis) {
      const anc = d.depth[i] < dz;
      const x = anc ? 0 : ((d.x[i] - zx) / zw) * W;
      const w = anc ? W : (d.w[i] / zw) * W;
      const y = this.rowY(d.depth[i], H);
      this.paint(i, x, y, w, anc);
      this.rows[d.depth[i]].push(x, x + w, i);
    }
    if (this.sel >= 0) this.outline(this.sel, '#0969da', 2);
    if (this.opts.onDraw) this.opts.onDraw(this);
  }

  paint(i, x, y, w, dimmed) {
    const ctx = this.ctx, c = this.colour(i, dimmed), d = this.data;
    ctx.globalAlpha = c.alpha;
    ctx.fillStyle = c.fill;
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.3), ROW - 1);
    let text = '';
    if (w > 24) {
      const name = this.label(i), max = Math.floor((w - 6) / this.charW);
      text = name.length > max ? name.slice(0, Math.max(max - 1, 1)) + '…' : name;
      ctx.fillStyle = c.dark ? '#fff' : '#111';
      ctx.fillText(text, x + 3, y + ROW / 2);
    }
    ctx.globalAlpha = 1;
    if (this.focusName >= 0 && d.name[i] === this.focusName) {
      ctx.strokeStyle = '#111';
      ctx.lineWidth = 2;
      ctx.strokeRect(x + 1, y + 1, Math.max(w - 2.5, 1), ROW - 3);
    }
    this.drawn.push({ i, x, y, w, fill: c.fill, alpha: c.alpha, text, dark: c.dark });
  }

  outline(i, colour, width) {
    const r = this.rectOf(i);
    if (!r) return;
    this.ctx.strokeStyle = colour;
    this.ctx.lineWidth = width;
    this.ctx.strokeRect(r.x + 1, r.y + 1, Math.max(r.w - 2.5, 1), ROW - 3);
  }

  // The drawn rectangle of node i (canvas coordinates), or null.
  rectOf(i) {
    for (const f of this.drawn) if (f.i === i) return f;
    return null;
  }

  // The node under canvas point (x, y), or -1.
  hit(x, y) {
    const d = this.data;
    if (!d) return -1;
    const H = this.canvas.clientHeight;
    const depth = this.icicle ? Math.floor(y / ROW) : Math.floor((H - y) / ROW);
    const row = this.rows[depth];
    if (!row) return -1;
    let lo = 0, hi = row.length / 3;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (row[mid * 3 + 1] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo < row.length / 3 && row[lo * 3] <= x ? row[lo * 3 + 2] : -1;
  }

  // Everything a person reads about node i, as [label, text] lines.
  describe(i) {
    const d = this.data, lines = [];
    const file = d.file[i] >= 0 ? d.files[d.file[i]] + (d.line[i] ? ':' + d.line[i] : '') : '';
    lines.push(['', this.label(i)]);
    if (file) lines.push(['file', file]);
    if (d.diff) {
      const b = d.base_total ? d.btotal[i] / d.base_total : 0;
      const n = d.new_total ? d.ntotal[i] / d.new_total : 0;
      const bs = d.base_total ? d.bself[i] / d.base_total : 0;
      const ns = d.new_total ? d.nself[i] / d.new_total : 0;
      const verdict = n > b ? 'grew' : n < b ? 'shrank' : 'unchanged';
      lines.push(['total', `base ${fmt.pct(b)} → new ${fmt.pct(n)} (${fmt.points(n - b)} points, ${verdict})`]);
      lines.push(['self', `base ${fmt.pct(bs)} → new ${fmt.pct(ns)} (${fmt.points(ns - bs)} points)`]);
      lines.push(['values', `base ${fmt.value(d.btotal[i], d.unit)}, new ${fmt.value(d.ntotal[i], d.unit)}`]);
      return lines;
    }
    const T = d.total || 1, u = d.unit;
    const sam = (v) => fmt.count(fmt.samples(v, d));
    lines.push(['total', `${fmt.value(d.vtotal[i], u)} (${sam(d.vtotal[i])} samples), ${fmt.pct(d.vtotal[i] / T)}`]);
    lines.push(['self', `${fmt.value(d.vself[i], u)} (${sam(d.vself[i])} samples), ${fmt.pct(d.vself[i] / T)}`]);
    if (this.zoom > 0 && i !== this.zoom && d.depth[i] > d.depth[this.zoom])
      lines.push(['of zoomed frame', fmt.pct(d.vtotal[i] / (d.vtotal[this.zoom] || 1))]);
    return lines;
  }

  fill(el, i) {
    el.replaceChildren();
    for (const [k, v] of this.describe(i)) {
      const line = document.createElement('div');
      if (k) {
        const b = document.createElement('b');
        b.textContent = k + ': ';
        line.append(b);
      } else line.className = 'name';
      line.append(v);
      el.append(line);
    }
  }

  onMove(e) {
    const r = this.canvas.getBoundingClientRect();
    const i = this.hit(e.clientX - r.left, e.clientY - r.top);
    if (i < 0) return this.hideTip();
    this.canvas.style.cursor = 'pointer';
    if (this.tooltip) {
      this.fill(this.tooltip, i);
      this.tooltip.hidden = false;
      const tw = this.tooltip.offsetWidth, th = this.tooltip.offsetHeight;
      let x = e.clientX + 14, y = e.clientY + 14;
      if (x + tw > window.innerWidth - 4) x = Math.max(4, e.clientX - tw - 14);
      if (y + th > window.innerHeight - 4) y = Math.max(4, e.clientY - th - 14);
      this.tooltip.style.left = x + 'px';
      this.tooltip.style.top = y + 'px';
    }
    if (this.info) this.fill(this.info, i);
    if (this.opts.onHover) this.opts.onHover(this, i);
  }

  hideTip() {
    this.canvas.style.cursor = '';
    if (this.tooltip) this.tooltip.hidden = true;
  }

  onClick(e) {
    const r = this.canvas.getBoundingClientRect();
    const i = this.hit(e.clientX - r.left, e.clientY - r.top);
    if (i < 0) return;
    if (this.opts.onSelect) this.opts.onSelect(this, i);
    if (i === this.zoom) return;
    if (this.data.depth[i] < this.data.depth[this.zoom]) {
      this.zoomTo(i);   // an ancestor: zoom out to it
      return;
    }
    this.zoomTo(i);
  }

  select(i) {
    this.sel = i;
    this.draw();
    if (this.info) this.fill(this.info, i);
    if (this.opts.onSelect) this.opts.onSelect(this, i);
  }

  // The widest child of i that is drawn, or -1.
  heaviestChild(i) {
    const d = this.data;
    let best = -1;
    for (let j = i + 1; j < d.end[i]; j = d.end[j])
      if (this.rectOf(j) && (best < 0 || d.w[j] > d.w[best])) best = j;
    return best;
  }

  // The drawn neighbour of i on its row (dir -1: left, +1: right), or -1.
  neighbour(i, dir) {
    const row = this.rows[this.data.depth[i]] || [];
    for (let k = 0; k < row.length; k += 3)
      if (row[k + 2] === i) {
        const j = k + 3 * dir;
        return j >= 0 && j < row.length ? row[j + 2] : -1;
      }
    return -1;
  }

  onKey(e) {
    const d = this.data;
    if (!d) return;
    let i = this.sel >= 0 ? this.sel : this.zoom, next = -1;
    const toLeaf = this.icicle ? 'ArrowDown' : 'ArrowUp';
    const toRoot = this.icicle ? 'ArrowUp' : 'ArrowDown';
    switch (e.key) {
      case toLeaf: next = this.heaviestChild(i); break;
      case toRoot: next = d.parent[i]; break;
      case 'ArrowLeft': next = this.neighbour(i, -1); break;
      case 'ArrowRight': next = this.neighbour(i, 1); break;
      case 'Enter': case ' ':
        e.preventDefault();
        if (this.opts.onSelect) this.opts.onSelect(this, i);
        this.zoomTo(i);
        return;
      case 'Escape':
        e.preventDefault();
        this.zoomOut();
        return;
      default: return;
    }
    e.preventDefault();
    if (next >= 0) this.select(next);
  }

  // Where a person would point at the widest drawn frame of a function:
  // client coordinates of its centre, or null (the browser tests use it
  // to move a real mouse there).
  frameRect(name) {
    const d = this.data;
    if (!d) return null;
    let best = null;
    for (const f of this.drawn)
      if (this.label(f.i) === name && (!best || f.w > best.w)) best = f;
    if (!best) return null;
    const r = this.canvas.getBoundingClientRect();
    return { x: r.left + best.x + Math.min(best.w / 2, 40), y: r.top + best.y + ROW / 2,
             w: best.w, h: ROW, fill: best.fill };
  }

  // The drawn graph as a self-contained SVG document.
  toSVG(title) {
    return svgDocument(title, [{ graph: this }]);
  }

  // The drawn frames as SVG elements, each with its tooltip as a <title>.
  svgFrames() {
    const out = [];
    for (const f of this.drawn) {
      const tip = this.describe(f.i).map(([k, v]) => (k ? k + ': ' : '') + v).join('\n');
      out.push(`<g><title>${esc(tip)}</title><rect x="${f.x.toFixed(2)}" y="${f.y}" width="${Math.max(f.w - 0.5, 0.3).toFixed(2)}" height="${ROW - 1}" fill="${f.fill}" fill-opacity="${f.alpha}"/>` +
        (f.text ? `<text x="${(f.x + 3).toFixed(2)}" y="${f.y + 13}" fill="${f.dark ? '#fff' : '#111'}">${esc(f.text)}</text>` : '') + `</g>`);
    }
    return out;
  }

  // The folded stacks of what is on screen (the zoomed subtree, with the
  // path to it): "root;...;leaf value" lines.
  toFolded() {
    const d = this.data;
    if (!d) return '';
    const lines = [], path = [];
    for (let a = d.parent[this.zoom]; a > 0; a = d.parent[a]) path.unshift(d.names[d.name[a]]);
    const stack = [];
    const z = this.zoom;
    for (let i = z; i < d.end[z]; i++) {
      while (stack.length && d.end[stack[stack.length - 1]] <= i) stack.pop();
      stack.push(i);
      const self = d.diff ? d.nself[i] + d.bself[i] : d.vself[i];
      if (i > 0 && self > 0) {
        const names = path.concat(stack.filter((j) => j > 0).map((j) => d.names[d.name[j]]));
        lines.push(names.join(';') + ' ' + (d.diff ? `${d.bself[i]} ${d.nself[i]}` : self));
      }
    }
    return lines.join('\n') + '\n';
  }
}
