"""A small pprof (profile.proto) encoder for the profile tests.

    p = Profile(types=[("samples", "count"), ("cpu", "nanoseconds")],
                period=("cpu", "nanoseconds", 10_000_000), time_ns=..., duration_ns=...)
    m = p.mapping(0x555555554000, 0x555555600000, 0, "/usr/bin/app", build_id="ab12...")
    p.sample(["main", "work", "hot"], [3, 30_000_000])          # root first, named frames
    p.sample(["main", (m, 0x555555555139)], [1, 10_000_000])     # a raw address in m
    data = p.encode(gzip=True)

Field numbers are those of github.com/google/pprof's profile.proto.  Only
what the tests need: string table, sample types, samples with labels,
mappings, locations (named through one function each, or raw addresses),
functions, time, duration, period.
"""
import gzip as gz


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _int(field, v):
    return _key(field, 0) + _varint(v) if v else b""


def _bytes(field, b):
    return _key(field, 2) + _varint(len(b)) + b


def _packed(field, vals):
    return _bytes(field, b"".join(_varint(v) for v in vals)) if vals else b""


class Profile:
    def __init__(self, types=(("samples", "count"), ("cpu", "nanoseconds")),
                 period=("cpu", "nanoseconds", 10_000_000), time_ns=0, duration_ns=0):
        self.strings = [""]
        self.index = {"": 0}
        self.types = [(self.s(t), self.s(u)) for t, u in types]
        self.period = (self.s(period[0]), self.s(period[1]), period[2]) if period else None
        self.time_ns, self.duration_ns = time_ns, duration_ns
        self.mappings, self.functions, self.locations, self.samples = [], {}, {}, []

    def s(self, text):
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def mapping(self, start, limit, offset, filename, build_id=""):
        self.mappings.append((len(self.mappings) + 1, start, limit, offset, self.s(filename),
                              self.s(build_id)))
        return len(self.mappings)

    def _func(self, name, filename):
        key = (name, filename)
        if key not in self.functions:
            self.functions[key] = (len(self.functions) + 1, self.s(name), self.s(filename))
        return self.functions[key][0]

    def _loc(self, frame):
        if frame not in self.locations:
            lid = len(self.locations) + 1
            if isinstance(frame, tuple):  # (mapping id, address): unsymbolized
                self.locations[frame] = (lid, frame[0], frame[1], None)
            else:
                self.locations[frame] = (lid, 0, 0, self._func(frame, frame + ".c"))
        return self.locations[frame][0]

    def sample(self, stack, values, labels=None):
        """stack root first; frames are names or (mapping id, address)."""
        ids = [self._loc(f) for f in reversed(stack)]  # leaf first
        self.samples.append((ids, list(values), dict(labels or {})))

    def encode(self, gzip=False):
        out = bytearray()
        for t, u in self.types:
            out += _bytes(1, _int(1, t) + _int(2, u))
        for ids, values, labels in self.samples:
            body = _packed(1, ids) + _packed(2, values)
            for k, v in labels.items():
                body += _bytes(3, _int(1, self.s(k)) + (_int(2, self.s(v)) if isinstance(v, str)
                                                        else _int(3, v)))
            out += _bytes(2, body)
        for mid, start, limit, off, fname, bid in self.mappings:
            out += _bytes(3, _int(1, mid) + _int(2, start) + _int(3, limit) + _int(4, off) +
                          _int(5, fname) + _int(6, bid))
        for lid, mid, addr, fid in self.locations.values():
            body = _int(1, lid) + _int(2, mid) + _int(3, addr)
            if fid:
                body += _bytes(4, _int(1, fid) + _int(2, 1))
            out += _bytes(4, body)
        for fid, name, fname in self.functions.values():
            out += _bytes(5, _int(1, fid) + _int(2, name) + _int(3, name) + _int(4, fname))
        for text in self.strings:
            out += _bytes(6, text.encode())
        out += _int(9, self.time_ns) + _int(10, self.duration_ns)
        if self.period:
            out += _bytes(11, _int(1, self.period[0]) + _int(2, self.period[1]))
            out += _int(12, self.period[2])
        return gz.compress(bytes(out), 1) if gzip else bytes(out)


def cpu_profile(stacks, time_ns=0, labels=None, period=10_000_000):
    """A Go-style CPU profile: stacks {"a;b;c": count} (root first)."""
    p = Profile(time_ns=time_ns, duration_ns=10_000_000_000, period=("cpu", "nanoseconds", period))
    for stack, n in stacks.items():
        p.sample(stack.split(";"), [n, n * period], labels)
    return p
