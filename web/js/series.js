// series.js - the chart's totals over time (GET /api/v1/series) at a step
// that is a whole number of the data's period (docs/web-ui.md, "The
// chart").  Profiles come every 10 or 15 s; a step that is not a multiple
// of that period holds one profile in one point and two in the next, so
// a flat load draws as a saw.  The period is measured once per selection
// on a one-second grid of profile counts (a count is a point's sum over
// its average: two requests at that grid), near the selection's newest
// profile, and kept for the page's life.

import { getJSON, currentTenant } from './api.js';

const MIN_STEP = 10e3;          // the server's own smallest default step, ms
const PROBE_SPAN = 10 * 60e3;   // the one-second grid the period is measured on
const UNIT = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 };

// A time of the API's syntax (docs/http-api.md, "Conventions") in its
// parts: { ago } (ms before now), { epoch, perMs } (the number as written
// and its units a millisecond: seconds, ms, us or ns by its size) or
// { date } (epoch ms, NaN for what it cannot read).
export function timeParts(t) {
  t = String(t).trim();
  if (t === 'now') return { ago: 0 };
  const m = /^now-(\d+)([smhdw])$/.exec(t);
  if (m) return { ago: Number(m[1]) * UNIT[m[2]] };
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    return { epoch: n, perMs: n < 1e11 ? 1e-3 : n < 1e14 ? 1 : n < 1e17 ? 1e3 : 1e6 };
  }
  return { date: Date.parse(t) };
}

// The same time in epoch milliseconds, now being nowMs; NaN for what it
// cannot read.
export function timeMs(t, nowMs) {
  const p = timeParts(t);
  if ('ago' in p) return nowMs - p.ago;
  if ('epoch' in p) return p.epoch / p.perMs;
  return p.date;
}

// The step the server takes by default for a range of spanMs (the range
// over 240, at least 10 s), in whole seconds.
export function defaultStep(spanMs) {
  return Math.max(MIN_STEP, Math.ceil(spanMs / 240 / 1e3) * 1e3);
}

// The smallest whole number of periods at least wantMs (no period: wantMs).
export function alignStep(wantMs, periodMs) {
  if (!periodMs) return wantMs;
  return Math.max(1, Math.ceil(wantMs / periodMs)) * periodMs;
}

// The period of counts[] (profiles per one-second point) in points: the
// smallest lag at which the pattern repeats (nine in ten of the points
// where either side holds a profile equal), seen at least twice over the
// points from the first profile to the last; 0 when it does not repeat.
export function periodOf(counts) {
  let first = -1, last = -1, n = 0;
  counts.forEach((c, i) => {
    if (c > 0) {
      if (first < 0) first = i;
      last = i;
      n += c;
    }
  });
  if (n < 4) return 0;
  for (let lag = 1; 2 * lag <= last - first; lag++) {
    let same = 0, seen = 0;
    for (let i = first; i + lag <= last; i++) {
      if (!counts[i] && !counts[i + lag]) continue;
      seen++;
      if (counts[i] === counts[i + lag]) same++;
    }
    if (seen && same >= 0.9 * seen) return lag;
  }
  return 0;
}

// Profiles per point of a sum and an average answer on the same grid.
function counts(sum, avg) {
  const c = new Array(sum.points).fill(0);
  sum.series.forEach((s, k) => {
    const a = avg.series[k];
    for (let i = 0; i < c.length; i++) {
      const v = s.values[i] || 0, m = a ? a.values[i] || 0 : 0;
      c[i] += m > 0 ? Math.round(v / m) : v > 0 ? 1 : 0;
    }
  });
  return c;
}

// The newest point of doc holding a profile: its end (ms), or NaN.
function newest(doc) {
  let last = -1;
  for (const s of doc.series || [])
    for (let i = s.values.length - 1; i > last; i--) if (s.values[i]) { last = i; break; }
  return last < 0 ? NaN : doc.from_ms + (last + 1) * doc.step_ms;
}

// The data's period (ms) in the PROBE_SPAN before endMs, or 0.
async function measure(sel, endMs) {
  const probe = { type: sel.type, query: sel.query, from: String(Math.round(endMs - PROBE_SPAN)),
                  to: String(Math.round(endMs)), step: '1s' };
  const [sum, avg] = await Promise.all([getJSON('/api/v1/series', probe),
                                        getJSON('/api/v1/series', { ...probe, aggregation: 'average' })]);
  return periodOf(counts(sum, avg)) * 1e3;
}

export class SeriesSource {
  constructor() {
    this.periods = new Map(); // tenant|type|query -> period ms (0: none found)
  }

  // The series of sel ({type, query, from, to}, plus group_by, limit) at
  // a step aligned to the period of the selection's data: the answer,
  // with period_ms added (0: none found, the server's step kept).
  async load(sel, extra = {}) {
    const now = Date.now(), from = timeMs(sel.from, now), to = timeMs(sel.to, now);
    const key = `${currentTenant()}|${sel.type}|${sel.query}`;
    const base = { type: sel.type, query: sel.query, from: sel.from, to: sel.to, ...extra };
    if (!(to > from)) return { ...(await getJSON('/api/v1/series', base)), period_ms: 0 };
    const want = defaultStep(to - from);
    let period = this.periods.get(key), doc = null;
    if (period === undefined) {
      doc = await getJSON('/api/v1/series', { ...base, step: want + 'ms' });
      const end = newest(doc.series ? doc : { series: [] });
      period = isNaN(end) ? 0 : await measure(sel, end).catch(() => 0);
      if (!isNaN(end)) this.periods.set(key, period);
    }
    const step = alignStep(want, period);
    if (!doc || step !== want) doc = await getJSON('/api/v1/series', { ...base, step: step + 'ms' });
    return { ...doc, period_ms: period };
  }
}
