// format.js - numbers, units, percentages and times as the UI shows them.

export function pct(x, digits = 2) {
  if (!isFinite(x)) return '–';
  return (x * 100).toFixed(digits) + '%';
}

export function points(x) {
  const s = (x * 100).toFixed(2);
  return (x > 0 ? '+' : '') + s;
}

// A value in the profile type's unit, readable: 1.23 s, 45.6 MiB, 1,234.
export function value(v, unit) {
  if (unit === 'nanoseconds') {
    const a = Math.abs(v);
    if (a >= 3600e9) return (v / 3600e9).toFixed(2) + ' h';
    if (a >= 60e9) return (v / 60e9).toFixed(2) + ' min';
    if (a >= 1e9) return (v / 1e9).toFixed(2) + ' s';
    if (a >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
    if (a >= 1e3) return (v / 1e3).toFixed(2) + ' µs';
    return v.toFixed(0) + ' ns';
  }
  if (unit === 'bytes') {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0, x = v;
    while (Math.abs(x) >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (i ? x.toFixed(2) : x.toFixed(0)) + ' ' + u[i];
  }
  return count(v);
}

export function count(v) {
  return Math.round(v).toLocaleString('en-US');
}

// Samples behind a value: the value over the period when the period is in
// the value's unit (10 ms of cpu a sample), else the value itself.
export function samples(v, data) {
  if (data && data.period > 0 && data.unit === 'nanoseconds') return v / data.period;
  return v;
}

export function time(ms) {
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function shortTime(ms, spanMs) {
  const d = new Date(ms);
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  if (spanMs > 2 * 86400e3) return `${d.getUTCMonth() + 1}/${d.getUTCDate()} ${hh}:${mm}`;
  return `${hh}:${mm}`;
}

export function bytes(n) {
  return value(n, 'bytes');
}

// A user's search text as a regex (case-insensitive); an invalid one is
// taken literally rather than refused.
export function searchRegex(text) {
  if (!text) return null;
  try {
    return new RegExp(text, 'i');
  } catch (e) {
    return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
}
