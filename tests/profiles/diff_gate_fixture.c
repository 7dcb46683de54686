/*
 * diff_gate_fixture.c - the program whose two versions
 * tests/profiles/test_diff_gate.py profiles: a request loop of three
 * functions, CHECKSUM_WORK setting the third's cost (version 2 makes it
 * four times slower).  It profiles itself as a CPU profiler does, with
 * real samples: ITIMER_PROF delivers SIGPROF every millisecond of CPU
 * time and the handler counts the function running then (each marks
 * itself on entry), until SAMPLES samples; then it prints them as folded
 * stacks, "main;serve;FUNCTION COUNT".  Each call runs for several
 * milliseconds, longer than the kernel's tick that CPU-time timers fire
 * on, so the samples do not alias with the loop: two runs of one version
 * differ by less than a binomial count's noise.
 *
 *     cc -O1 -o v1 diff_gate_fixture.c && ./v1 SAMPLES
 *     cc -O1 -DCHECKSUM_WORK=10000000 -o v2 diff_gate_fixture.c
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#ifndef CHECKSUM_WORK
#define CHECKSUM_WORK 2500000
#endif

#define PHASE_WORK 10000000

enum { F_PARSE, F_ENCODE, F_CHECKSUM, F_N };
static const char *const names[F_N] = { "parse", "encode", "checksum" };
static volatile sig_atomic_t running, counts[F_N], total;
static volatile unsigned long sink;

static void on_prof(int sig)
{
	(void)sig;
	counts[running]++;
	total++;
}

static void spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	sink = x;
}

static void parse(void)
{
	running = F_PARSE;
	spin(PHASE_WORK);
}

static void encode(void)
{
	running = F_ENCODE;
	spin(PHASE_WORK);
}

static void checksum(void)
{
	running = F_CHECKSUM;
	spin(CHECKSUM_WORK);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } }, off;
	int want = argc > 1 ? atoi(argv[1]) : 200;

	memset(&sa, 0, sizeof(sa));
	memset(&off, 0, sizeof(off));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &every_ms, NULL)) {
		perror("diff_gate_fixture: SIGPROF");
		return 1;
	}
	while (total < want) {
		parse();
		encode();
		checksum();
	}
	setitimer(ITIMER_PROF, &off, NULL);
	for (int f = 0; f < F_N; f++)
		printf("main;serve;%s %d\n", names[f], (int)counts[f]);
	return 0;
}
