// api.js - the server's HTTP API (docs/http-api.md) as the UI calls it.
// Every failure is thrown as an ApiError with the server's one-line reason,
// shown to the user as it is: an error is never drawn as an empty graph.

export class ApiError extends Error {
  constructor(status, message, url) {
    super(message);
    this.status = status;
    this.url = url;
  }
}

export function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export async function getJSON(path, params, signal) {
  const u = url(path, params);
  let r;
  try {
    r = await fetch(u, { headers: { Accept: 'application/json' }, signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, `cannot reach the server: ${e.message}`, u);
  }
  const text = await r.text();
  if (!r.ok) throw new ApiError(r.status, `${r.status}: ${text.trim() || r.statusText}`, u);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(r.status, `${u}: not JSON: ${e.message}`, u);
  }
}

// Trees are fetched and flattened by a worker (tree-worker.js), so a big
// one never blocks the page while it is parsed.
let worker = null, nextId = 1;
const pending = new Map();

function theWorker() {
  if (!worker) {
    worker = new Worker('/js/tree-worker.js');
    worker.onmessage = (e) => {
      const p = pending.get(e.data.id);
      if (!p) return;
      pending.delete(e.data.id);
      if (e.data.error !== undefined)
        p.reject(new ApiError(e.data.status, e.data.status ? `${e.data.status}: ${e.data.error}`
                                                           : e.data.error, p.url));
      else p.resolve(e.data.data);
    };
  }
  return worker;
}

export function loadTree(path, params, diff = false) {
  const u = url(path, params);
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject, url: u });
    theWorker().postMessage({ id, url: u, diff });
  });
}
