/*
 * pool.c -- the chunk pool: how writers take, fill and give back chunks.
 *
 * Free chunks sit on a lock-free LIFO stack (a tagged index in the header),
 * so the chunks in use stay few and low in the segment.  Taking a chunk is
 * one CAS plus one fetch-add for its acquisition sequence number, which the
 * writer publishes in the acquisition log for readers.  Sealing a full
 * chunk publishes it in the seal log, oldest first, for LOOP stealing.
 * No lock anywhere: every function here is async-signal-safe.
 *
 * No-loss mode (a FLUSH stream with a bound, posixtrace_attr_setnoloss):
 * a writer that finds no room waits for the flusher to make some rather
 * than drop the event, for the bound at most (wait_room()): asleep on a
 * futex in the segment that every chunk freed wakes when someone waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "ring.h"

/* this process's pid, stamped on every chunk it takes: set when the
 * library is loaded (producer/lifecycle.c) and in a forked child */
int32_t pt_pid;

_Thread_local unsigned pt_nowait PT_TLS;
_Thread_local uint64_t pt_waited_ns PT_TLS;

/* The three free stacks, LIFO through each chunk's `next` (the index of
 * the chunk below, PT_NIL at the bottom), their tops tag << 32 | the top's
 * index + bias, the tag bumped by every push and pop (no ABA).  The free
 * stack (pt_hdr.free_top) has bias 0: an index >= nchunks there is empty
 * (or scribbled on: taken as empty); it holds the base chunks (those below
 * PT_HOT_CHUNKS), the ones writers take while any is free.  The spare
 * stack (pt_hdr.spare_top): free chunks beyond the base whose pages are
 * still resident (a burst's, while the reader keeps them hot), taken only
 * when the free stack is empty.  The cold stack (pt_hdr.cold_top): free
 * chunks whose pages the controller gave back to the system (give_back),
 * taken last.  Spare and cold have bias 1, so that 0 is empty and a
 * segment made by an older controller, zero there, has none. */
static uint32_t pop_top(struct pt_view *sl, _Atomic uint64_t *top, uint32_t bias)
{
	uint64_t old = atomic_load_explicit(top, memory_order_acquire);

	for (;;) {
		uint32_t idx = (uint32_t)old - bias;
		if (idx >= sl->nchunks)
			return PT_NIL;
		uint32_t next = atomic_load_explicit(&sl->chunks[idx].next, memory_order_relaxed);
		uint32_t low = bias && next >= sl->nchunks ? 0 : next + bias;
		uint64_t nw = (((old >> 32) + 1) << 32) | low;
		if (atomic_compare_exchange_weak_explicit(top, &old, nw, memory_order_acq_rel,
		                                          memory_order_acquire))
			return idx;
	}
}

static void push_top(struct pt_view *sl, _Atomic uint64_t *top, uint32_t bias, uint32_t idx)
{
	uint64_t old = atomic_load_explicit(top, memory_order_relaxed), nw;

	do {
		uint32_t below = bias && !(uint32_t)old ? PT_NIL : (uint32_t)old - bias;
		atomic_store_explicit(&sl->chunks[idx].next, below, memory_order_relaxed);
		nw = (((old >> 32) + 1) << 32) | (idx + bias);
	} while (!atomic_compare_exchange_weak_explicit(top, &old, nw, memory_order_release,
	                                                memory_order_relaxed));
}

static uint32_t pop_free(struct pt_view *sl)
{
	return pop_top(sl, &sl->hdr->free_top, 0);
}

static void push_free(struct pt_view *sl, uint32_t idx)
{
	push_top(sl, &sl->hdr->free_top, 0, idx);
}

static uint32_t pop_spare(struct pt_view *sl)
{
	return pop_top(sl, &sl->hdr->spare_top, 1);
}

static void push_spare(struct pt_view *sl, uint32_t idx)
{
	push_top(sl, &sl->hdr->spare_top, 1, idx);
}

/* A free chunk whose pages are resident goes back on the free stack if it
 * is a base chunk, else on the spare stack: after a burst, writers go on
 * taking the base chunks they have used before, and the burst's chunks
 * are taken again only by a burst as deep (issue 54: a forking service's
 * workers took the chunks its helpers' burst had left on top of the free
 * stack, and mapped a chunk more for each). */
static void push_warm(struct pt_view *sl, uint32_t idx)
{
	if (idx < PT_HOT_CHUNKS(sl->sealed_max, sl->nchunks))
		push_free(sl, idx);
	else
		push_spare(sl, idx);
}

static uint32_t pop_cold(struct pt_view *sl)
{
	return pop_top(sl, &sl->hdr->cold_top, 1);
}

static void push_cold(struct pt_view *sl, uint32_t idx)
{
	push_top(sl, &sl->hdr->cold_top, 1, idx);
}

/* A sealed chunk leaves the stream's budget. */
static void unaccount(struct pt_view *sl, struct pt_chunk *ck)
{
	uint32_t used = PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_relaxed));
	atomic_fetch_sub_explicit(&sl->hdr->sealed_bytes,
	                          used > sl->chunk_size ? sl->chunk_size : used,
	                          memory_order_relaxed);
}

/* Give chunk idx back if it is still in life seq and in state from. */
int pt_pool_free(struct pt_view *sl, uint32_t idx, uint64_t seq, unsigned from)
{
	struct pt_chunk *ck = &sl->chunks[idx];
	uint64_t exp = PT_SS(seq, from);

	if (!atomic_compare_exchange_strong_explicit(&ck->ss, &exp, PT_SS(seq, PT_CK_BUSY),
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	if (from == PT_CK_SEALED)
		unaccount(sl, ck);
	atomic_store_explicit(&ck->ss, PT_SS(seq, PT_CK_FREE), memory_order_release);
	push_warm(sl, idx);
	pt_wake_room(sl->hdr, 0); /* a no-loss writer waiting for it, if any */
	return 1;
}

/* A reader gives chunk idx back (pt_pool_free's contract): a hot one
 * (idx < hot: the reader's working set, at least PT_HOT_CHUNKS, the first
 * 3/8 of the sealed chunks, 16 or more, and more after a burst:
 * reader/read.c, hot_now) onto the free stack if it is a base chunk, else
 * onto the spare stack (push_warm); any other, its pages taken out of
 * every process first, onto the cold stack, which writers take from only
 * when the other two are empty (a burst beyond the hot chunks: then a
 * page fault a page, as at its first use).  Issue 54: the free stack being LIFO, the chunks in
 * use stay few, but each chunk that was ever in use at once (a burst, a
 * reader held up on a loaded machine: a few dozen more for a moment)
 * stayed resident in the traced process for good, and each later burst
 * touched a few more: a forking service's RssShmem grew 7.4 -> 9.9 MB in
 * 20 minutes.  Now the chunks handed out in the steady state are the hot
 * ones, always the same, and a burst's others go back to the system.
 * The pages go out as a hole punched in the segment's file (fd; the
 * segment at seg_off in it); those of the chunks whose memory the segment
 * reserved when it was made (PT_PREALLOC_SPARE) are reserved again at once
 * (fallocate: allocated, mapped nowhere), so a writer that takes one never
 * finds the machine out of memory (a minor fault a page); those of the
 * sparse reserve are left sparse, as before their first use.  The chunk
 * is the reader's alone while busy: no writer is in it.  Only a
 * controller's reader comes here (syscalls); a writer gives back with
 * pt_pool_free, and so does a reader without the file (fd < 0). */
/* The pages of chunk idx, owned by the caller, out of every process
 * (reserved again if preallocated): 1 if done. */
static int punch(struct pt_view *sl, uint32_t idx, int fd, uint64_t seg_off)
{
	off_t at = (off_t)(seg_off + (uint64_t)(sl->data - (char *)sl->hdr) +
	                   (uint64_t)idx * sl->chunk_size);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, (off_t)sl->chunk_size))
		return 0;
	if (idx < sl->sealed_max + PT_PREALLOC_SPARE)
		(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, at, (off_t)sl->chunk_size);
	return 1;
}

int pt_pool_give_back(struct pt_view *sl, uint32_t idx, uint64_t seq, unsigned from, int fd,
                      uint64_t seg_off, uint32_t hot)
{
	struct pt_chunk *ck = &sl->chunks[idx];
	uint64_t exp = PT_SS(seq, from);
	int cold = 0;

	if (!atomic_compare_exchange_strong_explicit(&ck->ss, &exp, PT_SS(seq, PT_CK_BUSY),
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	if (from == PT_CK_SEALED)
		unaccount(sl, ck);
	if (fd >= 0 && idx >= hot)
		cold = punch(sl, idx, fd, seg_off);
	atomic_store_explicit(&ck->ss, PT_SS(seq, PT_CK_FREE), memory_order_release);
	if (cold)
		push_cold(sl, idx);
	else
		push_warm(sl, idx);
	pt_wake_room(sl->hdr, 0);
	return 1;
}

/* The hot chunks are now 0..hot-1, fewer than before: the spare stack's
 * chunks beyond them go cold.  Only the spare stack is looked through
 * (the free stack holds base chunks, always hot), so writers meanwhile
 * find the free stack as it was: taking the spare chunks off for a moment
 * never makes a stream with free chunks look full.  Every chunk is taken
 * off the spare stack, those beyond hot punched and pushed cold, the
 * others pushed back in their order.  tmp: room for nchunks indices. */
void pt_pool_trim(struct pt_view *sl, uint32_t hot, int fd, uint64_t seg_off, uint32_t *tmp)
{
	uint32_t n = 0, idx;

	while (n < sl->nchunks && (idx = pop_spare(sl)) != PT_NIL)
		tmp[n++] = idx;
	for (uint32_t k = n; k-- > 0;) { /* (the bottom first: the order kept) */
		idx = tmp[k];
		if (idx >= hot && fd >= 0 && punch(sl, idx, fd, seg_off))
			push_cold(sl, idx);
		else
			push_spare(sl, idx);
	}
}

/* The stream's count of lost events, added to after the report that
 * counts them is published (its tag, or a run's count in its slot): a
 * reader that loads the count (acquire) and then takes the reports finds
 * every event of that count in a report it holds, or in none
 * (reader/writers.c, pt_losses_later), so a RESUME never counts an event
 * a later RESUME will count too. */
static void add_lost(struct pt_hdr *h, uint64_t n)
{
	atomic_fetch_add_explicit(&h->lost, n, memory_order_release);
}

/* n events are lost.  With report, the reader is told where: from ts
 * on, in the sequence of writer (thread, pid, level), so it can put an
 * OVERFLOW before the next event after them.  An UNTIL_FULL stream reports
 * its losses with the automatic STOP instead.  Returns the report's
 * number, or PT_NO_REPORT. */
uint64_t pt_pool_note_lost(struct pt_hdr *h, uint64_t n, uint64_t ts, int report,
                           uint64_t thread, int32_t pid, uint32_t level)
{
	if (!atomic_load_explicit(&h->overrun, memory_order_relaxed))
		atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
	if (!report) {
		add_lost(h, n);
		return PT_NO_REPORT;
	}
	uint64_t g = atomic_fetch_add_explicit(&h->loss_gen, 1, memory_order_acq_rel);
	uint64_t i = g % PT_LOSS_RING;
	atomic_store_explicit(&h->loss_ts[i], ts, memory_order_relaxed);
	atomic_store_explicit(&h->loss_thread[i], thread, memory_order_relaxed);
	atomic_store_explicit(&h->loss_who[i], (uint64_t)(uint32_t)pid << 32 | level,
	                      memory_order_relaxed);
	atomic_store_explicit(&h->loss_n[i], PT_LOSS_N(g, n < PT_LOSS_NMAX ? n : PT_LOSS_NMAX),
	                      memory_order_relaxed);
	atomic_store_explicit(&h->loss_tag[i], g + 1, memory_order_release);
	add_lost(h, n);
	return g;
}

/* One more event of report g's run is lost (g: its low 32 bits, enough to
 * find and check its slot); if the report's slot was reused meanwhile,
 * the stream's count alone has it. */
static void add_to_report(struct pt_hdr *h, uint32_t g)
{
	_Atomic uint64_t *slot = &h->loss_n[g % PT_LOSS_RING];
	uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);

	while (PT_LOSS_N_OK(v, g) && PT_LOSS_N_COUNT(v) < PT_LOSS_NMAX &&
	       !atomic_compare_exchange_weak_explicit(slot, &v, v + 1, memory_order_relaxed,
	                                              memory_order_relaxed))
		;
}

static void set_flag(struct pt_hdr *h, uint32_t flag)
{
	uint32_t st = atomic_load_explicit(&h->state, memory_order_relaxed);
	while (!(st & flag) &&
	       !atomic_compare_exchange_weak_explicit(&h->state, &st, st | flag,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

/* A sealed chunk is being overwritten: count what the reader never took.
 * Closing the reader's progress with a CAS settles every record: the
 * reader took it before (its CAS came first) or never will (claim()). */
static void account_steal(struct pt_view *sl, uint32_t idx, uint64_t seq)
{
	struct pt_chunk *ck = &sl->chunks[idx];
	struct pt_hdr *h = sl->hdr;
	uint32_t nev = atomic_load_explicit(&ck->nevents, memory_order_relaxed);
	uint64_t pos = atomic_load_explicit(&ck->rd_pos, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&ck->rd_pos, &pos, PT_RD_CLOSED(seq),
	                                              memory_order_acq_rel, memory_order_relaxed))
		;
	int ok = PT_RD_SEQ_OK(pos, seq) && pos != PT_RD_CLOSED(seq);
	uint32_t taken = ok ? PT_RD_COUNT(pos) : 0;
	uint32_t off = ok ? PT_RD_OFF(pos) : 0;
	uint32_t commit = PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_relaxed));
	uint64_t base = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
	uint64_t ts = base;

	if (taken >= nev)
		return;
	if (off % 8 == 0 && off + PT_REC_SHORT <= commit && commit <= sl->chunk_size) {
		const pt_word *rec = (const pt_word *)(pt_chunk_data(sl, idx) + off);
		ts = pt_rec_tick_at(rec, commit - off, base);
	}
	pt_pool_note_lost(h, nev - taken, ts, 1, atomic_load_explicit(&ck->thread, memory_order_relaxed),
	                  atomic_load_explicit(&ck->pid, memory_order_relaxed),
	                  atomic_load_explicit(&ck->level, memory_order_relaxed));
}

/* LOOP: take the oldest sealed chunk, following the seal log. */
static uint32_t steal(struct pt_view *sl)
{
	struct pt_hdr *h = sl->hdr;
	uint64_t len = (uint64_t)sl->log_mask + 1;

	for (uint64_t tries = 0; tries < len; tries++) {
		uint64_t r = atomic_load_explicit(&h->reclaim, memory_order_acquire);
		uint64_t end = atomic_load_explicit(&h->seal_seq, memory_order_acquire);
		if (r >= end)
			return PT_NIL;
		if (end - r > len) { /* the log wrapped past the cursor */
			atomic_compare_exchange_strong(&h->reclaim, &r, end - len);
			continue;
		}
		uint64_t e = atomic_load_explicit(&sl->seal_log[r & sl->log_mask],
		                                  memory_order_acquire);
		if (!atomic_compare_exchange_strong(&h->reclaim, &r, r + 1))
			continue;
		if (PT_LOG_SEQ(e) != PT_LOG_SEQ_OF(r) || PT_LOG_IDX(e) >= sl->nchunks)
			continue; /* not written yet, or overwritten */
		uint32_t idx = PT_LOG_IDX(e);
		struct pt_chunk *ck = &sl->chunks[idx];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
		if (PT_SS_STATE(ss) != PT_CK_SEALED)
			continue; /* the reader freed it already */
		if (atomic_load_explicit(&ck->sealno, memory_order_relaxed) != (uint32_t)r)
			continue; /* freed and sealed again since: a newer life, not the oldest */
		if (!atomic_compare_exchange_strong(&ck->ss, &ss, PT_SS(PT_SS_SEQ(ss), PT_CK_BUSY)))
			continue;
		unaccount(sl, ck);
		account_steal(sl, idx, PT_SS_SEQ(ss));
		set_flag(h, PT_ST_FULL);
		return idx;
	}
	return PT_NIL;
}

static uint64_t mono_ms(void);

/* Is process pid gone (no such process here)?  A pid of the segment's
 * word: one that cannot name a single process is never gone. */
int pt_pool_gone(int32_t pid)
{
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* The records of a chunk up to commit, walked by their headers (a record
 * that does not fit ends the count, as it ends the reader's). */
static uint32_t count_records(const struct pt_view *sl, uint32_t idx, uint32_t commit)
{
	const pt_word *w = (const pt_word *)pt_chunk_data(sl, idx);
	uint32_t off = 0, n = 0;

	while (off + PT_REC_SHORT <= commit) {
		uint64_t w0 = atomic_load_explicit(&w[off / 8], memory_order_relaxed);
		uint32_t len = PT_REC_BYTES(PT_REC_LEN(w0), PT_REC_WIDE(w0));
		if (len > commit - off)
			break;
		off += len;
		n++;
	}
	return n;
}

/* LOOP, no chunk to take or steal: open chunks whose process is gone
 * (exited, killed or exec'd: its liveness lock, PT_ALIVE_BYTE of the
 * chunk's key, is free; producer/alive.c) are sealed as their writers would
 * have sealed them, oldest first, so that they can be stolen in turn.
 * Otherwise a flight recorder that nobody reads until the end lost every
 * event once the processes that had come and gone held every chunk
 * (issue 54: 321 of them with 16 MiB).  At most once per 10 ms in a
 * process, the 64 oldest open chunks of other processes looked at: this
 * is the general path of a stream out of chunks.  Async-signal-safe
 * (fcntl, atomics).  The number sealed. */
#define SEAL_LOOK 64u
static unsigned seal_dead(struct pt_view *sl)
{
	static _Atomic uint64_t last_ms;
	struct pt_hdr *h = sl->hdr;
	uint64_t now = mono_ms(), was = atomic_load_explicit(&last_ms, memory_order_relaxed);
	struct { uint64_t seq; uint32_t idx; } old[SEAL_LOOK];
	unsigned sealed = 0, n = 0;
	uint32_t dead_key = 0;

	if (sl->home_fd < 0 || now - was < 10 ||
	    !atomic_compare_exchange_strong(&last_ms, &was, now))
		return 0;
	int saved = errno; /* (a signal handler's event must not change it) */
	/* the oldest open chunks of other processes, by acquisition order */
	for (uint32_t i = 0; i < sl->nchunks; i++) {
		struct pt_chunk *ck = &sl->chunks[i];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_relaxed);
		uint32_t key = atomic_load_explicit(&ck->alive, memory_order_relaxed);
		if (PT_SS_STATE(ss) != PT_CK_OPEN || !key || key == sl->alive_key)
			continue; /* (ours is held through another open file than home_fd's) */
		unsigned k = n < SEAL_LOOK ? n++ : SEAL_LOOK;
		if (k == SEAL_LOOK && PT_SS_SEQ(ss) >= old[SEAL_LOOK - 1].seq)
			continue;
		if (k == SEAL_LOOK)
			k--;
		for (; k > 0 && old[k - 1].seq > PT_SS_SEQ(ss); k--)
			old[k] = old[k - 1];
		old[k].seq = PT_SS_SEQ(ss);
		old[k].idx = i;
	}
	for (unsigned j = 0; j < n; j++) {
		uint32_t i = old[j].idx;
		struct pt_chunk *ck = &sl->chunks[i];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
		uint32_t key = atomic_load_explicit(&ck->alive, memory_order_relaxed);
		if (ss != PT_SS(old[j].seq, PT_CK_OPEN) || !key || key == sl->alive_key)
			continue;
		if (key != dead_key) {
			struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			                    .l_start = (off_t)PT_ALIVE_BYTE(key), .l_len = 1 };
			if (fcntl(sl->home_fd, F_OFD_GETLK, &fl) != 0 || fl.l_type != F_UNLCK ||
			    !pt_pool_gone(atomic_load_explicit(&ck->pid, memory_order_relaxed)))
				continue; /* (the pid too: reader/read.c, alive()) */
			dead_key = key;
		}
		/* (a process killed inside an event left its mark: the
		 * commit is final all the same) */
		uint32_t commit =
			PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_acquire));
		if (commit > sl->chunk_size)
			continue;
		/* in the budget before it is sealed: a reader that frees it at
		 * once takes it out again (unaccount) */
		atomic_store_explicit(&ck->nevents, count_records(sl, i, commit), memory_order_relaxed);
		atomic_fetch_add_explicit(&h->sealed_bytes, commit, memory_order_relaxed);
		uint64_t exp = ss;
		if (!atomic_compare_exchange_strong_explicit(&ck->ss, &exp,
		                                             PT_SS(PT_SS_SEQ(ss), PT_CK_SEALED),
		                                             memory_order_acq_rel,
		                                             memory_order_relaxed)) {
			atomic_fetch_sub_explicit(&h->sealed_bytes, commit, memory_order_relaxed);
			continue; /* the reader gave it back meanwhile */
		}
		uint64_t s = atomic_fetch_add_explicit(&h->seal_seq, 1, memory_order_relaxed);
		atomic_store_explicit(&ck->sealno, (uint32_t)s, memory_order_relaxed);
		atomic_store_explicit(&sl->seal_log[s & sl->log_mask], PT_LOG_ENTRY(s, i),
		                      memory_order_release);
		sealed++;
	}
	errno = saved;
	return sealed;
}

/* UNTIL_FULL (and FLUSH): the stream stops itself; the reader restarts it. */
static void autostop(struct pt_view *sl, uint32_t state, uint64_t ts)
{
	struct pt_hdr *h = sl->hdr;
	uint32_t st = atomic_load_explicit(&h->state, memory_order_relaxed);

	while ((st & PT_ST_RUNNING) && PT_ST_EPOCH(st) == PT_ST_EPOCH(state)) {
		uint32_t nw = (st & ~PT_ST_RUNNING) | PT_ST_FULL | PT_ST_AUTOSTOP;
		if (atomic_compare_exchange_weak_explicit(&h->state, &st, nw, memory_order_release,
		                                          memory_order_relaxed)) {
			atomic_store_explicit(&h->stop_ts, ts, memory_order_release);
			pt_wake_readers(h);
			break;
		}
	}
}

/* A FLUSH stream's flusher, asleep, is woken when a chunk is sealed and
 * when events are dropped, not at every event (event.c): it has work
 * worth a wake-up, and the writer makes one futex call per chunk at most. */
static void wake_flusher(struct pt_view *sl)
{
	struct pt_hdr *h = sl->hdr;

	if (sl->policy != POSIX_TRACE_FLUSH)
		return;
	/* The chunk's publication before the look at waiters (a store, then
	 * a load of another word: without the fence the load may pass the
	 * store, and a flusher registering meanwhile would find nothing and
	 * sleep; flusher.c registers, then drains once more, then sleeps) */
	PT_FULL_FENCE(&h->waiters);
	if (atomic_load(&h->waiters) && atomic_exchange(&h->waiters, 0))
		pt_wake_readers(h);
}

/* No chunk for the event: it is lost, and counted at once, so the count
 * is exact whenever the stream is read or shut down.  A run of losses in
 * one writer's sequence is reported once, at its first event: the reader
 * puts one OVERFLOW before the writer's next event whatever the run's
 * length (a report per lost event would drown the reader).  The count sits
 * on a cache line of its own, which readers touch only at a RESUME. */
static void drop(struct pt_view *sl, struct pt_tw *tw, uint32_t state, uint64_t ts,
                 unsigned level)
{
	struct pt_hdr *h = sl->hdr;
	uint32_t key = pt_tw_key(sl, state);

	if (tw->drop_key != key) { /* a new run */
		int report = sl->policy != POSIX_TRACE_UNTIL_FULL;
		tw->drop_key = key;
		tw->drop_g = (uint32_t)pt_pool_note_lost(h, 1, ts, report, (uint64_t)pthread_self(),
		                                         pt_pid, level);
		/* the run counts in the serial (tw->idx: no chunk held), so the
		 * reader sees a gap even if this report is overwritten before it
		 * reads it; an UNTIL_FULL stream tells its losses by its STOP */
		tw->idx += (uint32_t)report;
	} else {
		if (tw->drop_g != UINT32_MAX)
			add_to_report(h, tw->drop_g);
		pt_pool_note_lost(h, 1, ts, 0, 0, 0, 0);
	}
	wake_flusher(sl);
}

/* Full when the sealed records plus this one would exceed stream-min-size:
 * a set of events adding up to no more than that never fills the stream. */
static int within_budget(const struct pt_view *sl, uint32_t rec)
{
	return atomic_load_explicit(&sl->hdr->sealed_bytes, memory_order_relaxed) + rec <= sl->budget;
}

int pt_pool_has_room(const struct pt_view *sl, uint32_t rec)
{
	const struct pt_hdr *h = sl->hdr;

	return within_budget(sl, rec) &&
	       ((uint32_t)atomic_load_explicit(&h->free_top, memory_order_acquire) < sl->nchunks ||
	        (uint32_t)atomic_load_explicit(&h->spare_top, memory_order_acquire) != 0 ||
	        (uint32_t)atomic_load_explicit(&h->cold_top, memory_order_acquire) != 0);
}

static uint32_t take_free(struct pt_view *sl, uint32_t rec)
{
	if (!within_budget(sl, rec))
		return PT_NIL;
	uint32_t idx = pop_free(sl);
	if (idx == PT_NIL)
		idx = pop_spare(sl);
	return idx != PT_NIL ? idx : pop_cold(sl);
}

int pt_pool_drop_again(struct pt_view *sl, struct pt_tw *tw, uint32_t rec)
{
	struct pt_hdr *h = sl->hdr;

	if (sl->policy != POSIX_TRACE_FLUSH || sl->noloss_ms)
		return 0;
	/* take_free() would fail (a race either way is the general path's too) */
	if (pt_pool_has_room(sl, rec))
		return 0;
	set_flag(h, PT_ST_FULL);
	if (tw->drop_g != UINT32_MAX)
		add_to_report(h, tw->drop_g);
	pt_pool_note_lost(h, 1, 0, 0, 0, 0, 0);
	wake_flusher(sl);
	return 1;
}

static uint64_t mono_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now); /* (vDSO; async-signal-safe) */
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* How long a no-loss writer sleeps at most before it looks at the
 * controller again: a killed controller frees nothing and wakes nobody. */
#define ALIVE_EVERY_NS 10000000ull
/* ... and, in a segment whose controller does not wake waiters (an older
 * library's: pt_hdr.room_wakes is 0), before it looks for room again. */
#define UNWOKEN_EVERY_NS 200000ull
/* Spins before the first sleep: the flusher on another CPU is often just
 * freeing a chunk. */
#define SPIN_ROUNDS 64u

/* No-loss mode: no chunk is free, wait for the flusher to free one, for
 * sl->noloss_ms at most.  A short spin, then a futex wait on the
 * segment's room word, which whoever frees a chunk bumps (pt_pool_free,
 * pt_wake_room: the flusher, in the controller's process) when a writer
 * counted itself in room_waiters, waking one sleeper a chunk (all of them
 * would wake, find one chunk, and all but one sleep again: 4 threads
 * waiting made 5 times the switches of 1), and so does every change of
 * the stream's state, waking all (pt_wake_readers).  So the writer sleeps
 * exactly until there is room, or the wait must end; no fixed sleep.  Only
 * async-signal-safe calls (futex, clock_gettime, fcntl), no lock, no
 * allocation: a signal handler that records while its thread waits here
 * waits too, on its own, and the interrupted wait looks again when the
 * handler returns.  Gives up at once when the stream stops running (stop,
 * shutdown, an automatic stop), when its controller is found dead
 * (checked every 10 ms: the bound may be long, and a dead controller
 * wakes nobody), and when another writer's wait ran out since a chunk was
 * last had: a stopped or killed consumer costs the program one bound, not
 * one per event.  The bound is kept to the futex's clock: the last sleep
 * ends when it does.  The chunk, or PT_NIL (then the event is dropped and
 * counted as without the mode). */
static uint32_t wait_room(struct pt_view *sl, uint32_t state, uint32_t rec)
{
	struct pt_hdr *h = sl->hdr;
	uint64_t start = pt_mono_ns(), checked = start, bound = (uint64_t)sl->noloss_ms * 1000000u;
	uint32_t idx;
	int counted = 0; /* in room_waiters */

	for (unsigned round = 0;; round++) {
		int nap = round >= SPIN_ROUNDS;
		uint32_t seen = 0;
		if (nap) { /* counted before the last look: a free after it wakes us */
			atomic_fetch_add(&h->room_waiters, 1);
			counted = 1;
			seen = atomic_load(&h->room);
			PT_FULL_FENCE(&h->room_waiters);
		}
		uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);
		if (!(st & PT_ST_RUNNING) || (st & PT_ST_DEAD) ||
		    PT_ST_EPOCH(st) != PT_ST_EPOCH(state) ||
		    atomic_load_explicit(&sl->noloss_gave_up, memory_order_relaxed)) {
			idx = PT_NIL;
			goto out;
		}
		/* the flusher sleeps until a writer wakes it (or 20 ms): before
		 * every sleep, since it may have gone back to sleep meanwhile */
		wake_flusher(sl);
		if ((idx = take_free(sl, rec)) != PT_NIL)
			goto out;
		if (!nap) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			continue;
		}
		uint64_t now = pt_mono_ns();
		if (now - start >= bound) {
			atomic_store_explicit(&sl->noloss_gave_up, 1, memory_order_relaxed);
			idx = PT_NIL;
			goto out;
		}
		if (now - checked >= ALIVE_EVERY_NS) { /* a killed controller frees nothing */
			checked = now;
			if (!pt_owner_alive(sl->home_fd, sl->lock_byte)) {
				st = atomic_load(&h->state); /* as pt_owner_check() does */
				while (!(st & PT_ST_DEAD) &&
				       !atomic_compare_exchange_weak(&h->state, &st,
				                                     (st & ~PT_ST_RUNNING) | PT_ST_DEAD))
					;
				idx = PT_NIL;
				goto out;
			}
		}
		uint64_t rel = start + bound - now, next = checked + ALIVE_EVERY_NS - now;
		if (next < rel)
			rel = next;
		if (!sl->room_wakes && rel > UNWOKEN_EVERY_NS)
			rel = UNWOKEN_EVERY_NS;
		pt_futex_wait_ns(&h->room, seen, rel);
		atomic_fetch_sub(&h->room_waiters, 1); /* (counted again before the next look) */
		counted = 0;
	}
out:
	if (counted) { /* (its look ended the wait) */
		atomic_fetch_sub(&h->room_waiters, 1);
		if (idx == PT_NIL) /* a wake meant for a chunk: the others look */
			pt_wake_room(h, 1);
	}
	return idx;
}

/* One more chunk taken by this process: from its PT_WARM_AFTER-th on,
 * each maps one more piece of its share of the stream (shm/segment.c,
 * pt_slot_warm), until there is none left or WARM_DONE is reached; from
 * then on the count stays at WARM_DONE or just above (a few threads may
 * add to it at once), and is not added to. */
#define WARM_DONE (PT_WARM_AFTER + 1024u)
static void count_taken(struct pt_view *sl)
{
	if (PT_UNLIKELY(atomic_load_explicit(&sl->taken_pid, memory_order_relaxed) != pt_pid)) {
		atomic_store_explicit(&sl->taken_pid, pt_pid, memory_order_relaxed);
		atomic_store_explicit(&sl->taken, 0, memory_order_relaxed);
	}
	if (atomic_load_explicit(&sl->taken, memory_order_relaxed) >= WARM_DONE)
		return;
	uint32_t n = atomic_fetch_add_explicit(&sl->taken, 1, memory_order_relaxed) + 1;
	if (n >= PT_WARM_AFTER && (n >= WARM_DONE || !pt_slot_warm(sl, n - PT_WARM_AFTER)))
		atomic_store_explicit(&sl->taken, WARM_DONE, memory_order_relaxed);
}

int pt_pool_acquire(struct pt_view *sl, struct pt_tw *tw, uint32_t state, uint64_t ts,
                    unsigned level, uint32_t rec, int how)
{
	struct pt_hdr *h = sl->hdr;
	uint32_t idx = take_free(sl, rec);

	if (tw->key) { /* a chunk of a stream gone from this slot, left as it is */
		tw->key = 0;
		tw->drop_key = 0; /* (it held the address) */
		tw->idx = 0;      /* serials begin again: this stream never saw the writer */
	}
	if (idx == PT_NIL && sl->policy == POSIX_TRACE_LOOP) {
		idx = steal(sl);
		if (idx == PT_NIL && seal_dead(sl))
			idx = steal(sl);
	}
	if (idx == PT_NIL && sl->noloss_ms && !how && !pt_nowait) {
		uint64_t t0 = pt_mono_ns(); /* (vDSO: async-signal-safe) */
		idx = wait_room(sl, state, rec);
		if (idx != PT_NIL) { /* how long, for the caller's posixtrace_noloss_wait */
			uint64_t d = pt_mono_ns() - t0;
			pt_waited_ns = d ? d : 1;
		}
		/* waited: the event is stamped when it gets its room, still
		 * within its call.  Readers rely on a chunk being published about
		 * when its first event was stamped: a stamp from before a long
		 * wait could come out after events read meanwhile. */
		uint64_t now = pt_now();
		if (idx != PT_NIL && now > ts)
			ts = now;
	}
	if (idx == PT_NIL) {
		if (how == PT_ACQ_QUIET)
			return -1;
		if (sl->policy == POSIX_TRACE_UNTIL_FULL)
			autostop(sl, state, ts);
		else if (sl->policy == POSIX_TRACE_FLUSH) /* the flusher is behind: */
			set_flag(h, PT_ST_FULL);       /* drop (no-loss: waited enough) */
		drop(sl, tw, state, ts, level);
		tw->nev = 0;
		return -1;
	}
	tw->drop_key = 0; /* the run of losses ends */
	if (PT_UNLIKELY(atomic_load_explicit(&sl->noloss_gave_up, memory_order_relaxed)))
		atomic_store_explicit(&sl->noloss_gave_up, 0, memory_order_relaxed); /* room again */
	/* From taking seq to publishing it the reader waits for this writer
	 * (read.c: it must not queue a later chunk first): a signal handler
	 * that interrupts us here must not wait for room in no-loss mode,
	 * which the reader, waiting for us, would not make for 50 ms. */
	pt_nowait++;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t seq = atomic_fetch_add_explicit(&h->acq_seq, 1, memory_order_relaxed) + 1;
	struct pt_chunk *ck = &sl->chunks[idx];
	atomic_store_explicit(&ck->serial, tw->idx + 1, memory_order_relaxed); /* (no chunk held) */
	/* taken in flight: the event it is taken for is on its way, and is
	 * stamped once the chunk is published (producer/event.c) */
	atomic_store_explicit(&ck->commit, PT_COMMIT_BUSY, memory_order_relaxed);
	atomic_store_explicit(&ck->nevents, 0, memory_order_relaxed);
	/* the life's own start value: a reader that claims with the last
	 * life's can never move this one on */
	atomic_store_explicit(&ck->rd_pos, PT_RD_POS(seq, 0, 0), memory_order_relaxed);
	atomic_store_explicit(&ck->base_ts, ts, memory_order_relaxed);
	atomic_store_explicit(&ck->thread, (uint64_t)pthread_self(), memory_order_relaxed);
	atomic_store_explicit(&ck->pid, pt_pid, memory_order_relaxed);
	atomic_store_explicit(&ck->epoch, PT_ST_EPOCH(state), memory_order_relaxed);
	atomic_store_explicit(&ck->level, level, memory_order_relaxed);
	atomic_store_explicit(&ck->alive, sl->alive_key, memory_order_relaxed);
	atomic_store_explicit(&ck->ss, PT_SS(seq, PT_CK_OPEN), memory_order_release);
	atomic_store_explicit(&sl->acq_log[seq & sl->log_mask], PT_LOG_ENTRY(seq, idx),
	                      memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	pt_nowait--;
	count_taken(sl);
	tw->key = pt_tw_key(sl, state);
	tw->idx = idx;
	tw->pos = 0;
	tw->nev = 0;
	tw->base_ts = ts;
	tw->last_ts = ts;
	tw->seq = seq;
	tw->addr = PT_NO_ADDR; /* the chunk's first record is wide */
	return 0;
}

/* The writer is done with its chunk: publish it as sealed (or, if a clear
 * made it stale, give it straight back). */
void pt_pool_seal(struct pt_view *sl, struct pt_tw *tw, uint32_t state)
{
	struct pt_hdr *h = sl->hdr;
	struct pt_chunk *ck = &sl->chunks[tw->idx];
	/* the writer's serial stays with it while it holds no chunk: the
	 * chunk's, which it wrote itself and nobody else writes while open */
	uint32_t serial = atomic_load_explicit(&ck->serial, memory_order_relaxed);

	if ((tw->key & 0xffffu) != (PT_ST_EPOCH(state) & 0xffffu)) {
		pt_pool_free(sl, tw->idx, tw->seq, PT_CK_OPEN);
	} else {
		uint64_t s = atomic_fetch_add_explicit(&h->seal_seq, 1, memory_order_relaxed);
		atomic_store_explicit(&ck->nevents, tw->nev, memory_order_relaxed);
		atomic_store_explicit(&ck->sealno, (uint32_t)s, memory_order_relaxed);
		/* the final commit, without the mark of the event that seals it
		 * (that event goes into the next chunk) */
		atomic_store_explicit(&ck->commit, tw->pos, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->sealed_bytes, tw->pos, memory_order_relaxed);
		atomic_store_explicit(&ck->ss, PT_SS(tw->seq, PT_CK_SEALED), memory_order_release);
		atomic_store_explicit(&sl->seal_log[s & sl->log_mask], PT_LOG_ENTRY(s, tw->idx),
		                      memory_order_release);
		wake_flusher(sl);
	}
	tw->key = 0;
	tw->idx = serial;
	tw->drop_key = 0; /* (it held the address) */
}

/* LOOP: FULL means the stream overwrote events since it was last read to
 * its end.  A reader that finds nothing left to read calls pt_pool_drained()
 * with the mark it took before it began looking: it clears FULL, unless a
 * writer moved the steal cursor since the mark -- that writer may have
 * found the stream full after the reader looked, and set FULL before the
 * clear.  (steal() moves the cursor before it sets FULL.) */
uint64_t pt_pool_steal_mark(const struct pt_view *sl)
{
	return atomic_load(&sl->hdr->reclaim);
}

void pt_pool_drained(struct pt_view *sl, uint64_t mark)
{
	struct pt_hdr *h = sl->hdr;

	if (sl->policy != POSIX_TRACE_LOOP || !(atomic_load(&h->state) & PT_ST_FULL))
		return;
	atomic_fetch_and(&h->state, ~PT_ST_FULL);
	if (atomic_load(&h->reclaim) != mark)
		set_flag(h, PT_ST_FULL);
}

/* posix_trace_clear(): drop every sealed chunk; open ones are dropped by
 * their writers when they see the new epoch. */
void pt_pool_reset(struct pt_view *sl)
{
	struct pt_hdr *h = sl->hdr;

	for (uint32_t i = 0; i < sl->nchunks; i++) {
		uint64_t ss = atomic_load_explicit(&sl->chunks[i].ss, memory_order_acquire);
		if (PT_SS_STATE(ss) == PT_CK_SEALED)
			pt_pool_free(sl, i, PT_SS_SEQ(ss), PT_CK_SEALED);
	}
	atomic_store(&h->reclaim, atomic_load(&h->seal_seq));
}
