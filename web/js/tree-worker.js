// tree-worker.js - fetches a query's or a diff's JSON tree and flattens it
// off the main thread (the page must never block for long: docs/web-ui.md).
//
// In:  {id, url, diff, tenant, hideKernel}    Out: {id, data} or {id, error, status, challenge}
// (tenant: the X-Scope-OrgID the request names, '' none; challenge: the
// error's answer had a WWW-Authenticate, api.js's ApiError tells by it)
// data: the tree in depth-first preorder, as typed arrays (transferred):
//   name[i], file[i]  indexes into names[] / files[] (-1: no file)
//   line[i]           line number, 0 when the API gives none
//   parent[i], depth[i], end[i]   node i's subtree is [i, end[i])
//   plain:  vself[i], vtotal[i]   values in the type's unit (total: the root's)
//   diff:   bself, btotal, nself, ntotal (raw values of each side)
//   x[i], w[i]        start and width in units of the root's width
//                     (plain: total / root total; diff: the mean of the
//                     two sides' shares, as the server's SVG draws it)
// plus, for plain trees, the top table: per function (names[] index),
// self and total (each stack counted once however deep it recurses).

function grow(a, n) {
  const b = new a.constructor(n);
  b.set(a);
  return b;
}

class Flat {
  constructor(diff) {
    this.diff = diff;
    this.cap = 1024;
    this.n = 0;
    this.names = [];
    this.files = [];
    this.nameIdx = new Map();
    this.fileIdx = new Map();
    this.a = {
      name: new Int32Array(this.cap), file: new Int32Array(this.cap),
      line: new Int32Array(this.cap), parent: new Int32Array(this.cap),
      depth: new Uint16Array(this.cap), end: new Int32Array(this.cap),
      x: new Float64Array(this.cap), w: new Float64Array(this.cap),
    };
    const vals = diff ? ['bself', 'btotal', 'nself', 'ntotal'] : ['vself', 'vtotal'];
    for (const k of vals) this.a[k] = new Float64Array(this.cap);
    this.maxDepth = 0;
  }

  intern(map, list, s) {
    let i = map.get(s);
    if (i === undefined) {
      i = list.length;
      list.push(s);
      map.set(s, i);
    }
    return i;
  }

  push(node, parent, depth, x, w) {
    if (this.n === this.cap) {
      this.cap *= 2;
      for (const k in this.a) this.a[k] = grow(this.a[k], this.cap);
    }
    const i = this.n++, a = this.a;
    a.name[i] = this.intern(this.nameIdx, this.names, String(node.name));
    a.file[i] = node.file ? this.intern(this.fileIdx, this.files, String(node.file)) : -1;
    a.line[i] = node.line | 0;
    a.parent[i] = parent;
    a.depth[i] = depth;
    a.x[i] = x;
    a.w[i] = w;
    if (this.diff) {
      a.bself[i] = node.base_self || 0;
      a.btotal[i] = node.base_total || 0;
      a.nself[i] = node.new_self || 0;
      a.ntotal[i] = node.new_total || 0;
    } else {
      a.vself[i] = node.self || 0;
      a.vtotal[i] = node.total || 0;
    }
    if (depth > this.maxDepth) this.maxDepth = depth;
    return i;
  }
}

// The width of a node in units of the root's width.
function widthOf(node, ctx) {
  if (!ctx.diff) return ctx.rootTotal ? (node.total || 0) / ctx.rootTotal : 0;
  const b = ctx.bT ? (node.base_total || 0) / ctx.bT : 0;
  const n = ctx.nT ? (node.new_total || 0) / ctx.nT : 0;
  return (b + n) / 2;
}

// A kernel frame (hidden with hideKernel, and its callees, which are
// kernel frames too: a stack's kernel part is its leaf end): OTLP's frame
// type "kernel", the agent's names of kernel modules' functions ("name
// [module]") and unnamed kernel addresses ("[kernel 0x...]"), or the
// mapping [kernel.kallsyms] of an unsymbolized frame.
function isKernel(node) {
  const name = String(node.name);
  return node.frame_type === 'kernel' || /^\[kernel[ .]/.test(name) || / \[[a-z0-9_]+\]$/.test(name);
}

// A hidden child's values added to node i's self.
function foldInto(f, i, node) {
  const a = f.a;
  if (f.diff) {
    a.bself[i] += node.base_total || 0;
    a.nself[i] += node.new_total || 0;
  } else a.vself[i] += node.total || 0;
}

// Depth-first, iteratively (trees can be deeper than the JS stack likes).
function flatten(root, ctx) {
  const f = new Flat(ctx.diff);
  const stack = [{ node: root, parent: -1, depth: 0, x: 0 }];
  while (stack.length) {
    const it = stack.pop();
    const w = widthOf(it.node, ctx);
    const i = f.push(it.node, it.parent, it.depth, it.x, w);
    const kids = it.node.children || [];
    let x = it.x;
    const items = [];
    for (const k of kids) {
      if (ctx.hideKernel && isKernel(k)) {
        foldInto(f, i, k); // its width becomes i's self, after i's other children
        continue;
      }
      items.push({ node: k, parent: i, depth: it.depth + 1, x });
      x += widthOf(k, ctx);
    }
    for (let j = items.length - 1; j >= 0; j--) stack.push(items[j]);
  }
  // end[i]: the first index past i's subtree, from depths in preorder.
  const a = f.a, n = f.n, st = [];
  for (let i = 0; i < n; i++) {
    while (st.length && a.depth[st[st.length - 1]] >= a.depth[i]) a.end[st.pop()] = i;
    st.push(i);
  }
  while (st.length) a.end[st.pop()] = n;
  return f;
}

// Per function: self summed, total counted once per stack (a function
// already on the path from the root is not counted again).
function topTable(f) {
  const a = f.a, n = f.n, m = f.names.length;
  const self = new Float64Array(m), total = new Float64Array(m), active = new Int32Array(m);
  const path = [];
  for (let i = 1; i < n; i++) {
    while (path.length && a.end[path[path.length - 1]] <= i) active[a.name[path.pop()]]--;
    const k = a.name[i];
    self[k] += a.vself[i];
    if (active[k] === 0) total[k] += a.vtotal[i];
    active[k]++;
    path.push(i);
  }
  return { self, total };
}

async function load(msg) {
  const headers = { Accept: 'application/json' };
  if (msg.tenant) headers['X-Scope-OrgID'] = msg.tenant;
  const r = await fetch(msg.url, { headers });
  const text = await r.text();
  if (!r.ok)
    return { id: msg.id, status: r.status, error: text.trim() || r.statusText,
             challenge: r.headers.has('WWW-Authenticate') };
  const t0 = performance.now();
  const doc = JSON.parse(text);
  const root = doc.tree || { name: 'total', self: 0, total: 0 };
  const ctx = { diff: !!msg.diff, hideKernel: !!msg.hideKernel, rootTotal: root.total || 0,
                bT: doc.base_total || 0, nT: doc.new_total || 0 };
  const f = flatten(root, ctx);
  const data = { n: f.n, names: f.names, files: f.files, maxDepth: f.maxDepth, diff: !!msg.diff };
  const transfer = [];
  for (const k in f.a) {
    data[k] = f.a[k].slice(0, f.n);
    transfer.push(data[k].buffer);
  }
  for (const k of ['type', 'unit', 'period', 'total', 'profiles', 'stacks', 'from_ms', 'to_ms',
                   'base_total', 'new_total', 'base_profiles', 'new_profiles', 'hint'])
    if (k in doc) data[k] = doc[k];
  if (!msg.diff) {
    const top = topTable({ a: data, n: f.n, names: f.names });
    data.topSelf = top.self;
    data.topTotal = top.total;
    transfer.push(top.self.buffer, top.total.buffer);
  }
  data.workerMs = performance.now() - t0;
  data.bytes = text.length;
  return { id: msg.id, data, transfer };
}

self.onmessage = async (e) => {
  let out;
  try {
    out = await load(e.data);
  } catch (err) {
    out = { id: e.data.id, status: 0, error: String(err && err.message || err) };
  }
  const transfer = out.transfer || [];
  delete out.transfer;
  self.postMessage(out, transfer);
};
