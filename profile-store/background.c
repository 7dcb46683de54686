/*
 * background.c - the store's compaction thread: every second (half the
 * head's age when that is shorter), or when an append finds the head
 * full, it seals the head when it is old or large enough, writes sealed
 * heads as blocks, merges partitions and applies the retention.  A
 * failure is logged and counted and tried again at the next tick: the
 * log still holds everything acknowledged.
 */
#include "pstore_compact.h"

#include <time.h>

static void *loop(void *arg)
{
	struct pstore *s = arg;

	pthread_mutex_lock(&s->bg_mu);
	while (!s->bg_stop) {
		struct timespec ts;

		int64_t tick = s->opts.head_max_age_ns / 2;

		if (tick > 1000000000 || tick <= 0)
			tick = 1000000000;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += tick;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		if (!s->bg_kick)
			pthread_cond_timedwait(&s->bg_cv, &s->bg_mu, &ts);
		if (s->bg_stop)
			break;
		s->bg_kick = false;
		pthread_mutex_unlock(&s->bg_mu);
		pstore_compact_pass(s, true);
		pthread_mutex_lock(&s->bg_mu);
	}
	pthread_mutex_unlock(&s->bg_mu);
	return NULL;
}

int pstore_background_start(struct pstore *s)
{
	int err = pthread_create(&s->bg, NULL, loop, s);

	if (err)
		return -err;
	s->has_bg = true;
	return 0;
}

void pstore_background_stop(struct pstore *s)
{
	if (!s->has_bg)
		return;
	pthread_mutex_lock(&s->bg_mu);
	s->bg_stop = true;
	pthread_cond_signal(&s->bg_cv);
	pthread_mutex_unlock(&s->bg_mu);
	pthread_join(s->bg, NULL);
	s->has_bg = false;
}

void pstore_background_kick(struct pstore *s)
{
	pthread_mutex_lock(&s->bg_mu);
	s->bg_kick = true;
	pthread_cond_signal(&s->bg_cv);
	pthread_mutex_unlock(&s->bg_mu);
}
