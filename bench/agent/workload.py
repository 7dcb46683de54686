"""The CPU-bound Python workload of the agent's overhead benchmark
(bench/agent/run.py --workload python), run with Debian's CPython 3.11.

Pure Python, a fixed amount of work (argv[1] rounds), then exit; run.py
reads its CPU time from wait4().  Each round recurses DEPTH calls deep
before it works, in the methods of a class, through a sort whose key is a
Python function (called back from C: Python, native, Python), so a sample
holds about 30 Python frames and the agent's walk of the interpreter's
frame chain has real depth to cover.
"""
import sys

DEPTH = 24


class Worker:
    def __init__(self, seed):
        self.seed = seed

    def next(self):
        self.seed = (self.seed * 1103515245 + 12345) & 0xFFFFFFFF
        return self.seed

    def sort_part(self):
        v = [self.next() for _ in range(20000)]
        v.sort(key=lambda x: x % 65521)
        return v[len(v) // 2]

    def map_part(self):
        m = {}
        for i in range(20000):
            k = str(self.next() % 50000)
            m[k] = m.get(k, 0) + i
        return len(m)

    def string_part(self):
        s = ""
        for i in range(2000):
            s += str(self.seed + i)
            if len(s) > 4096:
                s = s[2048:]
        return len(s)

    def run(self):
        return self.sort_part() + self.map_part() + self.string_part()


def descend(depth, seed):
    if depth == 0:
        return Worker(seed).run()
    return descend(depth - 1, seed)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    sink = 0
    for r in range(rounds):
        sink += descend(DEPTH, r)
    print(sink)


if __name__ == "__main__":
    main()
