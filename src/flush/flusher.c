/*
 * flusher.c -- a stream with a log: the flusher thread that copies events
 * from the stream into the log (log/logwrite.c; runs of one writer's
 * records go the fast way, flushrun.c).  The POSIX calls that start it and
 * ask it for a flush are api/create.c and api/control.c.
 *
 * The flusher lives in the controller and is the stream's only reader.
 * With the FLUSH stream-full policy it drains the stream continuously, so
 * the traced process never waits for the disk (if the disk is slower than
 * the producer, events are dropped and counted, never waited for; unless
 * the stream is in no-loss mode: then writers wait for room, ring/pool.c).  With
 * LOOP or UNTIL_FULL the stream keeps its events until a flush:
 * posix_trace_flush() or shutdown.  A flush records FLUSH_START, copies
 * every event recorded so far, records FLUSH_STOP, and writes out the
 * partial block; posix_trace_get_status() reports it as in progress until
 * then.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "flush.h"

/* Events taken from the stream under t's lock, written out without it. */
#define STAGE_EV 256
#define STAGE_BYTES 65536u
struct staged {
	struct posix_trace_event_info ev;
	uint32_t off, len;
	int resume;    /* a RESUME: written with lost, the stream's loss count */
	uint64_t lost;
	char name[PT_NAME_SZ];
};
/* Entries of the map of loaded code taken under t's lock and written out
 * without it, at most this many at a time (32 KB) */
#define OBJ_BATCH 64

struct pt_flusher {
	struct pt_logw w;
	pthread_t thread;
	pthread_mutex_t mu;       /* the fields below */
	pthread_cond_t cv;
	uint64_t req, done;       /* flushes asked for, and finished */
	int stop;                 /* shutdown: a last flush, then finish */
	int stop_event;           /* ... which records STOP first, from stop_addr */
	void *stop_addr;
	int err;                  /* first error, until get_status reads it */
	int err_ret;              /* first error, for shutdown to return */
	int full, overrun;        /* the log's state, as of the last drain */
	int autoflush;            /* FLUSH policy: drain all the time */
	int claimed;              /* a shutdown is stopping it (under t's lock) */
	uint64_t clear_req;       /* posix_trace_clear() calls (under t's lock too) */
	uint64_t clear_done;      /* ... whose log the flusher reinitialized */
	uint64_t lost_base;       /* the stream's loss count when the log began */
	uint64_t ovr_seen;        /* lost + dropped when get_status last said so */
	uint64_t losses;          /* lost + dropped, as of the last write */
	uint64_t losses_cut;      /* ... of the parts finished (rotation) */
	_Atomic(struct pt_rotate *) rot; /* the log is cut into parts (rotate.c) */
	uint64_t named[PT_NIDS / 64];
	size_t objs_done;           /* entries of the map of loaded code in the log */
	struct pt_ext_obj *obuf;    /* ... and those to write next (OBJ_BATCH) */
	size_t obuf_n;
	unsigned char *buf;
	size_t cap;
	struct staged st[STAGE_EV]; /* a batch between the stream and the log */
	unsigned char *stage;       /* its payloads: STAGE_BYTES + one event */
	sigset_t mask;              /* the creating thread's signal mask */
	int quiet;                  /* the flusher holds every signal (its own thread's) */
};

static void note_error(struct pt_flusher *f, int rc)
{
	if (!rc)
		return;
	pthread_mutex_lock(&f->mu);
	if (!f->err)
		f->err = rc;
	if (!f->err_ret)
		f->err_ret = rc;
	pthread_mutex_unlock(&f->mu);
}

/* The log's state after a write, for get_status (flusher thread). */
static void log_state(struct pt_flusher *f)
{
	pthread_mutex_lock(&f->mu);
	f->full = f->w.full;
	f->losses = f->losses_cut + f->w.lost + f->w.dropped;
	f->overrun = f->losses > 0;
	pthread_mutex_unlock(&f->mu);
}


/* The entries the traced processes added to the map of loaded code since
 * the last time, to write into the log (locked): OBJ_BATCH at most into
 * f->obuf; 1 if more are waiting (the caller writes these and comes
 * back, before it takes any event: the entries precede the events after
 * them).  A batch, not all at once: a flusher that fell behind finds up
 * to the whole map's area waiting (2048 entries, 1 MB), and a buffer
 * grown to that stayed so for the rest of the recording (the recorder's
 * heap up to a high-water mark of its worst delay: record_gone). */
static int take_objs(struct pt_stream *t, struct pt_flusher *f)
{
	pt_objs_collect(t);
	size_t n = t->rd.nobjs - f->objs_done;
	if (n > OBJ_BATCH - f->obuf_n)
		n = OBJ_BATCH - f->obuf_n;
	memcpy(f->obuf + f->obuf_n, t->rd.objs + f->objs_done, n * sizeof *f->obuf);
	f->obuf_n += n;
	f->objs_done += n;
	if (f->objs_done < t->rd.nobjs)
		return 1;
	/* the log has them all now: those of processes gone need not stay
	 * (one pass once all are taken, as when they were taken at once) */
	f->objs_done -= pt_objs_retire(t, f->objs_done);
	return 0;
}

/* f->obuf into the log (t not locked). */
static void put_objs(struct pt_flusher *f)
{
	for (size_t i = 0; i < f->obuf_n; i++)
		note_error(f, pt_logw_obj(&f->w, &f->obuf[i]));
	f->obuf_n = 0;
}

static void name_all(struct pt_stream *t, struct pt_flusher *f);

/* The log writer's question (log/logsum.c, retiring the summary's
 * writers of processes gone): is process pid gone, with every event of it
 * taken from the stream?  Gone (no such process), and no chunk of the
 * stream open or sealed in its name: it takes none any more, and the
 * reader has taken all it wrote.  (The events taken may still be on
 * their way to the writer, staged here: the writer retires a writer only
 * at the checkpoint after, if it counted nothing more of it.)  Flusher
 * thread, no lock: shared memory and kill(). */
static int pid_final(void *ctx, int32_t pid)
{
	const struct pt_stream *t = ctx;
	const struct pt_view *v = &t->view;

	if (!pt_pool_gone(pid))
		return 0;
	for (uint32_t i = 0; i < v->nchunks; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		unsigned st = PT_SS_STATE(atomic_load_explicit(&ck->ss, memory_order_acquire));
		if ((st == PT_CK_OPEN || st == PT_CK_SEALED || st == PT_CK_BUSY) &&
		    atomic_load_explicit(&ck->pid, memory_order_relaxed) == pid)
			return 0;
	}
	return 1;
}

static void ask_final(struct pt_logw *w, struct pt_stream *t)
{
	w->pid_final = pid_final;
	w->pid_final_ctx = t;
}

/* The log writer's writes from this thread, the flusher, which holds
 * every signal (f->quiet), set no mask of their own (logwio.c); after
 * every new writer (at the start, a clear, a cut).  Flusher thread. */
static void quiet_writes(struct pt_flusher *f)
{
	f->w.quiet_set = f->quiet;
	f->w.quiet = pthread_self();
}

/* The stream's log writer on fd (at the start, after a clear, at a cut):
 * its CHUNK blocks as large as the stream's chunks (log/logwrite.c). */
static int log_init(const struct pt_stream *t, struct pt_logw *w, int fd)
{
	struct pt_logw_opt o = { .chunk_size = t->view.chunk_size };

	return pt_logw_init_opt(w, fd, &t->attr, t->attr.log_policy, t->attr.log_size, &o);
}

/* posix_trace_clear() on a stream with a LOOP or UNTIL_FULL log: the log
 * begins again "as if it were returning from posix_trace_create_withlog()"
 * (the file truncated, a new header, the block being built dropped), not
 * full, with no loss; then the map of loaded code and every event type,
 * as in a new log.  An APPEND log is kept as it is (the standard leaves
 * it unspecified; docs/implementation-defined.md).  Flusher thread, t not
 * locked; req: the clear it answers. */
static void log_reinit(struct pt_stream *t, struct pt_flusher *f, uint64_t req)
{
	struct pt_logw nw;
	int rc = 0;

	if (f->w.policy != POSIX_TRACE_APPEND &&
	    (rc = log_init(t, &nw, f->w.fd)) == 0) {
		pt_logw_free(&f->w);
		f->w = nw;
		ask_final(&f->w, t);
		quiet_writes(f);
		memset(f->named, 0, sizeof f->named);
		pt_lock(&t->lock);
		f->objs_done = 0; /* (the whole map again) */
		f->lost_base = t->rd.lost_at_resume; /* told in the old log */
		pt_unlock(&t->lock);
	}
	note_error(f, rc);
	pthread_mutex_lock(&f->mu);
	f->full = f->w.full;
	f->losses = f->w.lost + f->w.dropped;
	f->overrun = f->losses > 0;
	f->ovr_seen = f->losses;
	f->clear_done = req;
	pthread_mutex_unlock(&f->mu);
	if (!rc && f->w.policy != POSIX_TRACE_APPEND)
		name_all(t, f);
}

/* A clear not yet answered: its number, else 0 (t locked). */
static uint64_t clear_due(struct pt_flusher *f)
{
	pthread_mutex_lock(&f->mu);
	uint64_t req = f->clear_req != f->clear_done ? f->clear_req : 0;
	pthread_mutex_unlock(&f->mu);
	return req;
}

/* Is nothing left to write older than the latest event the log holds?
 * (A cut waits for that: pt_rotate_ready.)  Flusher thread, t not locked. */
static int caught_up(struct pt_stream *t, const struct pt_logw *w)
{
	if (!w->hi_ts)
		return 1;
	pt_lock(&t->lock);
	uint64_t e = pt_read_earliest(t);
	int64_t ns = e == UINT64_MAX ? INT64_MAX : pt_clock_ns(&t->clk, e);
	pt_unlock(&t->lock);
	return ns >= 0 && (uint64_t)ns >= w->hi_ts;
}

/* Rotation (rotate.c, pt_ext_log_rotate), at a block boundary: the part
 * being written is finished as a log is (its summary and END block, with
 * the losses told in it), and the log goes on in the next part, which
 * begins as a new log does: every event type, then the map of loaded
 * code, thread and process identities and payload descriptions that the
 * stream keeps (those of the processes still alive).  Flusher thread, t
 * not locked.  A part that cannot be made: the log goes on where it is. */
static void log_cut(struct pt_stream *t, struct pt_flusher *f, struct pt_rotate *r)
{
	struct posix_trace_status_info si;
	struct pt_logw nw;
	unsigned n;
	int fd, rc;

	pt_rotate_begin(r);
	if ((rc = pt_rotate_open(r, &fd, &n)) != 0) {
		note_error(f, rc);
		return;
	}
	if ((rc = log_init(t, &nw, fd)) != 0) {
		pt_rotate_abandon(r, fd, n);
		note_error(f, rc);
		return;
	}
	pt_lock(&t->lock);
	pt_rotate_status(t, &si);
	f->w.stream_lost = t->rd.lost_at_resume - f->lost_base; /* told in this part */
	f->lost_base = t->rd.lost_at_resume;
	/* the whole map again, but for what no event left in the stream
	 * needs (the old part has it all) */
	pt_objs_collect(t);
	f->objs_done -= pt_objs_retire_now(t, f->objs_done);
	f->objs_done = 0;
	pt_unlock(&t->lock);
	if (f->w.lost + f->w.dropped)
		si.posix_log_overrun_status = POSIX_TRACE_OVERRUN;
	f->losses_cut += f->w.lost + f->w.dropped;
	note_error(f, pt_logw_finish(&f->w, &si));
	uint64_t bytes = f->w.written, lost = f->w.stream_lost, dropped = f->w.lost + f->w.dropped;
	pt_logw_free(&f->w);
	f->w = nw;
	ask_final(&f->w, t);
	quiet_writes(f);
	pt_rotate_switched(r, bytes, lost, dropped, fd, n);
	memset(f->named, 0, sizeof f->named);
	name_all(t, f);
	int more;
	do {
		pt_lock(&t->lock);
		more = take_objs(t, f);
		pt_unlock(&t->lock);
		put_objs(f);
	} while (more);
}

/* Copy up to max events from the stream to the log.  1 if it stopped for
 * the limit (more may be waiting), 0 if the stream had no more.  A batch
 * of events is taken under t's lock and written without it: a slow log
 * must not hold up get_status, flush, stop...
 *
 * lazy (the flusher between flushes): also 0 once a run of fewer than
 * CHASE_MIN events has read every writer to the end of what it committed
 * in its open chunk, though they may have written more since.  The
 * flusher then sleeps until a chunk is sealed (pool.c wakes it) or its
 * timeout, and reads the rest of that chunk then.  Looking again at once
 * would follow the writer a few records a look: each look takes the lines
 * the writer is storing into, and each store of the writer takes them
 * back (a full-speed producer that the flusher followed so, 46 events a
 * look, was slowed to 1.5x the flight recorder; docs/performance.md).  A
 * longer run means writers that record faster than that: the flusher
 * goes on at once, as it does when it is behind. */
#define CHASE_MIN 1024
/* lazy, also: records in a chunk still open wait until they are this old
 * (pt_read_open_lag): a thread that records fast seals its chunk well
 * before (256 KiB in 10 ms is 26 MB/s), which then goes into the log
 * whole, as a CHUNK block, where the usual way would take its records one
 * by one, a few times the writer's work an event (docs/performance.md).
 * A slower thread's records go the usual way, at the next look after
 * that; a flush or a shutdown takes them all. */
#define OPEN_LAG_NS 10000000u
static int drain(struct pt_stream *t, struct pt_flusher *f, unsigned max, int lazy)
{
	struct staged *st = f->st; /* only the flusher thread drains */
	unsigned char *data = f->stage;
	unsigned taken = 0;
	int more = 0, synced = 0; /* the registry copied at most once a drain */

	for (;;) {
		unsigned n = 0;
		uint32_t used = 0;
		int got = 1, full = 0;

		pt_lock(&t->lock);
		struct pt_rotate *rt = atomic_load_explicit(&f->rot, memory_order_acquire);
		int closing = rt && pt_rotate_closing(rt); /* (in time order until the cut) */
		pt_read_open_lag(t, lazy && !closing ? OPEN_LAG_NS : 0);
		uint64_t clear = clear_due(f);
		if (clear) { /* every event in the log so far was recorded before */
			pt_unlock(&t->lock);
			log_reinit(t, f, clear);
			continue;
		}
		int objs_more = take_objs(t, f); /* (then the rest of them first) */
		while (!objs_more && n < STAGE_EV && used <= STAGE_BYTES && taken < max) {
			struct staged *e = &st[n];
			size_t len;
			if (n == 0) { /* nothing staged: a run goes straight into the log */
				int caught;
				f->w.chunk_until = rt ? pt_rotate_size(rt) : 0;
				f->w.chunk_apart = closing;
				unsigned k = pt_flush_run(t, &f->w, f->named, &full, &caught);
				taken += k;
				if (full)
					break;
				if (k && k < CHASE_MIN && caught && lazy) {
					got = 0;
					break;
				}
				if (k)
					continue;
			} else if (pt_read_run_ready(t)) {
				break; /* write the staged events out, then take the run */
			}
			if (!(got = pt_read_next(t, &e->ev, data + used, f->cap, &len)))
				break;
			trace_event_id_t id = e->ev.posix_event_id;
			e->off = used, e->len = (uint32_t)len, e->name[0] = 0;
			e->resume = id == POSIX_TRACE_RESUME;
			e->lost = t->rd.lost_at_resume - f->lost_base;
			if (id < PT_NIDS && !(f->named[id / 64] >> (id % 64) & 1) &&
			    pt_name_get(t->view.names, id, e->name) != 0 && t->tctl && !synced++) {
				pt_names_copy(t->view.names, pt_ctl_names(t->tctl));
				if (pt_name_get(t->view.names, id, e->name) != 0)
					e->name[0] = 0;
			} else if (id < PT_NIDS && !(f->named[id / 64] >> (id % 64) & 1) &&
			           synced > 1) {
				e->name[0] = 0; /* (pt_name_get left it empty) */
			}
			used += (uint32_t)len;
			n++, taken++;
		}
		/* room again (a store only when needed: writers read this line
		 * at every event) */
		if (!got && t->view.policy == POSIX_TRACE_FLUSH &&
		    (atomic_load_explicit(&t->hdr->state, memory_order_relaxed) & PT_ST_FULL))
			atomic_fetch_and(&t->hdr->state, ~PT_ST_FULL);
		pt_unlock(&t->lock);
		put_objs(f); /* before the events after them */
		for (unsigned i = 0; i < n; i++) {
			struct staged *e = &st[i];
			trace_event_id_t id = e->ev.posix_event_id;
			if (e->name[0] && pt_logw_name(&f->w, id, e->name) == 0)
				f->named[id / 64] |= 1ull << (id % 64);
			uint64_t ns = (uint64_t)e->ev.posix_timestamp.tv_sec * 1000000000u +
			              (uint64_t)e->ev.posix_timestamp.tv_nsec;
			uint64_t thread = (uint64_t)e->ev.posix_thread_id;
			uint64_t addr = (uint64_t)(uintptr_t)e->ev.posix_prog_address;
			int rc = e->resume
			       ? pt_logw_event_lost(&f->w, ns, e->ev.posix_pid, thread, addr, id, e->lost)
			       : pt_logw_event(&f->w, ns, e->ev.posix_pid, thread, addr, id,
			                       e->ev.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED,
			                       data + e->off, e->len);
			if (rc && rc != ENOSPC)
				note_error(f, rc);
			else if (rc == ENOSPC && !f->w.full)
				note_error(f, rc);
		}
		if (full) /* the block the run filled goes out without t's lock */
			note_error(f, pt_logw_sync(&f->w));
		if (rt && pt_rotate_due(rt, &f->w) && pt_rotate_ready(rt, caught_up(t, &f->w)))
			log_cut(t, f, rt); /* (a block boundary) */
		if (!got)
			break;
		if (taken >= max) {
			more = 1;
			break;
		}
	}
	log_state(f);
	return more;
}

/* Everything in the stream, but no more than it holds: writers faster
 * than the flusher must not keep it here for ever (a flush would never
 * end, and a flush asked for meanwhile, or a shutdown, would wait).  A
 * stream holds its size in sealed chunks plus the writers' open chunks,
 * each record at least 8 bytes: with room for 64 open chunks the bound
 * takes everything recorded before the call.  1: stopped at the bound,
 * more may be waiting.  lazy: as drain(). */
static int drain_all(struct pt_stream *t, struct pt_flusher *f, int lazy)
{
	uint64_t bound = (t->view.budget + 64ull * t->view.chunk_size) / PT_REC_SHORT;

	for (uint64_t done = 0; done < bound; done += 4096)
		if (!drain(t, f, 4096, lazy))
			return 0;
	return 1;
}

/* A system event of the flusher's own.  The stream may be full of events
 * not yet in the log, and the flusher is what empties it: it makes room
 * rather than lose the event.  (Writers that refill the stream as fast as
 * it empties get 64 tries; then it is recorded, or counted lost, as any
 * other.) */
static void record_own(struct pt_stream *t, struct pt_flusher *f, trace_event_id_t id,
                       const void *data, size_t len, void *addr)
{
	for (int tries = 0;; tries++) {
		pt_lock(&t->lock);
		int rc = pt_record_system(t, id, data, len, addr, tries < 64);
		pt_unlock(&t->lock);
		if (rc == 0 || tries >= 64)
			return;
		drain_all(t, f, 0);
	}
}

/* Every event type of the stream into the log, recorded or not: the
 * system types and every name the traced process or a controller
 * registered (the registry first copied into the stream's table, as
 * posix_trace_eventtypelist_getnext_id() does on the stream), so that a
 * reader of the log lists and names the types the stream did.  Names
 * already in the log are skipped (f->named); the table is in the
 * segment, which stays mapped while the flusher runs, and its entries
 * are published whole (shm/nametable.c), so it is read without t's lock and
 * no write to the log is made under it. */
static void name_all(struct pt_stream *t, struct pt_flusher *f)
{
	char name[PT_NAME_SZ];

	pt_lock(&t->lock);
	if (t->tctl)
		pt_names_copy(t->view.names, pt_ctl_names(t->tctl));
	pt_unlock(&t->lock);
	for (trace_event_id_t id = 0; id < PT_NIDS; id++)
		if (!(f->named[id / 64] >> (id % 64) & 1) &&
		    pt_name_get(t->view.names, id, name) == 0 && name[0] &&
		    pt_logw_name(&f->w, id, name) == 0)
			f->named[id / 64] |= 1ull << (id % 64);
}

/* One flush: (at shutdown, STOP,) FLUSH_START, everything so far,
 * FLUSH_STOP, every event type, the block out. */
static void flush_once(struct pt_stream *t, struct pt_flusher *f, int stop)
{
	drain_all(t, f, 0);
	if (stop && f->stop_event) {
		int zero = 0;
		record_own(t, f, POSIX_TRACE_STOP, &zero, sizeof zero, f->stop_addr);
	}
	record_own(t, f, POSIX_TRACE_FLUSH_START, NULL, 0, NULL);
	drain_all(t, f, 0);
	record_own(t, f, POSIX_TRACE_FLUSH_STOP, NULL, 0, NULL);
	drain_all(t, f, 0);
	name_all(t, f);
	note_error(f, pt_logw_sync(&f->w));
	log_state(f); /* the sync may have overwritten blocks (LOOP) */
}

/* ------------------------------------------------- the program's life
 *
 * A flusher is a thread of the library, and must never change how the
 * program lives or dies.  It runs with every signal blocked, so no handler
 * of the program runs on it and no signal the program blocks in its own
 * threads (to take it with sigwait, say) is taken here, or kills the
 * process by its default action here.  And it never keeps the process
 * alive: when the program's last thread has ended (main() ended with
 * pthread_exit(), then every other thread of the program), the C library
 * would have called exit(0); a flusher still running stops that, so it
 * calls exit(0) itself, and the exit destructor shuts the streams down as
 * it would have (api/create.c: everything recorded reaches the log).
 */
static _Atomic unsigned flushers; /* counted once running, uncounted before they end */
static _Atomic int exiting;       /* a flusher called exit() */

/* Field n (1-based, as proc(5) counts) of /proc/self/stat as a number, or
 * its first character in *state (n = 3); -1 if it cannot be read. */
static long long self_stat(int n, char *state)
{
	char buf[1024], *p;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -1;
	k = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	if (!(p = strrchr(buf, ')')))
		return -1;
	for (int f = 2; f < n; f++) /* p is at the space before field f + 1 */
		if (!(p = strchr(p + 1, ' ')))
			return -1;
	if (state) {
		*state = p[1];
		return 0;
	}
	return strtoll(p + 1, NULL, 10);
}

/* 1 when no thread of the program is left: the main thread has ended (a
 * zombie until the process ends: /proc/self/stat says Z), and, read after
 * that, every thread still counted is the main thread or a flusher.  Once
 * the main thread is gone only the program's threads could start new
 * ones, so a count read after that which finds none of them is final.
 * (The count of flushers is never above the flushers alive: a wrong
 * answer can only be 0.) */
static int program_ended(void)
{
	char state = 0;

	if (self_stat(3, &state) != 0 || state != 'Z')
		return 0;
	long long n = self_stat(20, NULL);
	return n > 0 && n <= 1 + (long long)atomic_load(&flushers);
}

/* At most every 100 ms, from the flusher's loop (no lock held).  The
 * exit handlers run with the signal mask of the thread that made the
 * stream, a thread of the program's, not with every signal blocked. */
static void check_program(struct pt_flusher *f, struct timespec *last)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - last->tv_sec) * 1000000000ll + (now.tv_nsec - last->tv_nsec) < 100000000)
		return;
	*last = now;
	if (!atomic_load(&exiting) && program_ended() && !atomic_exchange(&exiting, 1)) {
		f->w.quiet_set = f->quiet = 0; /* (the log's last writes hold their own) */
		pthread_sigmask(SIG_SETMASK, &f->mask, NULL);
		exit(0); /* what the C library would have done (this thread's stream: pt_flusher_stop) */
	}
}

static void *flusher_main(void *arg)
{
	struct pt_stream *t = arg;
	struct pt_flusher *f = t->fl;
	struct timespec last = { 0, 0 };

	pt_nowait = 1; /* (no-loss mode) a writer here, a signal handler, must
	                * not wait for the room only this thread makes */
	sigset_t held; /* every signal, from birth (pt_flusher_start) */
	f->quiet = pthread_sigmask(SIG_BLOCK, NULL, &held) == 0 &&
	           sigismember(&held, SIGXFSZ) == 1 && sigismember(&held, SIGPIPE) == 1;
	quiet_writes(f);
	name_all(t, f); /* the types known at creation lead the log */
	for (;;) {
		check_program(f, &last);
		/* a calibration point when the last is 40 ms old: the events
		 * this thread converts later are then never converted across
		 * more than that (clock.c) */
		pt_lock(&t->lock);
		pt_clock_keep(&t->clk);
		pt_unlock(&t->lock);
		pthread_mutex_lock(&f->mu);
		uint64_t req = f->req;
		int stop = f->stop;
		uint64_t clear = f->clear_req != f->clear_done ? f->clear_req : 0;
		pthread_mutex_unlock(&f->mu);
		if (clear && !f->autoflush) /* (a draining flusher does it in drain) */
			log_reinit(t, f, clear);
		int more = f->autoflush && drain_all(t, f, 1);
		if (req != f->done || stop) {
			flush_once(t, f, stop);
			pthread_mutex_lock(&f->mu);
			f->done = req;
			pthread_cond_broadcast(&f->cv);
			pthread_mutex_unlock(&f->mu);
		}
		if (stop) {
			atomic_fetch_sub(&flushers, 1);
			return NULL;
		}
		if (more)
			continue; /* (a flush or a shutdown asked for is served first) */
		if (f->autoflush) { /* sleep until writers wake us, or 20 ms */
			/* Registered first, then the futex word read, then the
			 * stream drained once more: a chunk sealed before the
			 * registration is drained here, one sealed after it
			 * finds waiters set and moves the word, so the wait
			 * returns at once.  (Read before registering, a chunk
			 * sealed between the two went unseen for 20 ms.) */
			struct pt_hdr *h = t->hdr;
			atomic_fetch_add(&h->waiters, 1);
			uint32_t val = atomic_load(&h->futex);
			if (drain_all(t, f, 1))
				continue;
			pt_futex_wait(&h->futex, val, 20);
		} else { /* until a flush or a shutdown is asked for, or 40 ms */
			/* the map's area is a ring that the traced processes
			 * fill: taken as it goes (else, read only at the end, a
			 * forking program's later children found it full: 22001
			 * entries lost of 8000 children), and the entries of
			 * processes gone that hold no chunk any more dropped
			 * (their events are overwritten: issue 54) */
			pt_lock(&t->lock);
			pt_objs_collect(t);
			f->objs_done -= pt_objs_retire_unheld(t, f->objs_done);
			pt_unlock(&t->lock);
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 40000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_nsec -= 1000000000;
				until.tv_sec++;
			}
			pthread_mutex_lock(&f->mu);
			if (f->req == f->done && !f->stop && f->clear_req == f->clear_done)
				pthread_cond_timedwait(&f->cv, &f->mu, &until);
			pthread_mutex_unlock(&f->mu);
		}
	}
}

/* Under t's lock and pt_trid_table_lock, while the stream is being created. */
int pt_flusher_start(struct pt_stream *t, int fd)
{
	struct pt_flusher *f = calloc(1, sizeof *f);
	int rc;

	if (!f)
		return ENOMEM;
	f->cap = t->attr.max_data > 2 * sizeof(trace_event_set_t) ? t->attr.max_data
	                                                          : 2 * sizeof(trace_event_set_t);
	if (!(f->buf = malloc(f->cap)) || !(f->stage = malloc(STAGE_BYTES + f->cap)) ||
	    !(f->obuf = malloc(OBJ_BATCH * sizeof *f->obuf))) {
		free(f->buf);
		free(f->stage);
		free(f->obuf);
		free(f);
		return ENOMEM;
	}
	rc = log_init(t, &f->w, fd);
	if (rc) {
		free(f->buf);
		free(f->stage);
		free(f->obuf);
		free(f);
		return rc;
	}
	ask_final(&f->w, t);
	f->autoflush = t->attr.stream_policy == POSIX_TRACE_FLUSH;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	t->fl = f;
	sigset_t all, old;
	sigfillset(&all);
	int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0; /* the thread's, from birth */
	f->mask = old;
	if (!masked)
		sigemptyset(&f->mask);
	rc = pthread_create(&f->thread, NULL, flusher_main, t);
	if (masked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		atomic_fetch_add(&flushers, 1); /* (after: never counted before it exists) */
	if (rc != 0) {
		t->fl = NULL;
		pt_logw_free(&f->w);
		free(f->buf);
		free(f->stage);
		free(f->obuf);
		free(f);
		return rc == EAGAIN ? EAGAIN : ENOMEM;
	}
	return 0;
}

/* Shutdown (t not locked): the last flush, the final status, the end of
 * the log.  Returns the first error the log met, if any. */
int pt_flusher_stop(struct pt_stream *t, int stop, void *addr)
{
	struct pt_flusher *f = t->fl;
	struct posix_trace_status_info si;

	pthread_mutex_lock(&f->mu);
	f->stop_event = stop;
	f->stop_addr = addr;
	f->stop = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pt_wake_readers(t->hdr);
	if (pthread_equal(f->thread, pthread_self())) {
		/* the flusher itself, in exit() (check_program): its last
		 * flush here, as its loop would have made it */
		flush_once(t, f, 1);
		atomic_fetch_sub(&flushers, 1);
	} else {
		pthread_join(f->thread, NULL);
	}
	pthread_mutex_lock(&f->mu);
	f->done = f->req;    /* the final flush answered every request */
	pthread_mutex_unlock(&f->mu);
	log_state(f);
	pt_lock(&t->lock);
	pt_status_locked(t, &si);
	/* the completed stream: did the log (its last part) ever lose events */
	si.posix_log_overrun_status = f->losses - f->losses_cut ? POSIX_TRACE_OVERRUN
	                                                         : POSIX_TRACE_NO_OVERRUN;
	f->w.stream_lost = pt_read_lost(t) - f->lost_base; /* (never below what the gaps said) */
	uint64_t rest = f->w.stream_lost - (t->rd.lost_at_resume - f->lost_base);
	t->fl = NULL;
	pt_unlock(&t->lock);
	if (rest && t->view.policy != POSIX_TRACE_UNTIL_FULL) {
		/* lost after the last flush read the stream to its end (a
		 * writer still dropping while the stream stopped): their gap,
		 * after the last event, so that the gaps add up to the total
		 * (an UNTIL_FULL stream tells its losses with its STOP) */
		uint64_t ts = f->w.last_ts;
		note_error(f, pt_logw_event(&f->w, ts, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0));
		note_error(f, pt_logw_event_lost(&f->w, ts, 0, 0, 0, POSIX_TRACE_RESUME,
		                                 f->w.stream_lost));
	}
	note_error(f, pt_logw_finish(&f->w, &si));
	int rc = f->err_ret;
	pt_logw_free(&f->w);
	pt_rotate_free(atomic_load(&f->rot));
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f->buf);
	free(f->stage);
	free(f->obuf);
	free(f);
	return rc;
}

/* posix_trace_clear() on t (locked, a stream with a log, already reset):
 * the log begins again before the flusher writes anything more (drain) */
void pt_flusher_clear(struct pt_stream *t)
{
	struct pt_flusher *f = t->fl;

	pthread_mutex_lock(&f->mu);
	if (!f->stop && !f->claimed)
		f->clear_req++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pt_wake_readers(t->hdr);
}

int pt_flusher_claim(struct pt_stream *t)
{
	if (t->fl->claimed)
		return EINVAL;
	t->fl->claimed = 1;
	return 0;
}

/* In a child after fork: the flusher thread is the parent's. */
void pt_flusher_forget(struct pt_stream *t)
{
	atomic_store(&flushers, 0); /* the child has no thread of ours */
	pt_logw_free(&t->fl->w); /* (memory only: the log's fd is the program's) */
	pt_rotate_forget(atomic_load(&t->fl->rot)); /* (its descriptors are ours) */
	free(t->fl->buf);
	free(t->fl->stage);
	free(t->fl->obuf);
	free(t->fl);
	t->fl = NULL;
}

/* The log's part of posix_trace_get_status(), under t's lock. */
void pt_flusher_status(struct pt_stream *t, struct posix_trace_status_info *si)
{
	struct pt_flusher *f = t->fl;

	pthread_mutex_lock(&f->mu);
	si->posix_stream_flush_status = f->req != f->done ? POSIX_TRACE_FLUSHING
	                                                  : POSIX_TRACE_NOT_FLUSHING;
	si->posix_stream_flush_error = f->err;
	f->err = 0; /* kept until read */
	if (f->clear_req != f->clear_done) { /* cleared: the log begins again */
		si->posix_log_full_status = POSIX_TRACE_NOT_FULL;
		si->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
	} else {
		si->posix_log_full_status = f->full ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
		si->posix_log_overrun_status = f->losses > f->ovr_seen ? POSIX_TRACE_OVERRUN
		                                                       : POSIX_TRACE_NO_OVERRUN;
		f->ovr_seen = f->losses; /* reset by reading */
	}
	pthread_mutex_unlock(&f->mu);
}

/* posix_trace_flush on t (locked, a stream with a log): ask the flusher
 * for a flush; an error it met already, or 0. */
int pt_flusher_request(struct pt_stream *t)
{
	struct pt_flusher *f = t->fl;
	pthread_mutex_lock(&f->mu);
	if (f->stop || f->claimed) { /* being shut down */
		pthread_mutex_unlock(&f->mu);
		return EINVAL;
	}
	f->req++;
	int rc = f->err; /* an error already met: say so now */
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pt_wake_readers(t->hdr);
	return rc == EFBIG || rc == ENOSPC ? rc : 0;
}

/* A stream's status (with its log's, if it has one), under t's lock. */
void pt_status_locked(struct pt_stream *t, struct posix_trace_status_info *si)
{
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
	if (t->fl)
		pt_flusher_status(t, si);
}

/* pt_ext_log_rotate (t locked, a stream): the log is cut into parts from
 * now on, once. */
int pt_flusher_rotate(struct pt_stream *t, const struct pt_ext_rotate *in)
{
	struct pt_flusher *f = t->fl;
	struct pt_rotate *r, *none = NULL;
	int rc;

	if (!f || t->attr.log_policy != POSIX_TRACE_APPEND || f->claimed) /* (claimed: shutting down) */
		return EINVAL;
	if (atomic_load(&f->rot))
		return EBUSY;
	if ((rc = pt_rotate_new(in, &r)) != 0)
		return rc;
	if (!atomic_compare_exchange_strong(&f->rot, &none, r)) {
		pt_rotate_free(r);
		return EBUSY;
	}
	return 0;
}

int pt_flusher_rotate_stats(struct pt_stream *t, struct pt_ext_rotate_stats *out)
{
	struct pt_rotate *r = t->fl ? atomic_load(&t->fl->rot) : NULL;

	if (!r)
		return EINVAL;
	pt_rotate_stats(r, out);
	return 0;
}
