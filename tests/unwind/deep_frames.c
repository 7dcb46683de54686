/*
 * deep_frames.c - the unwinding fixture, built with -O2 -fomit-frame-pointer
 * (tests/unwind/CMakeLists.txt): a known deep call chain whose frames
 * exercise every common row kind, stopped by gdb in ember_stop_here().
 *
 *   main -> big_frame (a 40 KB frame: CFA offsets beyond s16)
 *        -> recurse x5 (rsp-based frames of two sizes)
 *        -> with_vla (a VLA: rbp-based CFA even without frame pointers)
 *        -> qsort in libc.so.6 -> by_value (a callback: libc frames
 *           in the middle of the stack)
 *        -> raise(SIGUSR1) -> on_signal (a signal frame: __restore_rt)
 *        -> handler_chain x3 -> ember_stop_here
 *
 * tests/unwind/test_gdb_unwind.py compares the call chain gdb reports
 * with the one unwind_walk.c recovers from the compiled tables alone.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile int sink;

NOINLINE void ember_stop_here(int depth)
{
	sink += depth; /* gdb breaks here */
}

NOINLINE static int handler_chain(int n)
{
	volatile char pad[24 * (1 + n % 2)];

	pad[0] = (char)n;
	if (n == 0)
		ember_stop_here(pad[0]);
	else
		handler_chain(n - 1);
	return pad[0] + 1;
}

static void on_signal(int sig)
{
	sink += handler_chain(3) + sig;
}

static int calls;

NOINLINE static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (calls++ == 0)
		raise(SIGUSR1);
	return (x > y) - (x < y);
}

NOINLINE static int with_vla(int n)
{
	int v[n];

	for (int i = 0; i < n; i++)
		v[i] = n - i;
	qsort(v, (size_t)n, sizeof(v[0]), by_value);
	return v[0] + v[n - 1];
}

NOINLINE static int recurse(int n)
{
	volatile long pad[1 + (n & 1) * 6];

	pad[0] = n;
	if (n == 0)
		return with_vla(5 + (int)pad[0]) + 1;
	return recurse(n - 1) + (int)pad[0];
}

NOINLINE static int big_frame(int n)
{
	volatile char buf[40000];

	memset((char *)buf, n, sizeof(buf));
	return recurse(n) + buf[n];
}

int main(int argc, char **argv)
{
	(void)argv;
	signal(SIGUSR1, on_signal);
	printf("%d\n", big_frame(4 + argc));
	return 0;
}
