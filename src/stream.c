/*
 * stream.c -- trace stream identifiers and the controller's functions:
 * create, start, stop, clear, shutdown, get_attr, get_status; fork.
 */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib.h"

pthread_mutex_t pt_ctl_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t pt_fork_gen;

static struct pt_trid trids[TRACE_SYS_MAX];
static uint32_t next_gen = 1;
static struct pt_clock_img proc_clock; /* calibrated once per process */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&pt_ctl_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&pt_ctl_lock);
}

static void slot_detach(unsigned s)
{
	struct pt_slot *sl = &pt_proc.slot[s];

	atomic_fetch_and(&pt_proc.live, ~(1u << s));
	atomic_fetch_and(&pt_proc.att, ~(1u << s));
	pt_slot_bump(sl);
}

/* In the child of a fork: streams stay with the parent, except that an
 * INHERITED stream goes on recording this process (with its own pid). */
static void atfork_child(void)
{
	pt_pid = getpid();
	pt_fork_gen++;
	pthread_mutex_init(&pt_ctl_lock, NULL);
	pt_record_atfork_child();
	pt_quiesce_atfork_child();
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_trid *t = &trids[i];
		atomic_store(&t->lock, 0);
		if (!t->in_use)
			continue;
		if (t->slot >= 0) {
			struct pt_slot *sl = &pt_proc.slot[t->slot];
			if (sl->inherit == POSIX_TRACE_INHERITED) {
				pt_slot_bump(sl); /* this thread's chunks are the parent's */
			} else {
				slot_detach((unsigned)t->slot);
				munmap(t->hdr, t->map_size);
			}
		}
		close(t->fd);
		pt_reader_free(&t->rd);
		t->in_use = 0;
	}
}

__attribute__((constructor)) static void stream_init(void)
{
	pt_pid = getpid();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void pt_lock_slow(pt_lock_t *l)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spins >= 64)
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}

int pt_trid_lock(trace_id_t trid, struct pt_trid **out)
{
	unsigned idx = (unsigned)trid & 0xffu, gen = (unsigned)trid >> 8;
	struct pt_trid *t;

	if (trid <= 0 || idx >= TRACE_SYS_MAX)
		return EINVAL;
	t = &trids[idx];
	pt_lock(&t->lock);
	if (!t->in_use || t->gen != gen || atomic_load(&t->dead) || t->fork_gen != pt_fork_gen) {
		pt_unlock(&t->lock);
		return EINVAL;
	}
	*out = t;
	return 0;
}

void pt_trid_unlock(struct pt_trid *t)
{
	pt_unlock(&t->lock);
}

static void attr_image(struct pt_attr_img *img, const trace_attr_t *a, int policy, int has_log)
{
	struct timespec now;

	memset(img, 0, sizeof *img);
	memcpy(img->name, a->__name, TRACE_NAME_MAX);
	img->name[TRACE_NAME_MAX - 1] = 0;
	strcpy(img->version, PT_VERSION_STRING);
	clock_gettime(CLOCK_REALTIME, &now);
	img->create_sec = now.tv_sec;
	img->create_nsec = now.tv_nsec;
	img->res_sec = a->__clock_res.tv_sec;
	img->res_nsec = a->__clock_res.tv_nsec;
	img->stream_size = a->__stream_size;
	img->max_data = a->__max_data_size;
	img->log_size = a->__log_size;
	img->stream_policy = policy;
	img->log_policy = a->__log_policy;
	img->inherit = a->__inherit;
	img->has_log = has_log;
}

void pt_trid_attrs(const struct pt_trid *t, trace_attr_t *a)
{
	const struct pt_attr_img *img = &t->attr;

	pt_attr_defaults(a);
	memcpy(a->__name, img->name, TRACE_NAME_MAX);
	a->__create_time.tv_sec = (time_t)img->create_sec;
	a->__create_time.tv_nsec = (long)img->create_nsec;
	a->__clock_res.tv_sec = (time_t)img->res_sec;
	a->__clock_res.tv_nsec = (long)img->res_nsec;
	a->__stream_size = img->stream_size;
	a->__max_data_size = img->max_data;
	a->__log_size = img->log_size;
	a->__stream_policy = img->stream_policy;
	a->__log_policy = img->log_policy;
	a->__inherit = img->inherit;
}

static int check_pid(pid_t pid)
{
	if (pid < 0)
		return ESRCH;
	if (pid == 0 || pid == getpid())
		return 0;
	if (kill(pid, 0) != 0)
		return errno == EPERM ? EPERM : ESRCH;
	return ENOSYS; /* tracing another process: not implemented yet */
}

/* Create a stream tracing this process; logfd < 0 for none. */
int pt_stream_create(pid_t pid, const trace_attr_t *attr, int logfd, trace_id_t *trid)
{
	trace_attr_t def;
	struct pt_attr_img img;
	struct pt_geom g;
	struct pt_trid *t = NULL;
	struct pt_hdr *h;
	int fd, rc, policy;
	unsigned s, i;

	if (!trid)
		return EINVAL;
	if (!attr) {
		posix_trace_attr_init(&def);
		attr = &def;
	} else if (!pt_attr_valid(attr)) {
		return EINVAL;
	}
	policy = attr->__stream_policy ? attr->__stream_policy
	                               : logfd >= 0 ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP;
	if (policy == POSIX_TRACE_FLUSH && logfd < 0)
		return EINVAL;
	if ((rc = check_pid(pid)) != 0)
		return rc;
	pt_quiesce_prepare();
	if ((rc = pt_geom_compute(&g, attr->__stream_size, attr->__max_data_size)) != 0)
		return rc;
	attr_image(&img, attr, policy, logfd >= 0);

	pthread_mutex_lock(&pt_ctl_lock);
	for (i = 0; i < TRACE_SYS_MAX && trids[i].in_use; i++)
		;
	uint32_t att = atomic_load(&pt_proc.att);
	for (s = 0; s < PT_SLOTS && (att >> s & 1); s++)
		;
	rc = EAGAIN;
	if (i == TRACE_SYS_MAX || s == PT_SLOTS)
		goto out;
	if ((rc = pt_segment_create(&g, &fd, &h)) != 0)
		goto out;
	if (!proc_clock.kind)
		pt_clock_calibrate(&proc_clock);
	{ /* the resolution the calibration measured, not a guess */
		struct timespec res;
		pt_clock_res(&proc_clock, &res);
		img.res_sec = res.tv_sec;
		img.res_nsec = res.tv_nsec;
	}
	pt_segment_init(h, &g, &img, &proc_clock);
	if (pt_segment_check(h, g.seg_size) != 0) { /* our own geometry, checked as a reader would */
		munmap(h, g.seg_size);
		close(fd);
		rc = ENOMEM;
		goto out;
	}
	pt_names_copy_registry((struct pt_name *)((char *)h + g.names_off));

	t = &trids[i];
	pt_lock(&t->lock);
	memset(&t->rd, 0, sizeof t->rd);
	t->hdr = h;
	pt_reader_reset(t);
	t->attr = img;
	pt_clock_load(&t->clk, &h->clk);
	pt_slot_fill(&t->view, h, g.seg_size);
	t->hdr = h;
	t->map_size = g.seg_size;
	t->fd = fd;
	t->slot = (int)s;
	t->typelist_pos = 0;
	t->fork_gen = pt_fork_gen;
	atomic_store(&t->dead, 0);
	t->gen = next_gen;
	next_gen = (next_gen + 1) & 0x7fffffu;
	if (!next_gen)
		next_gen = 1;
	t->in_use = 1;
	*trid = (trace_id_t)(t->gen << 8 | i);
	pt_unlock(&t->lock);

	/* a new generation on attach as on detach: a thread that was inside
	 * posix_trace_event during the last detach may hold a key made from the
	 * detach generation; it must not match this stream */
	pt_slot_fill(&pt_proc.slot[s], h, g.seg_size); /* field by field: the gen and */
	pt_slot_bump(&pt_proc.slot[s]);                 /* filter words are read racily */
	atomic_fetch_or_explicit(&pt_proc.att, 1u << s, memory_order_release);
	rc = 0;
out:
	pthread_mutex_unlock(&pt_ctl_lock);
	return rc;
}

PT_API int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr,
                              trace_id_t *restrict trid)
{
	return pt_stream_create(pid, attr, -1, trid);
}

PT_API int posix_trace_start(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	struct pt_hdr *h = t->hdr;
	uint32_t st = atomic_load(&h->state);
	if (!(st & (PT_ST_RUNNING | PT_ST_FULL))) {
		trace_event_set_t f;
		pt_filter_get(h, &f);
		pt_record_system((unsigned)t->slot, POSIX_TRACE_START, &f, sizeof f,
		                 __builtin_return_address(0));
		atomic_fetch_or(&h->state, PT_ST_RUNNING);
		atomic_fetch_or(&pt_proc.live, 1u << t->slot);
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
	struct pt_hdr *h = t->hdr;
	uint32_t st = atomic_load(&h->state);
	if (st & PT_ST_RUNNING) {
		int zero = 0;
		atomic_fetch_and(&h->state, ~PT_ST_RUNNING);
		atomic_fetch_and(&pt_proc.live, ~(1u << t->slot));
		pt_record_system((unsigned)t->slot, POSIX_TRACE_STOP, &zero, sizeof zero,
		                 __builtin_return_address(0));
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
	struct pt_hdr *h = t->hdr;
	uint32_t st = atomic_load(&h->state), nw;
	do {
		nw = (st & PT_ST_RUNNING) | ((PT_ST_EPOCH(st) + 1) << PT_ST_EPOCH_SHIFT);
	} while (!atomic_compare_exchange_weak(&h->state, &st, nw));
	if (!(nw & PT_ST_RUNNING))
		atomic_fetch_and(&pt_proc.live, ~(1u << t->slot));
	pt_pool_reset(&t->view);
	atomic_store(&h->overrun, 0);
	pt_reader_reset(t);
	pt_wake_readers(h);
	pt_trid_unlock(t);
	return 0;
}

/* Lock order: pt_ctl_lock before a trid's lock, never the reverse.  So
 * shutdown marks the id dead under its lock, detaches the slot under the
 * global lock, and only then tears the mapping down. */
PT_API int posix_trace_shutdown(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	struct pt_hdr *h = t->hdr;
	atomic_store(&t->dead, 1); /* from now on every call with trid fails */
	uint32_t st = atomic_load(&h->state);
	while (!atomic_compare_exchange_weak(&h->state, &st, (st & ~PT_ST_RUNNING) | PT_ST_DEAD))
		;
	pt_wake_readers(h);
	pt_trid_unlock(t);

	pthread_mutex_lock(&pt_ctl_lock);
	slot_detach((unsigned)t->slot);
	pthread_mutex_unlock(&pt_ctl_lock);

	if (pt_quiesce() == 0)
		munmap(h, t->map_size);
	else /* a thread may still be inside: leave it harmless memory */
		mmap(h, t->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);

	pt_lock(&t->lock);
	close(t->fd);
	pt_reader_free(&t->rd);
	t->hdr = NULL;
	t->in_use = 0;
	pt_unlock(&t->lock);
	return 0;
}

PT_API int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (attr)
		pt_trid_attrs(t, attr);
	else
		rc = EINVAL;
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *si)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (!si) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	struct pt_hdr *h = t->hdr;
	uint32_t st = atomic_load(&h->state);
	memset(si, 0, sizeof *si);
	si->posix_stream_status = st & PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	si->posix_stream_full_status = st & PT_ST_FULL ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
	si->posix_stream_overrun_status =
		atomic_exchange(&h->overrun, 0) ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
	si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	si->posix_stream_flush_error = 0;
	si->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
	si->posix_log_full_status = POSIX_TRACE_NOT_FULL;
	pt_trid_unlock(t);
	return 0;
}
