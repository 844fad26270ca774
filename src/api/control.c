/*
 * control.c -- the trace control functions on a live stream: start, stop,
 * clear, flush, shutdown.  (get_attr and get_status, for a log too, are
 * status.c.)
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "api.h"

/* Tell the traced process (through its control segment) that slot bits
 * were set or cleared, or that something else changed. */
static void notify(struct pt_trid *t, uint32_t set, uint32_t clear)
{
	if (t->slot >= 0)
		pt_ctl_bump(t->s.tctl, set << t->slot, clear << t->slot);
}

PT_API int posix_trace_start(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	struct pt_hdr *h = t->s.hdr;
	uint32_t st = atomic_load(&h->state);
	if (!(st & (PT_ST_RUNNING | PT_ST_AUTOSTOP))) {
		trace_event_set_t f;
		pt_filter_get(h, &f);
		pt_record_system(&t->s, POSIX_TRACE_START, &f, sizeof f, __builtin_return_address(0), 0);
		atomic_fetch_or(&h->state, PT_ST_RUNNING);
		if (t->slot >= 0) /* its share of the wanted bitmap, before the live bit */
			pt_ctl_slot_want(t->s.tctl, (unsigned)t->slot, h->filter);
		notify(t, 1, 0);
		if (t->tctl_own) /* map it now, not in the first event (which may */
			pt_resync(); /* be a signal handler interrupting a resync) */
		pt_wake_readers(h);
	}
	pt_trid_unlock(t);
	return 0;
}

/* Stopping a LOOP stream that wrapped (RUNNING and FULL) is allowed: only a
 * stream that stopped itself because it was full ignores start and stop. */
PT_API int posix_trace_stop(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	struct pt_hdr *h = t->s.hdr;
	uint32_t st = atomic_load(&h->state);
	if (st & PT_ST_RUNNING) {
		int zero = 0;
		atomic_fetch_and(&h->state, ~PT_ST_RUNNING);
		notify(t, 0, 1);
		pt_record_system(&t->s, POSIX_TRACE_STOP, &zero, sizeof zero, __builtin_return_address(0), 0);
		pt_wake_readers(h);
	}
	pt_trid_unlock(t);
	return 0;
}

PT_API int posix_trace_clear(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	struct pt_hdr *h = t->s.hdr;
	uint32_t st = atomic_load(&h->state), nw;
	do {
		nw = (st & PT_ST_RUNNING) | ((PT_ST_EPOCH(st) + 1) << PT_ST_EPOCH_SHIFT);
	} while (!atomic_compare_exchange_weak(&h->state, &st, nw));
	if (!(nw & PT_ST_RUNNING))
		notify(t, 0, 1);
	pt_pool_reset(&t->s.view);
	atomic_store(&h->overrun, 0);
	pt_reader_reset(&t->s);
	if (t->s.fl) /* and the log, before the flusher writes anything more */
		pt_flusher_clear(&t->s);
	pt_wake_readers(h);
	pt_trid_unlock(t);
	return 0;
}

/* Lock order: pt_trid_table_lock before a trid's lock, never the reverse.  So
 * shutdown marks the id dead under its lock, frees the control slot under
 * the global lock, and only then tears the mapping down.  The traced
 * process drops the stream at its next event; the segment's memory is
 * freed at once (a late write can only touch a page of a dead stream). */
PT_API int posix_trace_shutdown(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t), log_rc = 0;

	if (rc)
		return rc;
	if (t->s.fl) { /* everything not yet in the log goes there first */
		if (pt_flusher_claim(&t->s)) { /* another thread is shutting it down */
			pt_trid_unlock(t);
			return EINVAL;
		}
		struct pt_hdr *hh = t->s.hdr; /* stopped "as if posix_trace_stop()" */
		int stop = (atomic_load(&hh->state) & PT_ST_RUNNING) != 0;
		if (stop) { /* (the flusher records STOP: it can make room for it) */
			atomic_fetch_and(&hh->state, ~PT_ST_RUNNING);
			notify(t, 0, 1);
		}
		pt_trid_unlock(t);
		log_rc = pt_flusher_stop(&t->s, stop, __builtin_return_address(0));
		if ((rc = pt_trid_lock(trid, &t)) != 0)
			return rc;
	}
	struct pt_hdr *h = t->s.hdr;
	atomic_store(&t->dead, 1); /* from now on every call with trid fails */
	uint32_t st = atomic_load(&h->state);
	while (!atomic_compare_exchange_weak(&h->state, &st, (st & ~PT_ST_RUNNING) | PT_ST_DEAD))
		;
	pt_wake_readers(h);
	pt_trid_unlock(t);

	pthread_mutex_lock(&pt_trid_table_lock);
	if (t->slot >= 0 && t->tctl_own)
		pt_slot_release(t->s.tctl, (unsigned)t->slot, t->ticket);
	else if (t->slot >= 0) /* another process: it unmaps the view at once */
		pt_slot_leave(t->s.tctl, (unsigned)t->slot, t->ticket);
	pthread_mutex_unlock(&pt_trid_table_lock);
	if (t->slot >= 0 && t->tctl_own && pt_quiesce() == 0)
		pt_detach_now((unsigned)t->slot, t->ticket); /* no thread can be using it */

	pt_lock(&t->s.lock);
	if (t->s.region_off && pt_fd_is(t->s.fd, &t->fd_id)) /* (not a file of the program's) */
		fallocate(t->s.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)t->s.region_off,
		          (off_t)t->s.map_size);
	pt_map_release(h, t->s.map_size);
	if (t->s.tctl && !t->tctl_own)
		munmap(t->s.tctl, PT_CTL_SIZE);
	pt_close_own(t->s.fd, &t->fd_id);      /* releases the liveness lock */
	pt_close_own(t->sys_fd, &t->sys_id); /* and the system-wide count */
	pt_reader_free(&t->s.rd);
	pt_clock_free(&t->s.clk);
	t->s.hdr = NULL;
	t->s.tctl = NULL;
	t->in_use = 0;
	pt_unlock(&t->s.lock);
	return log_rc == EFBIG || log_rc == ENOSPC || log_rc == EIO ? log_rc : 0;
}

PT_API int posix_trace_flush(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	rc = t->s.fl ? pt_flusher_request(&t->s) : EINVAL; /* EINVAL: not a stream with a log */
	pt_trid_unlock(t);
	return rc;
}
