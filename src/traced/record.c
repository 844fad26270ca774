/*
 * record.c -- posix_trace_event(): the recording fast path.
 *
 * With no stream attached it is one load and one predictable branch.
 * Otherwise, in the common case (record_event: one stream, nothing
 * changed): the thread's busy mark, the live word, one load of the stream
 * state, one bit test of the filter, a timestamp, a copy into the
 * thread's own chunk and a release store of the chunk's commit offset;
 * anything else goes the general way (record_check, write_one), which
 * also serves several streams at once.  No syscall, lock or allocation
 * (a new chunk costs a few atomics).  A signal handler that
 * interrupts a recording thread records at the next nesting level, into a
 * chunk of its own, so neither event is lost or torn.
 */
#include <string.h>
#include "traced.h"

#undef posix_trace_event /* <trace.h>'s inline test: this is the function */

static _Thread_local struct pt_tw pt_tw[PT_SLOTS][PT_LEVELS] PT_TLS;
/* initial-exec TLS in a library that may be dlopen()ed comes out of a small
 * reserve (tests/abi does it): keep this table at 1.5 KiB */
_Static_assert(sizeof(struct pt_tw) == 48, "struct pt_tw grew: mind the static TLS reserve");

/* In a chunk just had after a wait for room (no-loss mode), before the
 * event that waited: the system event PT_SYS_NOLOSS_WAIT, stamped when the
 * wait ended, its payload the wait in ns, at the caller's address, so that
 * a trace shows where and how long the program was held (unless the
 * stream's filter leaves it out, or both records would not fit). */
__attribute__((noinline, cold)) static void note_wait(struct pt_view *sl, struct pt_tw *tw,
                                                      uint64_t waited, uint32_t rec,
                                                      uintptr_t addr)
{
	const _Atomic uint64_t *f = PT_UNLIKELY(sl->test_hdr_filter) ? sl->hdr->filter : sl->filter;
	uint32_t wrec = PT_REC_SIZE(sizeof waited);

	if (atomic_load_explicit(&f[PT_SYS_NOLOSS_WAIT / 64], memory_order_relaxed) >>
	    (PT_SYS_NOLOSS_WAIT % 64) & 1 || tw->pos + wrec + rec > sl->chunk_size)
		return;
	pt_word *p = (pt_word *)(pt_chunk_data(sl, tw->idx) + tw->pos);
	atomic_store_explicit(&p[0], pt_rec_w0(tw->last_ts, PT_SYS_NOLOSS_WAIT, PT_RF_WIDE,
	                                       sizeof waited), memory_order_relaxed);
	pt_put_bytes(p + 1, (const unsigned char *)&waited, sizeof waited);
	atomic_store_explicit(&p[PT_REC_W1(sizeof waited)], pt_rec_w1(tw->last_ts, addr),
	                      memory_order_relaxed);
	tw->addr = addr;
	tw->pos += wrec;
	tw->nev++;
	/* (published with the event that follows: its commit store) */
}

/* Write one event into the stream sl through writer tw.  s is the slot
 * for a traced process's own writes, PT_SYS for a controller's system
 * events (which bypass the running check), PT_SYS_WAIT for one that
 * would rather wait for room than be lost.  -1: no room (with PT_SYS_WAIT,
 * nothing recorded and nothing counted), else 0. */
__attribute__((always_inline)) static inline int write_one(struct pt_view *sl, struct pt_tw *tw,
                                                            int s, unsigned level,
                                                            trace_event_id_t id, const void *data,
                                                            size_t len, uintptr_t addr)
{
	struct pt_hdr *h = sl->hdr;
	uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);

	if (PT_UNLIKELY(!(st & PT_ST_RUNNING)) && s >= 0) {
		if (st & PT_ST_AUTOSTOP)
			pt_pool_note_lost(h, 1, 0, 0, 0, 0, 0);
		else if (st & PT_ST_DEAD)
			pt_slot_mark_dead((unsigned)s, sl);
		return 0;
	}
	/* this stream's filter: the copy in process memory (kept current by
	 * resync), or, where no copy can be kept (a child's inherited stream,
	 * a controller's system events), the stream's own */
	const _Atomic uint64_t *f = PT_UNLIKELY(sl->test_hdr_filter) ? h->filter : sl->filter;
	if (atomic_load_explicit(&f[id / 64], memory_order_relaxed) >> (id % 64) & 1)
		return 0;

	uint32_t lim = s < 0 ? 2 * sizeof(trace_event_set_t) : sl->max_data;
	uint32_t n = len > lim ? lim : (uint32_t)len;
	/* A run of losses going on in a FLUSH stream whose flusher is behind:
	 * counted without the timestamp, the map of loaded code and the
	 * controller check, which made a writer that drops slower than one
	 * that records.  Every 256th event of the run goes the general way,
	 * which checks the controller. */
	if (PT_UNLIKELY(!tw->key) && s >= 0 && tw->drop_key && tw->drop_key == pt_tw_key(sl, st) &&
	    (++tw->nev & 255) && !atomic_load_explicit(&sl->dead, memory_order_relaxed) &&
	    pt_pool_drop_again(sl, tw, PT_REC_SIZE(n)))
		return 0;
	uint64_t ts = pt_now();

	/* a thread that moved to a CPU whose TSC reads a little lower keeps
	 * its timestamps in program order */
	if (PT_UNLIKELY(ts < tw->last_ts) && tw->last_ts - ts < (1ull << 40))
		ts = tw->last_ts;
	/* the short header when the caller is the chunk's last record's and the
	 * chunk's base is near (layout.h) */
	unsigned wide = addr != tw->addr || (ts - tw->base_ts) >> 32;
	uint32_t rec = PT_REC_BYTES(n, wide);
	if (PT_UNLIKELY(tw->key != pt_tw_key(sl, st) || tw->pos + rec > sl->chunk_size ||
	                (ts - tw->base_ts) >> 47)) {
		if (tw->key && (tw->key >> 16) == pt_slot_gen(sl))
			pt_pool_seal(sl, tw, st);
		if (s >= 0) {
			pt_objmap_forget();
			pt_owner_check((unsigned)s, sl, ts);
			pt_thrmap_chunk((unsigned)s, sl, ts);
			if (atomic_load_explicit(&sl->dead, memory_order_relaxed))
				return 0;
		}
		rec = PT_REC_SIZE(n);
		if (pt_pool_acquire(sl, tw, st, ts, level, rec,
		                    s == PT_SYS_WAIT ? PT_ACQ_QUIET : s < 0 ? PT_ACQ_SYS : 0))
			return -1;
		if (PT_UNLIKELY(pt_waited_ns)) { /* it waited for room (no-loss mode) */
			note_wait(sl, tw, pt_waited_ns, rec, addr);
			pt_waited_ns = 0;
		}
		ts = tw->last_ts; /* (later, if it waited) */
		wide = 1;
	}
	pt_word *p = (pt_word *)(pt_chunk_data(sl, tw->idx) + tw->pos);
	unsigned flags = (len > n ? PT_RF_TRUNC : 0) | (wide ? PT_RF_WIDE : 0);
	atomic_store_explicit(&p[0], pt_rec_w0(ts, id, flags, n), memory_order_relaxed);
	pt_put_bytes(p + 1, data, n);
	if (wide) {
		atomic_store_explicit(&p[PT_REC_W1(n)], pt_rec_w1(ts, addr), memory_order_relaxed);
		tw->addr = addr;
	}
	tw->pos += rec;
	tw->nev++;
	tw->last_ts = ts;
	atomic_store_explicit(&sl->chunks[tw->idx].commit, tw->pos, memory_order_release);
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed)) &&
	    sl->policy != POSIX_TRACE_FLUSH && /* its flusher: woken per chunk (pool.c) */
	    atomic_exchange_explicit(&h->waiters, 0, memory_order_acq_rel))
		pt_wake_readers(h);
	return 0;
}

static inline uint32_t live_slots(void)
{
	return atomic_load_explicit(&pt_ctl->live, memory_order_acquire) &
	       atomic_load_explicit(&pt_proc.att, memory_order_acquire) & PT_LIVE_MASK;
}

/* Into each running stream, or counted lost when nested deeper than we
 * keep chunks for. */
static void record_each(trace_event_id_t id, const void *data, size_t len, uint32_t live,
                        void *addr, unsigned level)
{
	while (live) {
		unsigned s = (unsigned)__builtin_ctz(live);
		live &= live - 1;
		if (PT_LIKELY(level < PT_LEVELS))
			write_one(pt_view_att(s), &pt_tw[s][level], (int)s, level, id, data, len,
			          (uintptr_t)addr);
		else
			pt_pool_note_lost(pt_view(s)->hdr, 1, pt_now(), 1, (uint64_t)pthread_self(),
			                  pt_pid, PT_LEVELS - 1);
	}
}

/* The general way: any nesting level, any number of streams, every
 * condition record_event's fast path leaves to write_one(). */
__attribute__((noinline)) static void record_user(trace_event_id_t id, const void *data,
                                                  size_t len, void *addr)
{
	unsigned level = pt_enter();
	if (PT_UNLIKELY(!data))
		len = 0; /* no data to copy: an empty event rather than a crash */
	/* reload: a shutdown clears the bit, then waits for pt_nest to drop */
	record_each(id, data, len, live_slots(), addr, level);
	pt_leave(level);
}

/* An event from code the streams have not been told of, maybe (the
 * caller is outside the object this thread's last event came from): tell
 * them first (objmap.c), as a recording thread, then record. */
__attribute__((noinline, cold)) static void record_new_code(trace_event_id_t id,
                                                            const void *data, size_t len,
                                                            void *addr)
{
	unsigned level = pt_enter();
	pt_objmap_miss((uintptr_t)addr);
	pt_leave(level);
	record_user(id, data, len, addr);
}

/* The general way's write: reached by tail calls that keep the caller's
 * argument registers. */
__attribute__((always_inline)) static inline void record_live(trace_event_id_t id,
                                                              const void *data, size_t len,
                                                              uint32_t w, void *addr)
{
	uint32_t live = w & atomic_load_explicit(&pt_proc.att, memory_order_acquire) & PT_LIVE_MASK;
	/* (no filter test here: the wanted bitmap kept ids every running
	 * stream filters out from reaching the call, and the write tests
	 * each stream's filter anyway) */
	if (!live)
		return;
	if (PT_UNLIKELY((uintptr_t)addr - pt_obj.lo >= pt_obj.span)) {
		record_new_code(id, data, len, addr);
		return;
	}
	record_user(id, data, len, addr);
}

/* A controller changed something: map, drop, refresh, then go on. */
__attribute__((noinline, cold)) static void record_resync(trace_event_id_t id, const void *data,
                                                          size_t len, uint32_t w, void *addr)
{
	pt_resync();
	record_live(id, data, len, w, addr);
}

__attribute__((noinline)) static void record_check(trace_event_id_t id, const void *data,
                                                   size_t len, uint32_t w, void *addr)
{
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return; /* system ids cannot be forged; others are out of range */
	if (PT_UNLIKELY(w != atomic_load_explicit(&pt_proc.seen, memory_order_relaxed))) {
		record_resync(id, data, len, w, addr);
		return;
	}
	record_live(id, data, len, w, addr);
}

/* The general way, for an event the fast path below left before writing
 * anything (pt_nest back where it was): every test again. */
__attribute__((noinline)) static void record_general(trace_event_id_t id, const void *data,
                                                     size_t len, void *addr)
{
	uint32_t w = atomic_load_explicit(&pt_ctl->live, memory_order_relaxed);
	if (PT_UNLIKELY(!(w & PT_LIVE_MASK)))
		return;
	record_check(id, data, len, w, addr);
}

/* A reader waits for the event just committed: wake it, then leave (the
 * stream stays mapped while this thread is marked busy). */
__attribute__((noinline, cold)) static void record_wake(struct pt_view *sl)
{
	struct pt_hdr *h = sl->hdr;

	if (sl->policy != POSIX_TRACE_FLUSH && /* its flusher: woken per chunk (pool.c) */
	    atomic_exchange_explicit(&h->waiters, 0, memory_order_acq_rel))
		pt_wake_readers(h);
	pt_leave(0);
}

/* The clock the fast path reads, clk being pt_clock_tsc's value for the
 * copy of the path (below) that reads it: the TSC with rdtsc, or rdtscp
 * (ordered), inline, with no call that would need registers saved; else
 * CLOCK_MONOTONIC through the vDSO.  A copy for each, so that the default
 * pays for no test of the others. */
static inline uint64_t fast_now(int clk)
{
#if PT_HAVE_TSC
	unsigned aux;
	if (clk == PT_TSC_FAST)
		return __rdtsc();
	if (clk == PT_TSC_ORDERED)
		return __rdtscp(&aux);
#endif
	(void)clk;
	return pt_mono_ns();
}
static void record_other_clock(trace_event_id_t id, const void *data, size_t len,
                               struct pt_ctl *c, uintptr_t addr, int clk);

/* An event wanted by a running stream here, its id in range: the common
 * case, written straight through in one frame whose only calls are tail
 * calls.  The thread not inside posix_trace_event already (nesting level
 * 0), nothing changed since its last resync, one stream running, the
 * caller in the object of the thread's last event, the stream's filter
 * copy kept, the payload not cut, room in the thread's open chunk, the
 * clock not behind and the chunk's base near.  When any of that is not so,
 * it leaves before writing anything and the general way (record_general)
 * tests everything again.  The guarantees are that way's: the thread is
 * marked busy (pt_nest) before it reads the live word, so a shutdown that
 * cleared the stream's bit waits for it; a signal handler that interrupts
 * it sees the mark and records at level 1, into a chunk of its own; the
 * chunk's geometry is the view's, checked when the segment was attached
 * and the chunk taken.  (Measured piece by piece against a minimal ring:
 * bench/ablate.c, docs/performance.md.) */
__attribute__((always_inline)) static inline void record_event(trace_event_id_t id,
                                                               const void *data, size_t len,
                                                               struct pt_ctl *c, uintptr_t addr,
                                                               int clk)
{
	if (PT_UNLIKELY(pt_clock_tsc != clk)) {
		record_other_clock(id, data, len, c, addr, clk);
		return;
	}
	if (PT_UNLIKELY(atomic_load_explicit(&pt_thread_index, memory_order_relaxed) == 0 ||
	                atomic_load_explicit(&pt_nest, memory_order_relaxed) != 0 || !data))
		goto general;
	atomic_store_explicit(&pt_nest, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t w = atomic_load_explicit(&c->live, memory_order_acquire);
	uint32_t live = w & atomic_load_explicit(&pt_proc.att, memory_order_acquire) & PT_LIVE_MASK;
	if (PT_UNLIKELY(w != atomic_load_explicit(&pt_proc.seen, memory_order_relaxed) || !live ||
	                (live & (live - 1)) || addr - pt_obj.lo >= pt_obj.span))
		goto bail;
	unsigned s = (unsigned)__builtin_ctz(live);
	struct pt_view *sl = pt_view_att(s);
	struct pt_hdr *h = sl->hdr;
	struct pt_tw *tw = &pt_tw[s][0];
	uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);
	if (PT_UNLIKELY(!(st & PT_ST_RUNNING) || sl->test_hdr_filter || len > sl->max_data))
		goto bail;
	if (atomic_load_explicit(&sl->filter[id / 64], memory_order_relaxed) >> (id % 64) & 1)
		goto done;
	/* the caller against the last record's (a short or a wide header) and
	 * the header but its timestamp, before the clock: the writer's state
	 * is then on its way while the TSC is read (bench/ablate's "book");
	 * the timestamp as soon as the event is known to be recorded, the
	 * rest does not wait for it */
	uint32_t n = (uint32_t)len;
	unsigned wide = addr != tw->addr;
	uint64_t w0 = pt_rec_w0(0, id, wide ? PT_RF_WIDE : 0, n);
	uint64_t ts = fast_now(clk);
	uint32_t pos = tw->pos, end = pos + PT_REC_BYTES(n, wide);
	if (PT_UNLIKELY(tw->key != pt_tw_key(sl, st) || end > sl->chunk_size ||
	                ts < tw->last_ts || (ts - tw->base_ts) >> 32))
		goto bail;
	/* the writer's state first, then the record's words (w1 before the
	 * payload: nothing is visible before the commit), so that nothing of
	 * the writer is kept in registers across the copy: the frame then
	 * saves fewer of them */
	uint32_t idx = tw->idx;
	tw->pos = end;
	tw->nev++;
	tw->last_ts = ts;
	pt_word *p = (pt_word *)(pt_chunk_data(sl, idx) + pos);
	_Atomic uint32_t *commit = &sl->chunks[idx].commit;
	if (PT_UNLIKELY(wide)) {
		atomic_store_explicit(&p[PT_REC_W1(n)], pt_rec_w1(ts, addr), memory_order_relaxed);
		tw->addr = addr;
	}
	atomic_store_explicit(&p[0], w0 | (ts & 0xffffffffull), memory_order_relaxed);
	pt_put_bytes(p + 1, data, n);
	atomic_store_explicit(commit, end, memory_order_release);
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed))) {
		record_wake(sl);
		return;
	}
done:
	pt_leave(0);
	return;
bail:
	pt_leave(0);
general:
	record_general(id, data, len, (void *)addr);
}

/* (on a line of its own: where the default copy falls must not move with
 * every change elsewhere in this file) */
__attribute__((noinline, aligned(64))) static void record_event_tsc(trace_event_id_t id,
                                                                   const void *data, size_t len,
                                                                   struct pt_ctl *c,
                                                                   uintptr_t addr)
{
	record_event(id, data, len, c, addr, PT_TSC_FAST);
}

__attribute__((noinline)) static void record_event_ordered(trace_event_id_t id,
                                                          const void *data, size_t len,
                                                          struct pt_ctl *c, uintptr_t addr)
{
	record_event(id, data, len, c, addr, PT_TSC_ORDERED);
}

__attribute__((noinline)) static void record_event_mono(trace_event_id_t id, const void *data,
                                                       size_t len, struct pt_ctl *c,
                                                       uintptr_t addr)
{
	record_event(id, data, len, c, addr, 0);
}

/* Not the clock of the copy that was called (clk): the right copy's. */
__attribute__((noinline, cold)) static void record_other_clock(trace_event_id_t id,
                                                               const void *data, size_t len,
                                                               struct pt_ctl *c,
                                                               uintptr_t addr, int clk)
{
	int now = pt_clock_tsc;

	if (now == clk) /* (it cannot change once set: clock.c) */
		record_general(id, data, len, (void *)addr);
	else if (now == PT_TSC_FAST)
		record_event_tsc(id, data, len, c, addr);
	else if (now == PT_TSC_ORDERED)
		record_event_ordered(id, data, len, c, addr);
	else
		record_event_mono(id, data, len, c, addr);
}

PT_API void posix_trace_event(trace_event_id_t id, const void *restrict data, size_t len)
{
	/* <trace.h>'s test again, for callers that did not make it: is id
	 * wanted by a running stream here (a superset: the write decides) */
	struct pt_ctl *c = pt_ctl;
	uint64_t m = atomic_load_explicit(&c->want[(id / 64) % (PT_NIDS / 64)], memory_order_relaxed);
	if (PT_LIKELY(!(m >> (id % 64) & 1)))
		return;
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return; /* system ids cannot be forged; others are out of range */
	record_event_tsc(id, data, len, c, (uintptr_t)__builtin_return_address(0));
}

/* Extension: the same, recorded as if called from site (a wrapper passes
 * __builtin_return_address(0): its own caller's), or from the caller when
 * site is NULL.  The same path, the same cost as a call of the function
 * above. */
PT_API void posixtrace_event_at(trace_event_id_t id, const void *restrict data, size_t len,
                                const void *site)
{
	struct pt_ctl *c = pt_ctl;
	uint64_t m = atomic_load_explicit(&c->want[(id / 64) % (PT_NIDS / 64)], memory_order_relaxed);
	if (PT_LIKELY(!(m >> (id % 64) & 1)))
		return;
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return;
	record_event_tsc(id, data, len, c,
	                 site ? (uintptr_t)site : (uintptr_t)__builtin_return_address(0));
}

/* A control function records a system event (START, STOP, FILTER) through
 * the trace id's own writer, whether or not the stream is running.  The
 * writer's nesting level is PT_LEVELS, a level no thread records at, so its
 * chunks never mix with the same thread's own events. */
int pt_write_event(struct pt_view *sl, struct pt_tw *tw, unsigned level, trace_event_id_t id,
                   const void *data, size_t len, uintptr_t addr, int wait)
{
	if (wait)
		return write_one(sl, tw, PT_SYS_WAIT, level, id, data, len, addr);
	return write_one(sl, tw, PT_SYS, level, id, data, len, addr);
}

/* Thread exit: seal this thread's chunks so their space can be reused. */
void pt_seal_thread(void)
{
	unsigned level = pt_enter();
	uint32_t att = atomic_load_explicit(&pt_proc.att, memory_order_acquire);
	while (att) {
		unsigned s = (unsigned)__builtin_ctz(att);
		struct pt_view *sl = pt_view(s);
		att &= att - 1;
		for (unsigned l = 0; l < PT_LEVELS; l++) {
			struct pt_tw *tw = &pt_tw[s][l];
			if (tw->key && (tw->key >> 16) == pt_slot_gen(sl))
				pt_pool_seal(sl, tw,
				             atomic_load_explicit(&sl->hdr->state, memory_order_acquire));
			tw->key = 0;
			tw->drop_key = 0;
		}
	}
	pt_leave(level);
}

/* After fork, in the child: this thread's chunks belong to the parent. */
void pt_record_atfork_child(void)
{
	memset(pt_tw, 0, sizeof pt_tw);
	atomic_store(&pt_nest, 0);
}
