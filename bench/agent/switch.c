/* switch.c - the context-switch-heavy workloads of the agent's --off-cpu
 * benchmark (bench/agent/offcpu.py, docs/benchmarks.md), built there with
 * -O2 -pthread.  It does a fixed amount of work and exits; offcpu.py reads
 * its CPU time and context switches from wait4().
 *
 *   switch ROUNDS          two threads ping-pong a byte through two pipes,
 *                          1,000 round trips a round (every read blocks),
 *                          a little arithmetic per message, then one short
 *                          sleep (50 us) a round
 *   switch ROUNDS getpid   a getpid() system call loop, 100,000 calls a
 *                          round: what every system call of the host pays
 *                          with --off-cpu (its sys_exit program)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { TRIPS_PER_ROUND = 1000, CALLS_PER_ROUND = 100000 };

static volatile unsigned long sink;

struct pingpong {
	int to_peer[2];
	int to_main[2];
	long trips;
};

/* A little work per message, so the switches come with something to do. */
static __attribute__((noinline)) void switch_work(unsigned seed)
{
	for (int i = 0; i < 200; i++)
		seed = seed * 1103515245u + 12345u;
	sink += seed;
}

static __attribute__((noinline)) int switch_read_byte(int fd, char *c)
{
	return read(fd, c, 1) == 1 ? 0 : -1;
}

static void *switch_peer(void *arg)
{
	struct pingpong *pp = arg;
	char c;

	for (long i = 0; i < pp->trips; i++) {
		if (switch_read_byte(pp->to_peer[0], &c))
			break;
		switch_work((unsigned)i);
		if (write(pp->to_main[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static __attribute__((noinline)) void switch_nap(void)
{
	struct timespec ts = { 0, 50000 };

	nanosleep(&ts, NULL);
}

static int switch_run(long rounds)
{
	struct pingpong pp = { .trips = rounds * TRIPS_PER_ROUND };
	pthread_t peer;
	char c = 'x';

	if (pipe(pp.to_peer) || pipe(pp.to_main))
		return perror("pipe"), 1;
	if (pthread_create(&peer, NULL, switch_peer, &pp))
		return fputs("pthread_create failed\n", stderr), 1;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < TRIPS_PER_ROUND; i++) {
			if (write(pp.to_peer[1], &c, 1) != 1 || switch_read_byte(pp.to_main[0], &c))
				return perror("pipe"), 1;
			switch_work((unsigned)i);
		}
		switch_nap();
	}
	pthread_join(peer, NULL);
	return 0;
}

static int switch_getpid(long rounds)
{
	for (long i = 0; i < rounds * CALLS_PER_ROUND; i++)
		sink += syscall(SYS_getpid);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;

	if (argc > 2 && !strcmp(argv[2], "getpid"))
		return switch_getpid(rounds);
	return switch_run(rounds);
}
