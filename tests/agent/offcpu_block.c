/*
 * offcpu_block.c - the known workload of test_agent_offcpu.py: a worker
 * thread named "offcpu-worker" alternates spin_here() (on CPU) and
 * block_here() (a nanosleep of BLOCK_MS) for SECONDS, blocked for SHARE
 * of the time, from the moment a byte arrives on its standard input (so
 * the test starts it before the agent, and its work after), and prints
 * the nanoseconds it really spent in block_here() (measured around each
 * sleep), its blocks, and how many of them ended on another CPU.
 *
 *   offcpu_block SECONDS SHARE BLOCK_US [migrate|lead]
 *
 * migrate: the main thread moves the worker to the other CPU while it
 * sleeps (sched_setaffinity of its thread ID), so its blocks end on a
 * CPU other than the one they began on.  lead: the main thread first
 * blocks for two seconds in 50 ms naps (blocks of another thread, which
 * the test does not count) before it starts the worker.  Built by the
 * test with -fno-omit-frame-pointer -g.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds, share;
static long block_us;
static uint64_t blocks, moved;
static atomic_int sleeping, worker_tid, done;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void spin_here(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		sink++;
}

/* One block of block_us; returns the nanoseconds it really took. */
__attribute__((noinline)) static uint64_t block_here(void)
{
	struct timespec d = { .tv_sec = block_us / 1000000, .tv_nsec = (block_us % 1000000) * 1000 };
	int cpu = sched_getcpu();
	uint64_t t0 = now_ns();

	atomic_store(&sleeping, 1);
	nanosleep(&d, NULL);
	atomic_store(&sleeping, 0);
	t0 = now_ns() - t0;
	blocks++;
	moved += sched_getcpu() != cpu;
	return t0;
}

static void *worker(void *arg)
{
	uint64_t end, blocked = 0, spin = (uint64_t)(block_us * 1e3 * (1 - share) / share);

	(void)arg;
	atomic_store(&worker_tid, (int)syscall(SYS_gettid));
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end) {
		spin_here(spin);
		blocked += block_here();
	}
	printf("blocked_ns %llu blocks %llu moved %llu\n", (unsigned long long)blocked,
	       (unsigned long long)blocks, (unsigned long long)moved);
	fflush(stdout);
	atomic_store(&done, 1);
	return NULL;
}

/* Move the worker to the other CPU each time it sleeps. */
static void migrate(void)
{
	int cpu = 0;

	while (!atomic_load(&done)) {
		struct timespec d = { .tv_nsec = 200000 };
		cpu_set_t set;

		if (atomic_load(&sleeping) && atomic_load(&worker_tid)) {
			cpu = !cpu;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(atomic_load(&worker_tid), sizeof(set), &set);
			while (atomic_load(&sleeping) && !atomic_load(&done))
				nanosleep(&d, NULL);
		}
		nanosleep(&d, NULL);
	}
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 4) {
		fprintf(stderr, "usage: offcpu_block SECONDS SHARE BLOCK_US [migrate|lead]\n");
		return 2;
	}
	seconds = atof(argv[1]);
	share = atof(argv[2]);
	block_us = atol(argv[3]);
	if (getchar() == EOF)
		return 1;
	for (int i = 0; argc > 4 && !strcmp(argv[4], "lead") && i < 40; i++) {
		struct timespec d = { .tv_nsec = 50000000 };

		nanosleep(&d, NULL);
	}
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_setname_np(t, "offcpu-worker");
	if (argc > 4 && !strcmp(argv[4], "migrate"))
		migrate();
	pthread_join(t, NULL);
	return 0;
}
