/*
 * read.c -- the analyzer side of an active stream: the merge, taking
 * records, synthesized events, the flusher's runs.  Finding the chunks to
 * read is chunks.c; the writers kept apart and their losses, writers.c.
 *
 * A writer (one thread of one process at one signal nesting level) fills
 * its chunks one after another, each in order; so the reader keeps, per
 * writer, a queue of that writer's chunks, found through the acquisition
 * log, and each time returns the record with the smallest timestamp among
 * the queue heads.  That is an exact merge by timestamp, and one thread's
 * events always come out in program order.  A chunk read to its end and
 * sealed is given back to the pool: this is what makes room in an
 * UNTIL_FULL stream.
 *
 * Every value read from the segment is checked: a record that does not
 * fit its chunk ends that chunk with a POSIX_TRACE_ERROR event; a chunk
 * overwritten while being read (LOOP) is detected by its sequence number
 * and reported as an overflow before any later event.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "reader.h"

void pt_reader_reset(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	rd->run_w = 0;
	for (uint32_t i = 0; i < rd->nw; i++)
		free(rd->w[i].lost.e);
	rd->nw = 0;
	rd->ck_free = NONE;
	for (uint32_t i = rd->ck_cap; i-- > 0;) {
		rd->ck[i].next = rd->ck_free;
		rd->ck_free = (int32_t)i;
	}
	rd->npend = 0;
	rd->next_aseq = atomic_load(&h->acq_seq) + 1;
	rd->loss_gen = atomic_load(&h->loss_gen);
	rd->loss.n = 0;
	rd->nloss_pend = 0;
	rd->nsteal_wait = 0;
	rd->gap_lost = 0;
	rd->told_next = 0;
	rd->reports_lost = 0;
	/* (clear) the losses not told yet are forgotten with the events */
	uint64_t lost = atomic_load(&h->lost);
	rd->lost_forgot = lost > rd->lost_at_resume ? lost - rd->lost_at_resume : 0;
	rd->need_resume = rd->start_pending = rd->stashed = 0;
	rd->epoch = PT_ST_EPOCH(atomic_load(&h->state));
}

void pt_reader_free(struct pt_reader *rd)
{
	for (uint32_t i = 0; i < rd->nw; i++)
		free(rd->w[i].lost.e);
	free(rd->ck);
	free(rd->w);
	free(rd->st_buf);
	free(rd->loss.e);
	free(rd->objs);
	free(rd->hot_tmp);
	memset(rd, 0, sizeof *rd);
}

/* How many chunks are hot (ring/pool.c, pt_pool_give_back): the most in
 * use at once over the last 5 to 10 s, and 4 more, at least
 * PT_HOT_CHUNKS.  A program with many threads writing keeps that many in
 * use: they stay hot, or each chunk taken beyond them would cost a fault
 * a page (40 threads flooding a 16 MiB stream: 7000 faults more for 4 M
 * events with a fixed 24).  After a burst the count comes down, and the
 * chunks beyond it leave the free stack (pt_pool_trim).  Looked at
 * every 100 ms: the chunk descriptors' states, one load each; and at
 * once when chunk idx, being freed, is beyond the count (it would go
 * cold, yet it was in use): with a count up to 100 ms old at a burst's
 * start, a thread at full speed through a 16 MiB stream (64 chunks) sent
 * chunks cold and took them back 118 times in its first 100 ms (a hole
 * punched, the memory reserved again, each page faulted in anew); now
 * once, at the end.  (The hot chunks are an index range: a chunk in use
 * beyond the most in use and 4 still goes cold.) */
static uint32_t hot_now(struct pt_stream *t, uint32_t idx)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_view *v = &t->view;
	uint32_t base = PT_HOT_CHUNKS(v->sealed_max, v->nchunks);
	uint64_t now = pt_mono_ns() / 1000000u;

	if (rd->hot && now - rd->hot_look_ms < 100 && idx < rd->hot)
		return rd->hot;
	rd->hot_look_ms = now;
	uint32_t used = 0;
	for (uint32_t i = 0; i < v->nchunks; i++)
		used += PT_SS_STATE(atomic_load_explicit(&v->chunks[i].ss, memory_order_relaxed)) !=
		        PT_CK_FREE;
	if (now - rd->hot_win_ms >= 5000) {
		rd->hot_win_ms = now;
		rd->hot_peak[1] = rd->hot_peak[0];
		rd->hot_peak[0] = 0;
	}
	if (used > rd->hot_peak[0])
		rd->hot_peak[0] = used;
	uint32_t peak = rd->hot_peak[0] > rd->hot_peak[1] ? rd->hot_peak[0] : rd->hot_peak[1];
	uint32_t h = peak + 4 > base ? peak + 4 : base;
	if (h > v->nchunks)
		h = v->nchunks;
	if (rd->hot && h < rd->hot && t->fd >= 0 &&
	    (rd->hot_tmp || (rd->hot_tmp = malloc(v->nchunks * sizeof *rd->hot_tmp))))
		pt_pool_trim(&t->view, h, t->fd, t->region_off, rd->hot_tmp);
	rd->hot = h;
	return h;
}

/* A chunk read to its end (or a dead writer's, read to its commit) goes
 * back to the pool, its memory out of the traced processes if it is not
 * one of the hot ones (ring/pool.c).  1 if it was in that life and state. */
static int give_back(struct pt_stream *t, uint32_t idx, uint64_t seq, unsigned from)
{
	return pt_pool_give_back(&t->view, idx, seq, from, t->fd, t->region_off, hot_now(t, idx));
}

/* Drop from this CPU's caches the lines of a chunk below end, the
 * farthest first.  A chunk's writer, or another, stores into every line
 * of it again soon: one read to its end goes back to the pool (a stack,
 * so it is handed out again soon), and in a LOOP stream a chunk stolen
 * from under the reader is being overwritten from its start already.  A
 * line this reader still holds must first be taken back from it, a
 * cross-CPU round trip per line that the writer waits for.  Where the
 * CPUs are far apart that made a producer 3x slower whenever its consumer
 * kept up, and 1.8x whenever a spinning reader kept losing its chunk to
 * the writer; a flushed line comes from memory instead, which the
 * writer's prefetch hides (docs/design.md, "Giving chunks back";
 * docs/performance.md).  Not while a no-loss stream has no room: its
 * writers then wait for this reader, whose time is what the program waits
 * for, and a writer's miss on a line still here falls inside a wait it
 * makes anyway (record --no-loss of a thread at full speed: 3-9% more
 * events/s; the producer's CPU the same in most series of runs, a third
 * more in one: docs/performance.md).  Only a hint: it changes no data,
 * and elsewhere it is nothing. */
static void evict(const struct pt_stream *t, const struct pt_ractive *a, uint32_t end)
{
#if defined(__x86_64__) || defined(__i386__)
	if (t->view.policy == POSIX_TRACE_FLUSH && *(volatile uint32_t *)&t->hdr->noloss_ms &&
	    !pt_pool_has_room(&t->view, PT_REC_SHORT))
		return;
	const char *c = pt_chunk_data(&t->view, a->idx);
	if (end > t->view.chunk_size)
		end = t->view.chunk_size;
	for (uint32_t off = (end + 63u) & ~63u; off >= 64; off -= 64)
		__builtin_ia32_clflush(c + off - 64);
#else
	(void)t, (void)a, (void)end;
#endif
}

/* A chunk lost to a thief: the lines read, and the few the CPU may have
 * fetched ahead of the reader. */
static void evict_lost(const struct pt_stream *t, const struct pt_ractive *a)
{
	evict(t, a, a->off + 256);
}

/* Make the head of w's queue a live chunk with a record to read, if there
 * is one: free finished chunks, drop overwritten ones.  A head's next
 * timestamp only ever comes from a peek that checked the chunk's life, so
 * it is never taken from a chunk that changed hands. */
static int found_gone(struct pt_stream *t, struct pt_ractive *a, uint64_t mono);

/* w's head chunk a, open, whose writer is gone: back to the pool once
 * read to its commit (final: nobody writes it any more), and w moves on.
 * 1 if it went back; 0 (records unread, or no longer in a->seq's life:
 * the CAS fails) if not. */
static int give_back_gone(struct pt_stream *t, struct pt_rwriter *w, struct pt_ractive *a)
{
	const struct pt_chunk *ck = &t->view.chunks[a->idx];

	if (PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_acquire)) != a->off ||
	    !give_back(t, a->idx, a->seq, PT_CK_OPEN))
		return 0;
	evict(t, a, a->off);
	pt_rwriter_pop(&t->rd, w);
	return 1;
}

static void service(struct pt_stream *t, struct pt_rwriter *w)
{
	struct pt_reader *rd = &t->rd;

	while (w->head != NONE) {
		struct pt_ractive *a = &rd->ck[w->head];
		if (a->has_next)
			return; /* from a peek that checked the chunk's life; take() rechecks */
		uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
		unsigned st = PT_SS_STATE(ss);
		if (PT_SS_SEQ(ss) == a->seq && (st == PT_CK_OPEN || st == PT_CK_SEALED)) {
			if (pt_rchunk_peek(t, a)) {
				if (a->has_next)
					return;
				/* Open, read to its commit, and another chunk of the
				 * same writer (pid, pthread_t) queued behind it: a
				 * writer seals its chunk before it takes the next, so
				 * that one is another process's, given the pid and
				 * pthread_t of this one's, which is gone (killed, or
				 * exec'd, in its chunk).  Nobody will seal this one:
				 * it goes back, and the next one is read.  (It waited
				 * for ever before, and the new process's events with
				 * it.) */
				if (st == PT_CK_OPEN && w->tail != w->head && t->fd >= 0 &&
				    found_gone(t, a, pt_mono_ns()) && give_back_gone(t, w, a))
					continue;
				if (st == PT_CK_OPEN)
					return; /* nothing new yet */
				/* sealed before we looked, and read to the end */
				evict(t, a, a->commit);
				give_back(t, a->idx, a->seq, PT_CK_SEALED);
				pt_rwriter_pop(rd, w);
				continue;
			}
		}
		evict_lost(t, a);
		pt_lost_rest(t, w, a);
		pt_rwriter_pop(rd, w);
	}
}

static void synth(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                  size_t *dlen, trace_event_id_t id, uint64_t tick, const void *data, size_t len)
{
	size_t n = len < num ? len : num;

	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = id;
	ev->posix_truncation_status = n < len ? POSIX_TRACE_TRUNCATED_READ : POSIX_TRACE_NOT_TRUNCATED;
	pt_ns_to_ts(pt_clock_ns(&t->clk, tick), &ev->posix_timestamp);
	if (n)
		memcpy(buf, data, n);
	*dlen = n;
	if (tick > t->rd.last_out)
		t->rd.last_out = tick;
}

uint64_t pt_read_lost(const struct pt_stream *t)
{
	uint64_t all = atomic_load_explicit(&t->hdr->lost, memory_order_acquire);

	all = all > t->rd.lost_forgot ? all - t->rd.lost_forgot : 0;
	return all > t->rd.lost_at_resume ? all : t->rd.lost_at_resume; /* (a scribbled count) */
}

/* Where a synthesized OVERFLOW goes: at the first lost event (tick), but
 * never before an event already returned (docs/implementation-defined.md,
 * "Reading"). */
static uint64_t not_before_out(const struct pt_reader *rd, uint64_t tick)
{
	return tick > rd->last_out ? tick : rd->last_out;
}

/* The stream's count of lost events, then the reports published since
 * the last look.  A report taken here whose events the count loaded does
 * not have yet (its writer publishes it, then adds to the count) would
 * be subtracted from the count as one not told yet, and the events the
 * count holds in no report (reports overwritten) would be told short by
 * as many, in this gap, and in full in the next: the wrong gap.  So when
 * the count moved while the reports were taken, again (a few times at
 * most: writers that keep losing must not keep the reader here).  What
 * is left: a writer preempted between its two stores. */
static uint64_t collect_lost(struct pt_stream *t)
{
	uint64_t all = pt_read_lost(t);

	for (int again = 0;; again++) {
		pt_losses_collect(t);
		uint64_t now = pt_read_lost(t);
		if (now == all || again == 3)
			return all;
		all = now;
	}
}

/* The count a RESUME carries: the counts of the reports this gap took in
 * (pt_loss_take), what reports told earlier counted since (a run of drops
 * that went on, pt_loss_growth), and the events the stream counted lost
 * that are in no report at all (reports overwritten before they were
 * read, drops that report nothing): the stream's count less what was told
 * and what the reports not told yet count.  The stream's count is loaded
 * first: each event in it is in a report already published (ring/pool.c,
 * add_lost), which the reader then holds, so no event is counted by two
 * RESUMEs, and a gap counts exactly the reports it took in.  The RESUMEs
 * add up to the stream's count, exactly, once the reader has read to the
 * end (read_next() tells a rest there). */
static uint64_t resume_count(struct pt_stream *t, uint64_t upto)
{
	struct pt_reader *rd = &t->rd;
	uint64_t all = collect_lost(t);

	pt_loss_take(rd, t->hdr, upto); /* (reports that came meanwhile) */
	uint64_t n = rd->gap_lost + pt_loss_growth(rd, t->hdr);
	uint64_t told = rd->lost_at_resume + n + pt_losses_later(rd, t->hdr);
	rd->gap_lost = 0;
	return n + (all > told ? all - told : 0);
}

/* Events the stream counted lost that no gap told or will tell (the
 * reports not told yet count theirs): 0 if none. */
static uint64_t untold(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	uint64_t all = collect_lost(t);

	uint64_t told = rd->lost_at_resume + rd->gap_lost + pt_losses_later(rd, t->hdr);
	return all > told ? all - told : 0;
}

/* A RESUME at tick (never before its OVERFLOW): the gap is closed, with
 * every loss reported at or before upto. */
static void resume(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                   size_t *dlen, uint64_t tick, uint64_t upto)
{
	struct pt_reader *rd = &t->rd;

	rd->lost_at_resume += resume_count(t, upto);
	rd->need_resume = 0;
	rd->pairs++;
	synth(t, ev, buf, num, dlen, POSIX_TRACE_RESUME, tick > rd->ovf_tick ? tick : rd->ovf_tick,
	      NULL, 0);
}

static void overflow(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf,
                     size_t num, size_t *dlen, uint64_t tick)
{
	struct pt_reader *rd = &t->rd;

	rd->ovf_tick = not_before_out(rd, tick);
	rd->need_resume = 1;
	synth(t, ev, buf, num, dlen, POSIX_TRACE_OVERFLOW, rd->ovf_tick, NULL, 0);
}

static int take(struct pt_stream *t, struct pt_rwriter *w, struct posix_trace_event_info *ev,
                void *buf, size_t num, size_t *dlen)
{
	const struct pt_view *v = &t->view;
	struct pt_ractive *a = &t->rd.ck[w->head];
	const pt_word *rec = (const pt_word *)(pt_chunk_data(v, a->idx) + a->off);
	uint64_t w0 = atomic_load_explicit(&rec[0], PT_WORD_LOAD);
	uint32_t id = PT_REC_ID(w0), n = PT_REC_LEN(w0), wide = PT_REC_WIDE(w0) ? 1 : 0;
	uint32_t size = PT_REC_BYTES(n, wide);

	uint32_t lim = id < PT_SYS_IDS ? 2 * sizeof(trace_event_set_t) : v->max_data;
	/* a short record has its chunk's previous record's address: never first */
	if (id >= PT_NIDS || n > lim || a->off + size > a->commit || (!wide && !a->off))
		return pt_rchunk_gone(t, a) ? TAKE_GONE : TAKE_BAD;
	uint64_t addr =
		wide ? atomic_load_explicit(&rec[PT_REC_W1(n)], PT_WORD_LOAD) & PT_MASK48 : a->addr;
	size_t cp = n < num ? n : num;
	pt_get_bytes(buf, rec + 1, (uint32_t)cp);
	PT_SEQ_FENCE();
	if (pt_rchunk_gone(t, a))
		return TAKE_GONE;
	if (v->policy == POSIX_TRACE_LOOP && !pt_rchunk_claim(t, a, a->off + size, a->count + 1))
		return TAKE_GONE;

	ev->posix_event_id = id;
	ev->posix_pid = w->pid;
	ev->posix_thread_id = (pthread_t)w->thread;
	ev->posix_prog_address = (void *)(uintptr_t)addr;
	ev->posix_truncation_status = n > num ? POSIX_TRACE_TRUNCATED_READ
	                              : PT_REC_FLAGS(w0) & PT_RF_TRUNC ? POSIX_TRACE_TRUNCATED_RECORD
	                                                               : POSIX_TRACE_NOT_TRUNCATED;
	pt_ns_to_ts(pt_clock_ns(&t->clk, a->next_ts), &ev->posix_timestamp);
	*dlen = cp;
	if (a->next_ts > t->rd.last_out)
		t->rd.last_out = a->next_ts;
	if (a->next_ts < t->rd.last_ev)
		t->rd.late++; /* (it was in flight longer than the reader waited) */
	else
		t->rd.last_ev = a->next_ts;
	a->last_ts = a->next_ts;
	a->addr = addr;
	a->off += size;
	a->count++;
	if (!pt_rchunk_peek(t, a))
		a->has_next = 0; /* service() drops it next time */
	return TAKE_OK;
}

/* Hand out the event kept behind a RESUME. */
static void unstash(struct pt_reader *rd, struct posix_trace_event_info *ev, void *buf,
                    size_t num, size_t *dlen)
{
	size_t n = rd->st_len < num ? rd->st_len : num;

	*ev = rd->st_ev;
	if (n < rd->st_len)
		ev->posix_truncation_status = POSIX_TRACE_TRUNCATED_READ;
	if (n)
		memcpy(buf, rd->st_buf, n);
	*dlen = n;
	rd->stashed = 0;
}

/* Events in flight (docs/design.md, "In flight").  A writer marks its
 * chunk's commit word (PT_COMMIT_BUSY) before it reads the clock and
 * clears it with the commit, so an event stamped before a look, whose
 * record the look does not find, shows as a mark: the look then returns
 * nothing stamped after the writer's last record (or its chunk's base),
 * until the mark is gone or has been seen for late_ns (then the event,
 * when it comes, is late, and counted so).  The mark's store may reach
 * the reader a little after the stamp (a store buffer, another CPU's
 * clock a little ahead): records stamped within `slack` of the look's
 * clock wait for a later look.
 * The default wait, its variable, the slack: */
#define LATE_WAIT_MS   100u    /* POSIXTRACE_LATE_WAIT_MS, 0 to 60000 */
#define LATE_WAIT_MAX  60000u
#define LATE_SLACK_NS  20000u
#define ALIVE_AFTER_NS 1000000u /* a mark held this long: is its writer alive? (a
                                 * system call, at most once as often per chunk) */

/* The ticks of the stream's clock in ns nanoseconds, or more (before the
 * clock has two points: as if of 8 GHz). */
static uint64_t ticks_at_least(const struct pt_clock *c, uint64_t ns)
{
	if (c->kind != PT_CLK_TSC)
		return ns;
	if (c->n >= 2 && c->pt[c->n - 1].ns > c->pt[0].ns && c->pt[c->n - 1].tick > c->pt[0].tick) {
		unsigned __int128 x = (unsigned __int128)ns * (c->pt[c->n - 1].tick - c->pt[0].tick);
		return (uint64_t)(x / (uint64_t)(c->pt[c->n - 1].ns - c->pt[0].ns)) + 1;
	}
	return 8ull * ns;
}

void pt_read_open_lag(struct pt_stream *t, uint64_t ns)
{
	struct pt_reader *rd = &t->rd;

	if (!ns != !rd->open_lag)
		rd->run_w = 0; /* (a run allowed before goes as far as that allowed) */
	rd->open_lag = ns ? ticks_at_least(&t->clk, ns) : 0;
}

static void late_init(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	/* (none in a set-user-ID program: the default) */
	const char *e = secure_getenv("POSIXTRACE_LATE_WAIT_MS");
	uint64_t ms = LATE_WAIT_MS;

	if (e && *e) {
		char *end;
		unsigned long v = strtoul(e, &end, 10);
		if (!*end && *e != '-' && v <= LATE_WAIT_MAX)
			ms = v;
	}
	rd->late_set = 1;
	rd->late_ns = ms * 1000000u;
	rd->slack = 0;
	/* the flusher does not wait: a log is read in timestamp order
	 * whatever order its blocks were written in (log/logiter.c), and
	 * holding records back would keep chunks from being freed */
	if (t->fl || !rd->late_ns) {
		rd->late_ns = 0;
		return;
	}
	rd->slack = ticks_at_least(&t->clk, LATE_SLACK_NS);
}

/* The look's clock, less the slack. */
static uint64_t look_now(const struct pt_reader *rd, uint64_t *raw)
{
	uint64_t now = pt_now();

	*raw = now;
	return now > rd->slack ? now - rd->slack : 0;
}

/* Did an image of pid begin in the stream after tick (its FORK entry, its
 * PROC or its map's BEGIN, written before its first chunk: a forked child,
 * a process that joined or attached, an exec)?  Then no image of pid that
 * had a chunk before tick records any more.  The entries the traced
 * processes wrote since the last look are taken first (under t's lock). */
static int began_since(struct pt_stream *t, int32_t pid, uint64_t tick)
{
	int64_t ns = pt_clock_ns(&t->clk, tick);

	pt_objs_collect(t);
	for (size_t i = t->rd.nobjs; i-- > 0;) {
		const struct pt_ext_obj *o = &t->rd.objs[i];
		if (o->pid == pid && (int64_t)o->ts > ns &&
		    (o->kind == PT_EXT_OBJ_FORK || o->kind == PT_EXT_OBJ_PROC ||
		     o->kind == PT_EXT_OBJ_BEGIN))
			return 1;
	}
	return 0;
}

/* Is the process that stamped key on a chunk taken at tick alive?  It
 * holds a write lock on that key's byte of the segment's file until it
 * exits, is killed or execs (producer/alive.c); any doubt counts as
 * alive.  The lock alone is not enough: a program that closes every
 * descriptor it did not open (some daemons do) drops it and records on;
 * so the pid the chunk names must be gone too (pt_pool_gone) -- unless it
 * is of another pid namespace, where ours may have no such pid -- or be
 * another image's now: one that began in the stream since the chunk was
 * taken (began_since: the kernel gave the pid to a new process, or the
 * process exec'd; its old image's chunks are left to us, and a new
 * process with the old one's pthread_t has its chunks queued behind
 * them, service()). */
static int alive(struct pt_stream *t, uint32_t key, int32_t pid, uint64_t tick)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	                    .l_start = (off_t)PT_ALIVE_BYTE(key), .l_len = 1 };

	if (fcntl(t->fd, F_OFD_GETLK, &fl) != 0 || fl.l_type != F_UNLCK)
		return 1;
	return !pt_pool_gone(pid) && !began_since(t, pid, tick);
}

/* Is open chunk a's process found gone (its liveness lock free, its pid
 * gone)?  Asked of the process at most once a millisecond a chunk (a
 * system call), when it was last asked kept in a->alive_at; once gone,
 * UINT64_MAX there, and never asked again.  mono: the monotonic clock. */
static int found_gone(struct pt_stream *t, struct pt_ractive *a, uint64_t mono)
{
	if (a->alive_at == UINT64_MAX)
		return 1;
	if (t->fd < 0 || mono - a->alive_at < ALIVE_AFTER_NS)
		return 0;
	a->alive_at = mono;
	const struct pt_chunk *ck = &t->view.chunks[a->idx];
	uint32_t key = atomic_load_explicit(&ck->alive, memory_order_relaxed);
	if (key && !alive(t, key, atomic_load_explicit(&ck->pid, memory_order_relaxed), a->base_ts)) {
		a->alive_at = UINT64_MAX;
		return 1;
	}
	return 0;
}

/* Chunk a, read to its commit, open: if its writer is in flight, the
 * tick before which nothing else may go out now (the writer's last
 * record's, or its chunk's base, + 1); else UINT64_MAX.  *mono: the
 * monotonic clock, read once per look (0: not yet). */
static uint64_t busy_cap(struct pt_stream *t, struct pt_ractive *a, uint64_t *mono)
{
	const struct pt_chunk *ck = &t->view.chunks[a->idx];
	uint32_t c = atomic_load_explicit(&ck->commit, memory_order_acquire);

	if (!(c & PT_COMMIT_BUSY))
		return UINT64_MAX;
	/* (a sealed chunk's commit is final, whatever bit a writer killed
	 * in an event left) */
	if (atomic_load_explicit(&ck->ss, memory_order_acquire) != PT_SS(a->seq, PT_CK_OPEN) ||
	    a->alive_at == UINT64_MAX)
		return UINT64_MAX;
	if (!*mono)
		*mono = pt_mono_ns();
	/* the wait begins again only when the writer committed records since
	 * (a new event in flight): a word that changes with no record more
	 * (a writer scribbling) is waited for once, for the bound */
	if (!a->busy_since || PT_COMMIT_POS(c) > PT_COMMIT_POS(a->busy_word)) {
		a->busy_word = c;
		a->busy_since = *mono;
	} else if (*mono - a->busy_since >= t->rd.late_ns) {
		return UINT64_MAX; /* waited enough: it will come late */
	} else if (*mono - a->busy_since >= ALIVE_AFTER_NS && found_gone(t, a, *mono)) {
		/* held more than a moment: a process killed inside the call
		 * leaves its mark for ever; never waited for again */
		return UINT64_MAX;
	}
	uint64_t lb = a->last_ts > a->base_ts ? a->last_ts : a->base_ts;
	return lb == UINT64_MAX ? lb : lb + 1;
}

/* The earliest busy_cap() of the writers with nothing ready (read after
 * the look's clock). */
static uint64_t in_flight(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	uint64_t cap = UINT64_MAX, mono = 0;

	if (!rd->late_ns)
		return cap;
	for (uint32_t i = 0; i < rd->nw; i++) {
		if (rd->w[i].head == NONE || rd->ck[rd->w[i].head].has_next)
			continue;
		uint64_t c = busy_cap(t, &rd->ck[rd->w[i].head], &mono);
		cap = c < cap ? c : cap;
	}
	return cap;
}

/* The next record is stamped within the slack of the look: wait until it
 * is not (at most the slack, with no system call), for a new look.  0 if
 * the clock did not get there (a clock that stands still: no new look). */
static int slack_wait(const struct pt_reader *rd, uint64_t ts)
{
	uint64_t until = ts + rd->slack + 1;

	for (unsigned i = 0; i < 1000000u; i++) {
		if (pt_now() >= until)
			return 1;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	return 0;
}

/* Is chunk a still open (its writer records into it)? */
static int chunk_open(const struct pt_stream *t, const struct pt_ractive *a)
{
	return atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire) ==
	       PT_SS(a->seq, PT_CK_OPEN);
}

/* Has writer w records in a sealed chunk (its first chunk, or one queued
 * after it)?  While one does, no record of an open chunk waits
 * (rd->open_lag): it may have to go first. */
static int sealed_records(const struct pt_stream *t, const struct pt_rwriter *w)
{
	const struct pt_ractive *a = &t->rd.ck[w->head];
	return w->tail != w->head || (a->has_next && !chunk_open(t, a));
}

/* The tick from which a record in an open chunk waits (rd->open_lag),
 * the look's clock being now: none (UINT64_MAX) without a lag. */
static uint64_t open_from(const struct pt_reader *rd, uint64_t now)
{
	if (!rd->open_lag)
		return UINT64_MAX;
	return now > rd->open_lag ? now - rd->open_lag : 0;
}

/* After an event of writer w was taken with nothing to put before it:
 * until when w's next events may follow with nothing else to do first
 * (read_again, the flusher's runs): before the next record another writer
 * has ready, a loss to report, a loss of w's own to mark, or the time this
 * began (all strict: a tie goes the general way).  A writer with nothing
 * new in its open chunk is looked at once more, after that time was
 * read: whatever it commits later was stamped later (the horizon,
 * read_next()).  No run while a writer's chunk needs service().  With
 * rd->open_lag, w's own chunk open and no other writer's records in a
 * sealed one: not into w's records stamped within the lag. */
static void allow_run_at(struct pt_stream *t, struct pt_rwriter *w, uint64_t now)
{
	struct pt_reader *rd = &t->rd;
	uint64_t lim = now, mono = 0;
	int sealed = 0; /* (another writer has records in a sealed chunk) */

	rd->run_w = 0;
	rd->run_cap = now;
	for (uint32_t i = 0; i < rd->nw; i++) {
		if (&rd->w[i] == w || rd->w[i].head == NONE)
			continue;
		struct pt_ractive *a = &rd->ck[rd->w[i].head];
		if (rd->open_lag && !sealed)
			sealed = sealed_records(t, &rd->w[i]);
		if (!a->has_next) {
			if (!pt_rchunk_peek(t, a)) {
				a->has_next = 0; /* overwritten: read_next() reports it */
				return;
			}
			if (!a->has_next) {
				uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss,
				                                   memory_order_acquire);
				if (PT_SS_STATE(ss) != PT_CK_OPEN)
					return; /* read to its end: service() moves on */
				if (rd->late_ns) { /* in flight: nothing after it */
					uint64_t c = busy_cap(t, a, &mono);
					lim = c < lim ? c : lim;
					rd->run_cap = c < rd->run_cap ? c : rd->run_cap;
				}
				continue;
			}
		}
		lim = a->next_ts < lim ? a->next_ts : lim;
	}
	if (rd->loss.n) { /* (a loss of unknown time is reported at once) */
		uint64_t l = rd->loss.e[0].ts == UINT64_MAX ? 0 : rd->loss.e[0].ts;
		lim = l < lim ? l : lim;
	}
	if (w->lost.n && w->lost.e[0].ts < lim)
		lim = w->lost.e[0].ts;
	if (rd->open_lag && !sealed && w->head != NONE && w->tail == w->head &&
	    rd->ck[w->head].alive_at != UINT64_MAX && chunk_open(t, &rd->ck[w->head])) {
		uint64_t f = open_from(rd, now); /* (its records that wait) */
		lim = f < lim ? f : lim;
	}
	rd->run_w = (uint32_t)(w - rd->w) + 1;
	rd->run_limit = lim;
}

static void allow_run(struct pt_stream *t, struct pt_rwriter *w)
{
	uint64_t raw;

	allow_run_at(t, w, look_now(&t->rd, &raw));
}

/* A run ended where another writer's next record comes first: a run of
 * that writer, if it is simply the next thing read_next() would return.
 * The writer with the earliest next record (a tie: none), under the time
 * the ended run was allowed at, which was read before any look made here:
 * what allow_run() would permit, with an older time (so no more).  The
 * caller checked that nothing else changed (no new chunk, no new loss).
 * Its cost is a look at each writer, as allow_run()'s; where read_next()
 * would also read the clock twice, service every writer and collect
 * losses.  Interleaved writers make short runs: this is what keeps the
 * flusher on its fast path between them. */
static struct pt_rwriter *switch_run(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_rwriter *best = NULL;

	for (uint32_t i = 0; i < rd->nw; i++) {
		if (rd->w[i].head == NONE || !rd->ck[rd->w[i].head].has_next)
			continue;
		if (!best || rd->ck[rd->w[i].head].next_ts < rd->ck[best->head].next_ts)
			best = &rd->w[i];
	}
	if (best && best->unknown_seen == rd->unknown && !(best->fresh && rd->reports_lost) &&
	    !rd->ck[best->head].gap) {
		allow_run_at(t, best, rd->run_cap);
		if (rd->run_w && rd->ck[best->head].next_ts < rd->run_limit)
			return best;
	}
	rd->run_w = 0; /* none until read_next() allows one again */
	return NULL;
}

/* A run was allowed, and nothing read_next() would look at changed since
 * (no new chunk, no new loss report, nothing half-published). */
static int run_holds(const struct pt_stream *t)
{
	const struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	return rd->run_w && !rd->npend && !rd->nloss_pend &&
	       atomic_load_explicit(&h->acq_seq, memory_order_acquire) < rd->next_aseq &&
	       atomic_load_explicit(&h->loss_gen, memory_order_acquire) == rd->loss_gen;
}

/* The next event, when it is simply the next record of the writer the
 * last one came from, or else of the writer next in time (switch_run()):
 * what read_next() would do, without its whole look.  Only while nothing
 * changed that read_next() would look at (no new chunk, no new loss
 * report); 0: call read_next(). */
static struct pt_rwriter *run_writer(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;

	if (!run_holds(t))
		return NULL;
	struct pt_rwriter *w = &rd->w[rd->run_w - 1];
	if (w->head == NONE || !rd->ck[w->head].has_next ||
	    rd->ck[w->head].next_ts >= rd->run_limit)
		return switch_run(t);
	return w;
}

static int read_again(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf,
                      size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_rwriter *w = run_writer(t);

	if (!w)
		return 0;
	if (take(t, w, ev, buf, num, dlen) != TAKE_OK)
		return 0; /* (take changed nothing): read_next() deals with it */
	w->pairs_at = rd->pairs;
	w->fresh = 0;
	return 1;
}

/* A fresh look at chunk a's commit (the records the caller may read). */
static void reload_commit(const struct pt_stream *t, struct pt_ractive *a)
{
	const struct pt_view *v = &t->view;
	uint32_t c = PT_COMMIT_POS(atomic_load_explicit(&v->chunks[a->idx].commit,
	                                                memory_order_acquire));

	if (c <= v->chunk_size && c >= a->commit)
		a->commit = c;
}

static void add_part(struct pt_stream *t, struct pt_read_merge *m, struct pt_rwriter *w,
                     uint64_t limit, int open)
{
	struct pt_read_part *p = &m->p[m->n++];

	p->w = w;
	p->a = &t->rd.ck[w->head];
	p->chunk = (const pt_word *)pt_chunk_data(&t->view, p->a->idx);
	p->limit = limit;
	p->open = open;
	p->n = 0;
}

/* Every writer with a record to read, each up to the time the current
 * run was allowed at (read before any of the looks below), its own next
 * loss to mark and the next loss to report: what switch_run() allows one
 * writer at a time, for all of them at once, so that interleaved writers
 * are merged in one loop.  A writer whose chunk is open with nothing new
 * in it after that time was read stays out (whatever it commits later
 * was stamped later, or without anything read here happening before it,
 * as allow_run_at() says); one whose chunk is read to its end and sealed
 * makes the merge wait for the general path (service() moves it on).
 * With rd->open_lag, when every part is of an open chunk, none goes past
 * the records stamped within the lag. */
static int merge_all(struct pt_stream *t, struct pt_read_merge *m)
{
	struct pt_reader *rd = &t->rd;
	uint64_t lim = rd->run_cap;

	if (rd->loss.n) { /* (a loss of unknown time is reported at once) */
		uint64_t l = rd->loss.e[0].ts == UINT64_MAX ? 0 : rd->loss.e[0].ts;
		lim = l < lim ? l : lim;
	}
	for (uint32_t i = 0; i < rd->nw; i++) {
		struct pt_rwriter *w = &rd->w[i];
		if (w->head == NONE)
			continue;
		struct pt_ractive *a = &rd->ck[w->head];
		/* the state first: a sealed chunk's commit read after it is final */
		uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
		reload_commit(t, a);
		if (!pt_rchunk_peek(t, a)) {
			a->has_next = 0; /* overwritten: read_next() reports it */
			return 0;
		}
		int open = PT_SS_STATE(ss) == PT_CK_OPEN;
		if (!a->has_next) {
			if (!open)
				return 0;
			continue;
		}
		if (w->unknown_seen != rd->unknown || (w->fresh && rd->reports_lost) || a->gap)
			return 0; /* read_next() marks that loss first */
		uint64_t own = w->lost.n && w->lost.e[0].ts < lim ? w->lost.e[0].ts : lim;
		add_part(t, m, w, own, open);
	}
	if (rd->open_lag) { /* every part in an open chunk: their young records wait */
		int sealed = 0;
		for (uint32_t i = 0; i < m->n && !sealed; i++)
			sealed = sealed_records(t, m->p[i].w);
		uint64_t f = sealed ? UINT64_MAX : open_from(rd, rd->run_cap);
		for (uint32_t i = 0; i < m->n; i++)
			if (m->p[i].a->alive_at != UINT64_MAX) /* (not a process gone) */
				m->p[i].limit = f < m->p[i].limit ? f : m->p[i].limit;
	}
	return m->n != 0;
}

/* The flusher's fast path (flushrun.c), under t's lock; see reader.h.
 * Several writers at once in a FLUSH or UNTIL_FULL stream (merge_all);
 * else, and in a LOOP stream (whose records are claimed from thieves one
 * chunk at a time), the run read_again() would go on with. */
int pt_read_merge_begin(struct pt_stream *t, struct pt_read_merge *m)
{
	struct pt_reader *rd = &t->rd;

	m->n = 0;
	m->max = 4096; /* the flusher holds t's lock for one merge at a time */
	if (!run_holds(t))
		return 0;
	if (t->view.policy != POSIX_TRACE_LOOP && rd->nw <= PT_MERGE_MAX) {
		if (merge_all(t, m))
			return 1;
		m->n = 0;
	}
	struct pt_rwriter *w = run_writer(t);
	if (!w)
		return 0;
	reload_commit(t, &rd->ck[w->head]);
	add_part(t, m, w, rd->run_limit, 0);
	return 1;
}

/* 1 if pt_read_merge_begin() would find something now. */
int pt_read_run_ready(struct pt_stream *t)
{
	return run_writer(t) != NULL;
}

/* The records the caller took from each part (p->off, p->n, p->tick,
 * p->addr), if they are the reader's: no chunk was overwritten meanwhile,
 * and in a LOOP stream no thief took them.  Then the reader has moved past
 * them (1); else nothing changes and they must not be used (0: take()
 * then finds out why). */
int pt_read_merge_end(struct pt_stream *t, struct pt_read_merge *m)
{
	struct pt_reader *rd = &t->rd;

	PT_SEQ_FENCE();
	for (uint32_t i = 0; i < m->n; i++)
		if (m->p[i].n && pt_rchunk_gone(t, m->p[i].a))
			return 0;
	if (t->view.policy == POSIX_TRACE_LOOP) { /* one part (begin) */
		struct pt_read_part *p = &m->p[0];
		if (!pt_rchunk_claim(t, p->a, p->off, p->a->count + p->n))
			return 0;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		struct pt_read_part *p = &m->p[i];
		struct pt_ractive *a = p->a;
		if (!p->n)
			continue;
		a->off = p->off;
		a->count += p->n;
		a->last_ts = p->tick;
		if (p->tick > rd->last_out)
			rd->last_out = p->tick;
		if (p->tick > rd->last_ev)
			rd->last_ev = p->tick;
		a->addr = p->addr;
		p->w->pairs_at = rd->pairs;
		p->w->fresh = 0;
		if (!pt_rchunk_peek(t, a))
			a->has_next = 0; /* service() drops it next time */
	}
	return 1;
}

/* A loss with no event after it yet, in a running stream: an event
 * stamped before it may still be on its way (its writer preempted between
 * stamping and publishing it, for as long as the scheduler likes: 334 ms
 * was seen on a loaded machine), and would then come after the OVERFLOW.
 * So the OVERFLOW waits for the event after it, which the horizon makes
 * final; a stream that is not running tells it at once. */
static int late_may_come(const struct pt_stream *t)
{
	return (atomic_load_explicit(&t->hdr->state, memory_order_acquire) & PT_ST_RUNNING) != 0;
}

/* Open chunks of writers whose process is gone, read to their commit, go
 * back to the pool: nobody else would ever seal or free them, and a
 * program that forks helpers would leave one chunk per helper until the
 * stream had none left (issue 54).  Its commit is final once the process
 * is gone, so a chunk with records still unread waits for a later look.
 * Looked for when the stream has handed out a few more chunks since the
 * last time: 2, or one for every 64 writers known (the look walks them
 * all), at one lock test per process.  (It was a 16th of the stream's
 * chunks, only then can such chunks make it run short: 20 for `record`'s
 * 321, and a service forking a helper every 10 ms kept 10 to 23 chunks
 * in use, most of them its dead helpers', so that its hot chunks went
 * beyond the base ones and its workers mapped those too, issue 54; now 6
 * to 9.) */
static void reap_dead(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_view *v = &t->view;
	uint64_t aseq = atomic_load_explicit(&t->hdr->acq_seq, memory_order_relaxed);
	uint64_t every = rd->nw / 64 > 2 ? rd->nw / 64 : 2;
	struct { uint32_t key; int alive; } seen[32];
	unsigned nseen = 0;

	if (t->fd < 0 || aseq - rd->reap_aseq < every)
		return;
	rd->reap_aseq = aseq;
	for (uint32_t i = 0; i < rd->nw; i++) {
		struct pt_rwriter *w = &rd->w[i];
		if (w->head == NONE || w->head != w->tail || rd->ck[w->head].has_next)
			continue;
		struct pt_ractive *a = &rd->ck[w->head];
		struct pt_chunk *ck = &v->chunks[a->idx];
		if (atomic_load_explicit(&ck->ss, memory_order_acquire) != PT_SS(a->seq, PT_CK_OPEN))
			continue;
		uint32_t key = atomic_load_explicit(&ck->alive, memory_order_relaxed);
		int live = -1;
		if (!key)
			continue;
		for (unsigned k = 0; k < nseen && live < 0; k++)
			if (seen[k].key == key)
				live = seen[k].alive;
		if (live < 0) {
			live = alive(t, key, atomic_load_explicit(&ck->pid, memory_order_relaxed),
			             a->base_ts);
			if (nseen < sizeof seen / sizeof seen[0])
				seen[nseen++].key = key, seen[nseen - 1].alive = live;
		}
		if (!live)
			(void)give_back_gone(t, w, a);
	}
}

/* What one look at the stream found, for the steps of read_next(). */
struct look {
	struct pt_rwriter *best; /* the writer whose next record is the earliest, or NULL */
	uint64_t best_ts;        /* that record's time (UINT64_MAX: none) */
	uint64_t now;            /* the clock at the look */
	uint64_t horizon;        /* records stamped before it are final */
	uint64_t cap;            /* below the writers in flight */
	int sealed;              /* a writer has records in a sealed chunk */
};

/* What a step of read_next() decided: go on to the next step, nothing
 * now (read_next returns 0), an event in ev (returns 1), or look again. */
enum step { STEP_ON, STEP_NONE, STEP_ONE, STEP_AGAIN };

/* Looks at the stream: new chunks, each writer's queue, the chunks of
 * dead writers, the losses reported; then chooses the writer with the
 * earliest next record (equal times: the older chunk first).
 * The horizon: a record stamped before it whose writer commits only after
 * the look cannot have happened before any record stamped before it that
 * the look finds, so those go out now; later ones wait for the next look
 * (in which whatever happened before them is found first); less the
 * slack, and below the writers in flight (in_flight, after the look). */
static void look(struct pt_stream *t, struct look *lk)
{
	struct pt_reader *rd = &t->rd;

	lk->horizon = look_now(rd, &lk->now);
	pt_reader_discover(t);
	lk->horizon = rd->hold < lk->horizon ? rd->hold : lk->horizon;
	for (uint32_t i = 0; i < rd->nw;) {
		service(t, &rd->w[i]);
		if (rd->w[i].head == NONE && rd->w[i].lost.n == 0) {
			free(rd->w[i].lost.e); /* nothing to remember: forget it */
			rd->w[i] = rd->w[--rd->nw];
		}
		else
			i++;
	}
	pt_rwriters_trim(rd);
	reap_dead(t); /* (a writer it empties is forgotten at the next look) */
	pt_losses_collect(t);
	lk->cap = in_flight(t);
	lk->horizon = lk->cap < lk->horizon ? lk->cap : lk->horizon;
	lk->best = NULL; /* rd->w does not change until the next look (but in a
	                  * RESUME, which takes the loss reports: take_best) */
	lk->sealed = 0;
	for (uint32_t i = 0; i < rd->nw; i++) {
		if (rd->w[i].head == NONE)
			continue;
		struct pt_ractive *a = &rd->ck[rd->w[i].head];
		if (rd->open_lag && !lk->sealed)
			lk->sealed = sealed_records(t, &rd->w[i]);
		struct pt_rwriter *best = lk->best;
		if (a->has_next && (!best || a->next_ts < rd->ck[best->head].next_ts ||
		                    (a->next_ts == rd->ck[best->head].next_ts &&
		                     a->seq < rd->ck[best->head].seq)))
			lk->best = &rd->w[i];
	}
	lk->best_ts = lk->best ? rd->ck[lk->best->head].next_ts : UINT64_MAX;
}

/* The flusher's question before it cuts its log into a new part
 * (flush/flusher.c): the earliest tick of a record not read yet, the
 * writers' next ones and any in a chunk whose taking is half-published
 * (rd->hold); not a writer's in flight, which the flusher's reader never
 * waits for (rd->late_ns is 0: a thread preempted in the middle of an
 * event is off the CPU for a time slice or more).  UINT64_MAX: none now.
 * Under t's lock. */
uint64_t pt_read_earliest(struct pt_stream *t)
{
	struct look lk;

	look(t, &lk);
	return t->rd.hold < lk.best_ts ? t->rd.hold : lk.best_ts;
}

/* The earliest record waits when it may not be final yet: a writer in
 * flight comes first (bounded: late_ns), and a record stamped during this
 * look goes out at the next one (at once if it was within the slack). */
static enum step wait_late(struct pt_stream *t, const struct look *lk)
{
	struct pt_reader *rd = &t->rd;

	if (!lk->best)
		return STEP_ON;
	if (lk->best_ts >= lk->cap) {
		rd->held = 1;
		return STEP_NONE;
	}
	if (lk->best_ts >= lk->horizon && lk->best_ts - lk->horizon < PT_HOLD_MAX) {
		if (lk->best_ts < lk->now && lk->best_ts < rd->hold && slack_wait(rd, lk->best_ts))
			return STEP_AGAIN; /* it was within the slack: look again */
		return STEP_NONE;
	}
	/* its chunk goes whole once sealed (rd->open_lag; a stamp far ahead,
	 * as PT_HOLD_MAX says, is not waited for, nor a process gone: its
	 * chunk is never sealed, and goes back to the pool only once read, by
	 * reap_dead; a program forking short-lived children would otherwise
	 * hold a chunk a child for the lag, and run the stream short) */
	uint64_t f = open_from(rd, lk->now);
	if (rd->open_lag && !lk->sealed && lk->best_ts >= f &&
	    lk->best_ts - f < rd->open_lag + PT_HOLD_MAX && chunk_open(t, &rd->ck[lk->best->head]) &&
	    !found_gone(t, &rd->ck[lk->best->head], pt_mono_ns()))
		return STEP_NONE;
	return STEP_ON;
}

/* The stream's losses, in their place in time: an OVERFLOW goes before
 * the first event after its first lost one; the RESUME that follows goes
 * before the next event, and covers every loss up to that event.  (An
 * OVERFLOW waits for that event too: a record stamped before its first
 * lost event may still be on its way, in a writer taking a chunk, while
 * the event that follows is not final.) */
static enum step place_loss(struct pt_stream *t, const struct look *lk,
                            struct posix_trace_event_info *ev, void *buf, size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_losses *gl = &rd->loss;
	const struct pt_rwriter *best = lk->best;
	uint64_t best_ts = lk->best_ts, horizon = lk->horizon;

	if (rd->need_resume) {
		pt_loss_take(rd, t->hdr, best_ts == UINT64_MAX ? 0 : best_ts - 1);
	} else if (gl->n && !best && gl->e[0].ts != UINT64_MAX && gl->e[0].ts >= horizon &&
	           gl->e[0].ts - horizon < PT_HOLD_MAX) {
		return STEP_NONE; /* reported during this look: the next one */
	} else if (gl->n && !best && gl->e[0].ts < horizon && late_may_come(t)) {
		return STEP_NONE; /* the loss waits for the event after it */
	} else if (gl->n && (!best || gl->e[0].ts == UINT64_MAX || best_ts >= gl->e[0].ts)) {
		/* (when the first lost event is not known, or its time
		 * is a lie, far ahead: the latest bound that keeps the
		 * order, the last event returned) */
		uint64_t tick = gl->e[0].ts < horizon ? gl->e[0].ts
		              : rd->last_out ? rd->last_out : best ? best_ts : pt_now();
		pt_loss_take(rd, t->hdr, gl->e[0].ts == UINT64_MAX ? UINT64_MAX
		                         : best_ts == UINT64_MAX ? UINT64_MAX - 1 : best_ts - 1);
		overflow(t, ev, buf, num, dlen, tick);
		return STEP_ONE;
	}
	if (rd->need_resume && pt_thief_busy(t))
		return STEP_NONE; /* the RESUME waits for the thief's count */
	if (!best && rd->need_resume) {
		/* nothing more now: the gap ends here, so that a stream
		 * that ended during a loss still tells its count */
		resume(t, ev, buf, num, dlen, rd->ovf_tick, UINT64_MAX - 1);
		return STEP_ONE;
	}
	if (!best && t->view.policy != POSIX_TRACE_UNTIL_FULL && !rd->nloss_pend && untold(t)) {
		/* read to the end, and events lost that no gap told
		 * (a run that went on after its gap was told, reports
		 * overwritten before they were read): a gap of their
		 * own, after the last event returned */
		if (gl->n || rd->nloss_pend)
			return STEP_AGAIN; /* new reports meanwhile: place them first */
		overflow(t, ev, buf, num, dlen, rd->last_out ? rd->last_out : pt_now());
		return STEP_ONE;
	}
	return STEP_ON;
}

/* Read to the end: an automatic stop (the stream was full) is reported,
 * and the stream runs again; or the pool is told it was drained (taken
 * since steal_mark: not full). */
static enum step at_end(struct pt_stream *t, uint64_t steal_mark,
                        struct posix_trace_event_info *ev, void *buf, size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;
	uint32_t st = atomic_load(&h->state);

	if ((st & PT_ST_AUTOSTOP) && !(st & PT_ST_DEAD)) {
		/* drained: report the automatic stop, then run again */
		int one = 1;
		uint64_t tick = atomic_load(&h->stop_ts);
		synth(t, ev, buf, num, dlen, POSIX_TRACE_STOP, tick ? tick : pt_now(), &one,
		      sizeof one);
		uint32_t nw = (st & ~(PT_ST_AUTOSTOP | PT_ST_FULL)) | PT_ST_RUNNING;
		if (atomic_compare_exchange_strong(&h->state, &st, nw)) {
			rd->start_pending = 1;
			rd->start_ts = pt_now();
		}
		return STEP_ONE;
	}
	pt_pool_drained(&t->view, steal_mark); /* read to its end: not full */
	return STEP_NONE;
}

/* A writer whose next event follows a loss of its own, with no
 * OVERFLOW/RESUME since its previous event (it was preempted, its event
 * arrived late; chunks of it are missing before this one, their reports
 * maybe overwritten): the loss is marked right here. */
static enum step own_loss(struct pt_stream *t, const struct look *lk,
                          struct posix_trace_event_info *ev, void *buf, size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_rwriter *best = lk->best;
	struct pt_ractive *ha = &rd->ck[best->head];
	uint64_t ts = lk->best_ts;
	int missing = ha->gap || (best->fresh && rd->reports_lost);
	/* (missing chunks: when they were lost is not known, the latest
	 * tick returned is the bound, as for an overwritten report) */
	uint64_t from = best->lost.n && best->lost.e[0].ts <= ts ? best->lost.e[0].ts
	              : missing && rd->last_out ? rd->last_out : ts;

	ha->gap = best->fresh = 0;
	if (pt_loss_upto(&best->lost, ts) | (best->unknown_seen != rd->unknown) | missing) {
		best->unknown_seen = rd->unknown;
		if (!rd->need_resume && rd->pairs == best->pairs_at) {
			overflow(t, ev, buf, num, dlen, from);
			return STEP_ONE;
		}
	}
	return STEP_ON;
}

/* Takes the earliest writer's next record into ev; after a loss, the
 * RESUME goes out first, carrying exactly that record's time, and the
 * record is stashed for the next call.  A chunk overwritten under us is
 * a loss (look again); a record that does not fit ends its chunk with a
 * POSIX_TRACE_ERROR event. */
static enum step take_best(struct pt_stream *t, const struct look *lk,
                           struct posix_trace_event_info *ev, void *buf, size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_rwriter *best = lk->best;
	uint64_t ts = lk->best_ts;
	int r;

	if (rd->need_resume) {
		size_t n;
		if (!rd->st_buf && !(rd->st_buf = malloc(TRACE_DATA_MAX + 1)))
			return STEP_NONE;
		r = take(t, best, &rd->st_ev, rd->st_buf, TRACE_DATA_MAX + 1, &n);
		if (r == TAKE_OK) {
			/* (the RESUME takes in the loss reports that came: one
			 * of a writer not known yet adds it, and rd->w moves) */
			size_t bi = (size_t)(best - rd->w);
			rd->st_len = (uint32_t)n;
			rd->stashed = 1;
			resume(t, ev, buf, num, dlen, ts, ts - 1);
			rd->w[bi].pairs_at = rd->pairs;
			return STEP_ONE;
		}
	} else {
		r = take(t, best, ev, buf, num, dlen);
		if (r == TAKE_OK) {
			best->pairs_at = rd->pairs;
			allow_run(t, best);
			return STEP_ONE;
		}
	}
	struct pt_ractive *a = &rd->ck[best->head];
	if (r == TAKE_GONE) { /* overwritten under us */
		evict_lost(t, a);
		pt_lost_rest(t, best, a);
		pt_rwriter_pop(rd, best);
		return STEP_AGAIN;
	}
	int err = EBADMSG; /* a record that does not fit: end this chunk */
	give_back(t, a->idx, a->seq, PT_CK_SEALED);
	pt_rwriter_pop(rd, best);
	synth(t, ev, buf, num, dlen, POSIX_TRACE_ERROR, ts, &err, sizeof err);
	return STEP_ONE;
}

/* One event into ev (returns 1), or nothing available now (returns 0):
 * a look at the stream, then the steps in order, each of which may
 * decide: wait for late records, place the stream's loss, at the end the
 * automatic stop, the START after it, a writer's own loss, the record. */
static int read_next(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf,
                     size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;

	rd->run_w = 0;
	if (rd->stashed) {
		unstash(rd, ev, buf, num, dlen);
		return 1;
	}
	uint64_t steal_mark = pt_pool_steal_mark(&t->view); /* before looking */
	for (;;) {
		struct look lk;
		look(t, &lk);
		enum step s = wait_late(t, &lk);
		if (s == STEP_ON)
			s = place_loss(t, &lk, ev, buf, num, dlen);
		if (s == STEP_ON && !lk.best)
			s = at_end(t, steal_mark, ev, buf, num, dlen);
		if (s == STEP_ON && rd->start_pending) {
			trace_event_set_t f;
			pt_filter_get(t->hdr, &f);
			synth(t, ev, buf, num, dlen, POSIX_TRACE_START, rd->start_ts, &f, sizeof f);
			rd->start_pending = 0;
			s = STEP_ONE;
		}
		if (s == STEP_ON)
			s = own_loss(t, &lk, ev, buf, num, dlen);
		if (s == STEP_ON)
			s = take_best(t, &lk, ev, buf, num, dlen);
		if (s != STEP_AGAIN)
			return s == STEP_ONE;
	}
}

/* How long a look waits for a writer's event in flight (late_init), and
 * whether the writer of chunk idx may still be alive (alive()): for the
 * snapshot's wait at its window's end (control/snapshot.c, settle). */
uint64_t pt_read_late_ns(struct pt_stream *t)
{
	if (!t->rd.late_set)
		late_init(t);
	return t->rd.late_ns;
}

int pt_read_writer_alive(struct pt_stream *t, uint32_t idx)
{
	const struct pt_chunk *ck = &t->view.chunks[idx];
	uint32_t key = atomic_load_explicit(&ck->alive, memory_order_relaxed);

	return t->fd < 0 || !key ||
	       alive(t, key, atomic_load_explicit(&ck->pid, memory_order_relaxed),
	             atomic_load_explicit(&ck->base_ts, memory_order_relaxed));
}

/* The next event of a live stream, if there is one now (1; else 0),
 * under t's lock: for getnext (api/getnext.c) and for the flusher of a
 * stream with a log (flush/flusher.c). */
int pt_read_next(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                 size_t *dlen)
{
	if (!t->rd.late_set)
		late_init(t);
	t->rd.held = 0;
	return read_again(t, ev, buf, num, dlen) || read_next(t, ev, buf, num, dlen);
}
