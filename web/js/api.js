// api.js - the server's HTTP API (docs/http-api.md) as the UI calls it.
// Every failure is thrown as an ApiError with the server's one-line reason,
// shown to the user as it is: an error is never drawn as an empty graph.
// Every call names the tenant set by setTenant() (X-Scope-OrgID, for a
// server with --multitenancy; none while it is '').

export class ApiError extends Error {
  // challenge: the answer had a WWW-Authenticate (a 401 of credentials);
  // a 401 without one is the server asking for a tenant.
  constructor(status, message, url, challenge = false) {
    super(message);
    this.status = status;
    this.url = url;
    this.tenantRequired = status === 401 && !challenge;
  }
}

let tenant = '';

// The tenant every later call names ('' none).
export function setTenant(name) {
  tenant = name || '';
}

export function currentTenant() {
  return tenant;
}

function headers(accept) {
  const h = { Accept: accept };
  if (tenant) h['X-Scope-OrgID'] = tenant;
  return h;
}

export function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// fetch(u) as the tenant; an ApiError when there is no answer, or one
// that is not a success.
async function get(u, accept, signal) {
  let r;
  try {
    r = await fetch(u, { headers: headers(accept), signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, `cannot reach the server: ${e.message}`, u);
  }
  if (!r.ok) {
    const text = await r.text();
    throw new ApiError(r.status, `${r.status}: ${text.trim() || r.statusText}`, u,
                       r.headers.has('WWW-Authenticate'));
  }
  return r;
}

// A file of the server (a download) as a Blob, fetched as the tenant.
export async function getBlob(u) {
  return (await get(u, '*/*')).blob();
}

export async function getJSON(path, params, signal) {
  const u = url(path, params);
  const text = await (await get(u, 'application/json', signal)).text();
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
                                                           : e.data.error, p.url, e.data.challenge));
      else p.resolve(e.data.data);
    };
  }
  return worker;
}

// opts.hideKernel: kernel frames folded into their callers (tree-worker.js).
export function loadTree(path, params, diff = false, opts = {}) {
  const u = url(path, params);
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject, url: u });
    theWorker().postMessage({ id, url: u, diff, tenant, hideKernel: !!opts.hideKernel });
  });
}
