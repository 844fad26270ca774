/*
 * getnext.c -- posix_trace_getnext_event, timedgetnext and trygetnext: the
 * analyzer's calls on a live stream (read through reader/read.c) or on a
 * log opened for reading (api/logfile.c).  A blocked reader sleeps on the
 * stream's futex, which writers wake (producer/event.c) when it says it
 * waits.
 */
#include <time.h>
#include "api.h"

#define WAIT_SLICE_MS 20 /* a missed wake-up costs at most this much latency */
/* A blocking reader that has just returned events and finds none polls
 * again after this long before it asks the writers to wake it: see
 * getnext(). */
#define POLL_MS 1

enum { MODE_BLOCK, MODE_TIMED, MODE_TRY };

static int getnext(trace_id_t trid, struct posix_trace_event_info *ev, void *data, size_t num,
                   size_t *dlen, int *unavail, int mode, const struct timespec *abs)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (!ev || !dlen || !unavail || (!data && num) ||
	    (t->s.kind == PT_KIND_LOG && mode != MODE_BLOCK) || t->s.fl) {
		/* a stream with a log is read by its flusher; a log only by getnext */
		pt_trid_unlock(t);
		return EINVAL;
	}
	if (t->s.kind == PT_KIND_LOG) {
		rc = pt_logopen_next(t, ev, data, num, dlen, unavail);
		pt_trid_unlock(t);
		return rc;
	}
	for (;;) {
		if (pt_read_next(&t->s, ev, data, num, dlen)) {
			*unavail = 0;
			t->s.rd.flowing = mode != MODE_TRY;
			break;
		}
		if (mode == MODE_TRY) {
			*unavail = 1;
			*dlen = 0;
			pt_clock_keep(&t->s.clk); /* (a reader polling: as one waiting) */
			break;
		}
		int ms = WAIT_SLICE_MS;
		if (mode == MODE_TIMED) {
			struct timespec now;
			if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000) {
				rc = EINVAL;
				break;
			}
			clock_gettime(CLOCK_REALTIME, &now);
			int64_t left; /* (a time centuries away: as far as can be told) */
			if (__builtin_sub_overflow((int64_t)abs->tv_sec, (int64_t)now.tv_sec, &left) ||
			    __builtin_mul_overflow(left, (int64_t)1000000000, &left) ||
			    __builtin_add_overflow(left, (int64_t)(abs->tv_nsec - now.tv_nsec), &left))
				left = abs->tv_sec < now.tv_sec ? -1 : INT64_MAX;
			if (left <= 0) {
				rc = ETIMEDOUT;
				break;
			}
			if (left < (int64_t)ms * 1000000)
				ms = (int)((left + 999999) / 1000000);
		}
		/* a writer in flight holds the events after it back: its commit
		 * wakes us (we count in waiters below), and we look again at
		 * least every POLL_MS, since the reader waits for it only so
		 * long (reader/read.c, in_flight) */
		if (t->s.rd.held && ms > POLL_MS)
			ms = POLL_MS;
		struct pt_hdr *h = t->s.hdr;
		uint32_t val = atomic_load(&h->futex);
		if (t->s.rd.flowing) {
			/* Events were coming and we have read them all.  Asked to
			 * wake us, a writer would make a futex call at its next
			 * event, and again each time we caught up: a syscall every
			 * few events, in the traced program (its cost per event
			 * went from 30 to 300 ns with a paced writer).  So look
			 * again after POLL_MS first, without asking: a writer that
			 * records steadily is then never asked; only after a poll
			 * that found nothing does the reader ask (below). */
			t->s.rd.flowing = 0;
			pt_trid_unlock(t);
			int w = pt_futex_wait(&h->futex, val, ms < POLL_MS ? ms : POLL_MS);
			if (pt_trid_lock(trid, &t))
				return EINVAL; /* shut down while we waited */
			if (w == EINTR) {
				rc = EINTR;
				break;
			}
			continue;
		}
		atomic_fetch_add(&h->waiters, 1);
		/* waiting: a calibration point when the last is 40 ms old, so
		 * the events that come after a long wait are not converted
		 * across all of it (clock.c) */
		pt_clock_keep(&t->s.clk);
		if (pt_read_next(&t->s, ev, data, num, dlen)) {
			*unavail = 0;
			break;
		}
		pt_trid_unlock(t);
		int w = pt_futex_wait(&h->futex, val, ms);
		if (pt_trid_lock(trid, &t))
			return EINVAL; /* shut down while we waited */
		if (w == EINTR) {
			rc = EINTR;
			break;
		}
	}
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                     void *restrict data, size_t num, size_t *restrict len,
                                     int *restrict unavailable)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_BLOCK, NULL);
}

PT_API int posix_trace_timedgetnext_event(trace_id_t trid,
                                          struct posix_trace_event_info *restrict ev,
                                          void *restrict data, size_t num,
                                          size_t *restrict len, int *restrict unavailable,
                                          const struct timespec *restrict abstime)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_TIMED, abstime);
}

PT_API int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                        void *restrict data, size_t num, size_t *restrict len,
                                        int *restrict unavailable)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_TRY, NULL);
}
