// pprof.js - the zoomed flame graph as a gzip'd profile.proto, for the
// download of what is on screen (docs/web-ui.md).  The tree has no
// addresses or mappings, so the profile has none either: one sample per
// frame with self value in the zoomed subtree (its stack leaf first, the
// path above the zoomed frame included, as the folded download writes
// it), one location per function, file and line, the type's sample and
// period types.  Unzoomed, the page links the server's own pprof instead
// (addresses, mappings, every sample type).  Encoded by hand (varints and
// length-delimited fields of profile.proto), gzip'd with the browser's
// CompressionStream: nothing to load.

// A protobuf message being written: bytes in a plain array.
class Message {
  constructor() {
    this.b = [];
  }

  varint(n) {
    // numbers past 2^32 (nanoseconds): no 32-bit bit operations
    while (n >= 128) {
      this.b.push((n % 128) | 128);
      n = Math.floor(n / 128);
    }
    this.b.push(n);
    return this;
  }

  uint(field, n) {
    return this.varint(field * 8).varint(n);
  }

  bytes(field, bytes) {
    this.varint(field * 8 + 2).varint(bytes.length);
    for (const x of bytes) this.b.push(x);
    return this;
  }

  message(field, m) {
    return this.bytes(field, m.b);
  }

  packed(field, nums) {
    const m = new Message();
    for (const n of nums) m.varint(n);
    return this.message(field, m);
  }
}

// The profile.proto bytes of node z's subtree of flattened tree d (plain,
// not a diff); type: the profile type ID (name:sample:unit:period:unit).
export function subtreeProfile(d, z, type) {
  const [, st = 'samples', su = 'count', pt = st, pu = su] = (type || '').split(':');
  const strings = [''], sidx = new Map([['', 0]]);
  const s = (text) => {
    if (!sidx.has(text)) {
      sidx.set(text, strings.length);
      strings.push(text);
    }
    return sidx.get(text);
  };
  const funcs = new Map(), locs = new Map(), out = new Message();
  out.message(1, new Message().uint(1, s(st)).uint(2, s(su)));
  const locOf = (i) => {
    const name = d.names[d.name[i]], file = d.file[i] >= 0 ? d.files[d.file[i]] : '';
    const fk = name + '\0' + file, lk = fk + '\0' + d.line[i];
    if (!funcs.has(fk)) {
      funcs.set(fk, funcs.size + 1);
      out.message(5, new Message().uint(1, funcs.size).uint(2, s(name)).uint(3, s(name)).uint(4, s(file)));
    }
    if (!locs.has(lk)) {
      locs.set(lk, locs.size + 1);
      const line = new Message().uint(1, funcs.get(fk));
      if (d.line[i] > 0) line.uint(2, d.line[i]);
      out.message(4, new Message().uint(1, locs.size).message(4, line));
    }
    return locs.get(lk);
  };
  for (let i = z; i < d.end[z]; i++) {
    if (i === 0 || !(d.vself[i] > 0)) continue;
    const stack = [];
    for (let a = i; a > 0; a = d.parent[a]) stack.push(locOf(a));
    out.message(2, new Message().packed(1, stack).packed(2, [Math.round(d.vself[i])]));
  }
  const period = new Message().uint(1, s(pt)).uint(2, s(pu)); // its strings before the table
  for (const text of strings) out.bytes(6, new TextEncoder().encode(text));
  if (d.from_ms) out.uint(9, d.from_ms * 1e6);
  if (d.from_ms && d.to_ms > d.from_ms) out.uint(10, (d.to_ms - d.from_ms) * 1e6);
  out.message(11, period);
  if (d.period) out.uint(12, d.period);
  return new Uint8Array(out.b);
}

// bytes gzip'd, as a Blob.
export async function gzipBlob(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Blob([await new Response(stream).arrayBuffer()], { type: 'application/octet-stream' });
}
