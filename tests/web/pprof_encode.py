"""A small pprof (profile.proto) writer for the web UI's tests and its
benchmark: the fields Ember reads (sample types, samples, mappings with
build IDs, locations, lines, functions, string table, time, duration,
period), encoded by hand as protobuf (varints and length-delimited
fields), gzip'd as Go writes them.  No protobuf package needed.

    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=10_000_000)
    m = p.mapping(0x400000, 0x500000, "/app/shop", "ab12...")
    f = p.function("main", "/src/shop/main.c")
    loc = p.location(m, 0x401000, [(f, 12)])
    p.sample([loc_leaf, ..., loc_root], [3, 30_000_000])
    body = p.encode(time_ns, duration_ns)        # gzip'd bytes
"""
import gzip


def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vfield(field, n):
    return key(field, 0) + varint(n)


def bfield(field, data):
    return key(field, 2) + varint(len(data)) + data


def packed(field, nums):
    return bfield(field, b"".join(varint(n) for n in nums))


class Profile:
    def __init__(self, sample_types, period=0, period_type=None):
        self.strings = [""]
        self.index = {"": 0}
        self.sample_types = [(self.s(t), self.s(u)) for t, u in sample_types]
        pt = period_type or sample_types[-1]
        self.period_type = (self.s(pt[0]), self.s(pt[1]))
        self.period = period
        self.mappings, self.functions, self.locations, self.samples = [], [], [], []

    def s(self, text):
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def mapping(self, start, limit, filename, build_id=""):
        mid = len(self.mappings) + 1
        self.mappings.append(vfield(1, mid) + vfield(2, start) + vfield(3, limit) +
                             vfield(5, self.s(filename)) + vfield(6, self.s(build_id)) +
                             vfield(7, 1) + vfield(8, 1) + vfield(9, 1))
        return mid

    def function(self, name, filename="", start_line=0):
        fid = len(self.functions) + 1
        self.functions.append(vfield(1, fid) + vfield(2, self.s(name)) + vfield(3, self.s(name)) +
                              vfield(4, self.s(filename)) + vfield(5, start_line))
        return fid

    def location(self, mapping_id, address, lines=()):
        """lines: [(function_id, line)], innermost first; empty: an
        unsymbolized address, for the server to resolve (or not)."""
        lid = len(self.locations) + 1
        body = vfield(1, lid) + vfield(2, mapping_id) + vfield(3, address)
        for fid, line in lines:
            body += bfield(4, vfield(1, fid) + vfield(2, line))
        self.locations.append(body)
        return lid

    def sample(self, location_ids, values):
        """location_ids leaf first, as pprof orders them."""
        self.samples.append(packed(1, location_ids) + packed(2, values))

    def tables(self):
        """Mappings, locations, functions and strings, encoded once for as
        long as none is added (a benchmark's profiles share them)."""
        key = (len(self.mappings), len(self.locations), len(self.functions), len(self.strings))
        if getattr(self, "_tables", (None,))[0] != key:
            out = bytearray()
            for m in self.mappings:
                out += bfield(3, m)
            for loc in self.locations:
                out += bfield(4, loc)
            for f in self.functions:
                out += bfield(5, f)
            for s in self.strings:
                out += bfield(6, s.encode())
            self._tables = (key, bytes(out))
        return self._tables[1]

    def encode(self, time_ns=0, duration_ns=0):
        out = bytearray()
        for t, u in self.sample_types:
            out += bfield(1, vfield(1, t) + vfield(2, u))
        for s in self.samples:
            out += bfield(2, s)
        out += self.tables()
        if time_ns:
            out += vfield(9, time_ns)
        if duration_ns:
            out += vfield(10, duration_ns)
        out += bfield(11, vfield(1, self.period_type[0]) + vfield(2, self.period_type[1]))
        if self.period:
            out += vfield(12, self.period)
        return gzip.compress(bytes(out), compresslevel=1)
