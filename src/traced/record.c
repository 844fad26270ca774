/*
 * record.c -- posix_trace_event(): the recording fast path.
 *
 * With no stream attached it is one load and one predictable branch.
 * Otherwise, for each attached stream: one load of the stream state, one
 * bit test of the filter, a timestamp, a copy into the thread's own chunk
 * and a release store of the chunk's commit offset.  No syscall, lock or
 * allocation (a new chunk costs a few atomics).  A signal handler that
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
		ts = tw->last_ts; /* later if it waited for room (no-loss mode) */
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

/* A traced thread's event into stream s, slot s's view sl: the common case
 * (running, the filter copy kept, room in the thread's open chunk, the
 * clock not behind, the chunk's base near) written straight through with
 * the writer's fields in registers; anything else goes the general way,
 * write_one() (which takes a timestamp of its own, never earlier). */
__attribute__((noinline)) static void write_user_slow(struct pt_view *sl, struct pt_tw *tw,
                                                      unsigned s, unsigned level,
                                                      trace_event_id_t id, const void *data,
                                                      size_t len, uintptr_t addr)
{
	write_one(sl, tw, (int)s, level, id, data, len, addr);
}

__attribute__((always_inline)) static inline void write_user(struct pt_view *sl, struct pt_tw *tw,
                                                            unsigned s, unsigned level,
                                                            trace_event_id_t id,
                                                            const void *data, size_t len,
                                                            uintptr_t addr)
{
	struct pt_hdr *h = sl->hdr;
	uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);

	if (PT_UNLIKELY(!(st & PT_ST_RUNNING) || sl->test_hdr_filter))
		goto slow;
	if (atomic_load_explicit(&sl->filter[id / 64], memory_order_relaxed) >> (id % 64) & 1)
		return;
	uint32_t n = len > sl->max_data ? sl->max_data : (uint32_t)len;
	uint64_t ts = pt_now();
	uint32_t pos = tw->pos;
	/* (wide does not wait for the timestamp: where the payload goes is
	 * known while the TSC is read; a chunk's base 2^32 ticks back goes
	 * the general way, which writes a wide record) */
	unsigned wide = addr != tw->addr;
	uint32_t rec = PT_REC_BYTES(n, wide);
	if (PT_UNLIKELY(ts < tw->last_ts || tw->key != pt_tw_key(sl, st) ||
	                pos + rec > sl->chunk_size || (ts - tw->base_ts) >> 32))
		goto slow;
	uint32_t idx = tw->idx;
	pt_word *p = (pt_word *)(pt_chunk_data(sl, idx) + pos);
	unsigned flags = (len > n ? PT_RF_TRUNC : 0) | (wide ? PT_RF_WIDE : 0);
	atomic_store_explicit(&p[0], pt_rec_w0(ts, id, flags, n), memory_order_relaxed);
	pt_put_bytes(p + 1, data, n);
	if (PT_UNLIKELY(wide)) {
		atomic_store_explicit(&p[PT_REC_W1(n)], pt_rec_w1(ts, addr), memory_order_relaxed);
		tw->addr = addr;
	}
	pos += rec;
	tw->pos = pos;
	tw->nev++;
	tw->last_ts = ts;
	atomic_store_explicit(&sl->chunks[idx].commit, pos, memory_order_release);
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed)) &&
	    sl->policy != POSIX_TRACE_FLUSH && /* its flusher: woken per chunk (pool.c) */
	    atomic_exchange_explicit(&h->waiters, 0, memory_order_acq_rel))
		pt_wake_readers(h);
	return;
slow:
	write_user_slow(sl, tw, s, level, id, data, len, addr);
}

static inline uint32_t live_slots(void)
{
	return atomic_load_explicit(&pt_ctl->live, memory_order_acquire) &
	       atomic_load_explicit(&pt_proc.att, memory_order_acquire) & PT_LIVE_MASK;
}

/* Several streams, or nested deeper than we keep chunks for. */
__attribute__((noinline)) static void record_many(trace_event_id_t id, const void *data,
                                                  size_t len, uint32_t live, void *addr,
                                                  unsigned level)
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

/* Arguments keep posix_trace_event's order so no register moves ahead of
 * its branch; the heavy work (and its register saves) only for events that
 * will be written. */
__attribute__((noinline)) static void record_user(trace_event_id_t id, const void *data,
                                                  size_t len, uint32_t live, void *addr)
{
	unsigned level = pt_enter();
	if (PT_UNLIKELY(!data))
		len = 0; /* no data to copy: an empty event rather than a crash */
	/* reload: a shutdown clears the bit, then waits for pt_nest to drop */
	live = live_slots();
	if (PT_LIKELY(level < PT_LEVELS && live && !(live & (live - 1)))) {
		/* one stream: the common case, straight through */
		unsigned s = (unsigned)__builtin_ctz(live);
		write_user(pt_view_att(s), &pt_tw[s][level], s, level, id, data, len, (uintptr_t)addr);
	} else {
		record_many(id, data, len, live, addr, level);
	}
	pt_leave(level);
}

/* An event from code the streams have not been told of, maybe (the
 * caller is outside the object this thread's last event came from): tell
 * them first (objmap.c), as a recording thread, then record. */
__attribute__((noinline, cold)) static void record_new_code(trace_event_id_t id,
                                                            const void *data, size_t len,
                                                            uint32_t live, void *addr)
{
	unsigned level = pt_enter();
	pt_objmap_miss((uintptr_t)addr);
	pt_leave(level);
	record_user(id, data, len, live, addr);
}

/* The write: reached by tail calls that keep the
 * caller's argument registers, so no path here saves a register. */
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
		record_new_code(id, data, len, live, addr);
		return;
	}
	record_user(id, data, len, live, addr);
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

PT_API void posix_trace_event(trace_event_id_t id, const void *restrict data, size_t len)
{
	/* <trace.h>'s test again, for callers that did not make it: is id
	 * wanted by a running stream here (a superset: record_live decides) */
	struct pt_ctl *c = pt_ctl;
	uint64_t m = atomic_load_explicit(&c->want[(id / 64) % (PT_NIDS / 64)], memory_order_relaxed);
	if (PT_LIKELY(!(m >> (id % 64) & 1)))
		return;
	uint32_t w = atomic_load_explicit(&c->live, memory_order_relaxed);
	if (PT_UNLIKELY(!(w & PT_LIVE_MASK)))
		return;
	record_check(id, data, len, w, __builtin_return_address(0));
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
