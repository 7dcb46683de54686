// workload.cc - the CPU-bound workload of the agent's overhead benchmark
// (bench/agent/run.py): C++ with libstdc++ and libc, built by run.py with
// -O2 -fomit-frame-pointer, so its stacks (through std::sort,
// std::map, std::string and libc's memcpy/strlen) can only be walked by
// unwind tables.  It does a fixed amount of work (argv[1] rounds) and
// exits; run.py reads its CPU time from wait4().
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

static volatile unsigned long sink;

__attribute__((noinline)) static void sort_part(std::vector<unsigned> &v, unsigned seed)
{
	for (auto &x : v)
		x = seed = seed * 1103515245u + 12345u;
	std::sort(v.begin(), v.end());
	sink += v[v.size() / 2];
}

__attribute__((noinline)) static void map_part(unsigned seed)
{
	std::map<std::string, unsigned> m;

	for (int i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		m[std::to_string(seed % 50000)] += i;
	}
	sink += m.size();
}

__attribute__((noinline)) static void string_part(unsigned seed)
{
	std::string s;

	for (int i = 0; i < 2000; i++) {
		s += std::to_string(seed + i);
		if (s.size() > 4096)
			s.erase(0, 2048);
	}
	sink += s.size();
}

__attribute__((noinline)) static void one_round(std::vector<unsigned> &v, unsigned r)
{
	sort_part(v, r);
	map_part(r);
	string_part(r);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	std::vector<unsigned> v(200000);

	for (int r = 0; r < rounds; r++)
		one_round(v, (unsigned)r);
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
