/*
 * event.c -- posix_trace_event(): the recording fast path.
 *
 * With no stream attached it is one load and one predictable branch.
 * Otherwise, in the common case (record_event: one stream, nothing
 * changed): the thread's busy mark, the live word, one load of the stream
 * state, one bit test of the filter, a timestamp, a copy into the
 * thread's own chunk, whose address the thread keeps in its TLS (no chain
 * of loads before it is known: struct pt_fast), and a release store of
 * the chunk's commit offset;
 * anything else goes the general way (record_check, write_one), which
 * also serves several streams at once.  No syscall, lock or allocation
 * (a new chunk costs a few atomics).  A signal handler that
 * interrupts a recording thread records at the next nesting level, into a
 * chunk of its own, so neither event is lost or torn.
 */
#include <string.h>
#include "producer.h"

#undef posix_trace_event /* <trace.h>'s inline test: this is the function */


/* The writers (struct pt_tw, one per slot and nesting level) and the fast
 * path's own state (record_event), in front of them (pt_rec).
 * One slot at a time, b, is this thread's "bound" slot: its level-0
 * writer is kept in tw[0][0], a fixed place in the thread's TLS, and
 * slot 0's in tw[b][0] (the two rows swapped; with b == 0 nothing is;
 * tw_at() finds any slot's), so that the fast path finds its writer with
 * no load.  While armed, everything else the fast path needs is here
 * too, each at a fixed TLS offset: data is where the writer's chunk
 * starts (the record's address is data + pos, not the chain control word
 * -> view -> data); hdr is the stream's header (its state, filter,
 * payload bound and waiters: one load each from an address kept in TLS,
 * none through the view) and cw the place of the chunk's commit word
 * from it (the chunk table's entry, checked when armed); w is the
 * control word and st the header's state word when it was armed (one
 * stream running here, slot b, its view the one the writer's chunk was
 * taken from; the stream running, in the epoch of that chunk); lim the
 * chunk size.  Armed only by fast_arm(), at the end of an event written
 * the general way at level 0; disarmed (w = b << 8, a control word with
 * no stream running, which no event takes the fast path with) before any
 * write the general way at level 0 and whenever the rows change (thread
 * exit, fork).  Signal handlers record at level 1 or deeper and never
 * touch either.  Armed is not valid: every event compares the control
 * word with w, tests b's bit in the attached slots and compares the
 * header's state with st (record_event).  Every change a controller
 * makes here (start, stop, filter, shutdown, a stream new in the slot)
 * changes the control word; a stream that stopped itself, a clear and a
 * shutdown change the state word; a view dropped here clears its
 * attached bit before it goes.  (struct pt_fast, and pt_rec, the
 * thread's one object that holds it with the writers and pt_nest: state.h.) */
_Static_assert(PT_SLOTS <= 8 && PT_LIVE_MASK == 0xffu, "struct pt_fast's w");

/* The bound slot, armed or not. */
static inline unsigned fast_b(void)
{
	uint32_t w = pt_rec.fast.w;
	return w & PT_LIVE_MASK ? (unsigned)__builtin_ctz(w & PT_LIVE_MASK) : (w >> 8) & 7u;
}

static inline void fast_off(void)
{
	pt_rec.fast.w = fast_b() << 8;
}

/* The clock mode folded into the armed state word: pt_fast.st is the
 * header's state word with the bits of the mode it was armed in, bits no
 * state word has, so that the copy of the path for another mode (the
 * default one, which every call enters) finds it not armed with no test
 * of its own and goes the general way, which takes the right copy
 * (record_event). */
static inline uint32_t fast_clk_key(int clk)
{
	return clk == PT_TSC_FAST ? 0 : clk == PT_TSC_ORDERED ? 0x40u : 0x80u;
}
_Static_assert(((PT_ST_RUNNING | PT_ST_FULL | PT_ST_AUTOSTOP | PT_ST_DEAD) & 0xc0u) == 0 &&
                   PT_ST_EPOCH_SHIFT >= 8,
               "fast_clk_key's bits are in no state word");

/* Slot s's writer at nesting level l. */
static inline struct pt_tw *tw_at(unsigned s, unsigned l)
{
	unsigned b = fast_b();
	if (l == 0)
		s = s == b ? 0 : s == 0 ? b : s;
	return &pt_rec.tw[s][l];
}

static void tw_swap0(unsigned r)
{
	struct pt_tw t = pt_rec.tw[0][0];
	pt_rec.tw[0][0] = pt_rec.tw[r][0];
	pt_rec.tw[r][0] = t;
}

/* The end of an event written the general way at level 0 (pt_nest held,
 * pt_fast disarmed), w the control word it acted on: arm the fast path
 * if the next event can take it, binding the running slot's writer to
 * tw[0][0] first if another slot is bound. */
static void fast_arm(uint32_t w)
{
	uint32_t att = atomic_load_explicit(&pt_proc.att, memory_order_acquire);
	uint32_t live = w & att & PT_LIVE_MASK;

	if (w != atomic_load_explicit(&pt_proc.seen, memory_order_relaxed) || !live ||
	    (live & (live - 1)) || (w & PT_LIVE_MASK) != live) /* (w's bit says b) */
		return;
	unsigned s = (unsigned)__builtin_ctz(live), b = fast_b();
	if (s != b) {
		if (b)
			tw_swap0(b); /* slot 0's writer home again */
		if (s)
			tw_swap0(s);
		pt_rec.fast.w = s << 8; /* (disarmed: pt_nest held, the caller did) */
	}
	struct pt_view *sl = pt_view_att(s);
	struct pt_tw *tw = &pt_rec.tw[0][0];
	uint32_t st = atomic_load_explicit(&sl->hdr->state, memory_order_acquire);
	if (!(st & PT_ST_RUNNING) || sl->test_hdr_filter || !tw->key ||
	    tw->key != pt_tw_key(sl, st) || tw->idx >= sl->nchunks)
		return;
	char *data = pt_chunk_data(sl, tw->idx);
	uintptr_t cw = (uintptr_t)&sl->chunks[tw->idx].commit - (uintptr_t)sl->hdr;
	/* (the chunk table after the header, as in every segment: the test
	 * costs nothing per event) */
	if ((uintptr_t)&sl->chunks[tw->idx].commit < (uintptr_t)sl->hdr || cw > UINT32_MAX ||
	    sl->hdr->attr.max_data != sl->max_data)
		return;
	/* the thread's cached object forgotten (a new chunk, objmap.c): not
	 * before the next event has looked its caller up again, the general
	 * way, since the path looks only at callers other than the last
	 * record's */
	if (!pt_obj.span)
		return;
	pt_rec.fast.data = data;
	pt_rec.fast.hdr = sl->hdr;
	pt_rec.fast.cw = (uint32_t)cw;
	pt_rec.fast.st = st | fast_clk_key(pt_clock_tsc);
	pt_rec.fast.lim = sl->chunk_size;
	pt_rec.fast.w = w;
}

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
	/* in flight (layout.h, PT_COMMIT_BUSY): marked before the clock is
	 * read, in the chunk this writer holds; cleared by the commit below,
	 * or by the seal when the event goes into a new chunk, which is taken
	 * marked and stamps the event again once it is published */
	uint32_t key = pt_tw_key(sl, st);
	if (tw->key == key)
		atomic_store_explicit(&sl->chunks[tw->idx].commit, tw->pos | PT_COMMIT_BUSY,
		                      memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t ts = pt_now();

	/* a thread that moved to a CPU whose TSC reads a little lower keeps
	 * its timestamps in program order */
	if (PT_UNLIKELY(ts < tw->last_ts) && tw->last_ts - ts < (1ull << 40))
		ts = tw->last_ts;
	/* the short header when the caller is the chunk's last record's and the
	 * chunk's base is near (layout.h) */
	unsigned wide = addr != tw->addr || (ts - tw->base_ts) >> 32;
	uint32_t rec = PT_REC_BYTES(n, wide);
	if (PT_UNLIKELY(tw->key != key || tw->pos + rec > sl->chunk_size ||
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
		/* stamped again, now that the new chunk is published with its
		 * mark set: the stamp read before the seal was in no chunk a
		 * reader could see marked in between (not before the chunk's
		 * base, nor before the end of a wait for room) */
		ts = pt_now();
		if (ts < tw->last_ts)
			ts = tw->last_ts;
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

/* Into each running stream, or counted lost when nested deeper than we
 * keep chunks for. */
static void record_each(trace_event_id_t id, const void *data, size_t len, uint32_t live,
                        void *addr, unsigned level)
{
	while (live) {
		unsigned s = (unsigned)__builtin_ctz(live);
		live &= live - 1;
		if (PT_LIKELY(level < PT_LEVELS))
			write_one(pt_view_att(s), tw_at(s, level), (int)s, level, id, data, len,
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
	uint32_t w = atomic_load_explicit(&pt_ctl->live, memory_order_acquire);
	if (level == 0)
		fast_off(); /* the write may change tw[0][0] */
	record_each(id, data, len,
	            w & atomic_load_explicit(&pt_proc.att, memory_order_acquire) & PT_LIVE_MASK,
	            addr, level);
	if (level == 0)
		fast_arm(w);
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

/* No stream is running, yet the event got past the wanted bitmap: a
 * controller that left set it whole (control/slots.c, pt_slot_release) so
 * that this process would drop and unmap its view now rather than at
 * the next stream; or a resync waits to be retried.  The resync puts the
 * bitmap right again; with nothing to do, the bitmap alone. */
__attribute__((noinline, cold)) static void record_idle(uint32_t w)
{
	if (w != atomic_load_explicit(&pt_proc.seen, memory_order_relaxed))
		pt_resync();
	else
		pt_ctl_want_refresh(pt_ctl);
}

/* The general way, for an event the fast path below left before writing
 * anything (pt_nest back where it was): every test again, the first of
 * them whether the id is wanted by a running stream here at all (<trace.h>'s
 * test, for callers that did not make it: a superset, the write decides). */
__attribute__((noinline)) static void record_general(trace_event_id_t id, const void *data,
                                                     size_t len, void *addr)
{
	struct pt_ctl *c = pt_ctl;
	if (PT_LIKELY(!(atomic_load_explicit(&c->want[id / 64], memory_order_relaxed) >> (id % 64) &
	                1)))
		return;
	uint32_t w = atomic_load_explicit(&c->live, memory_order_relaxed);
	if (PT_UNLIKELY(!(w & PT_LIVE_MASK))) {
		record_idle(w);
		return;
	}
	record_check(id, data, len, w, addr);
}

/* A reader waits for the event just committed: wake it, then leave (the
 * stream stays mapped while this thread is marked busy).  h is the bound
 * slot's view's header, unless a signal handler's resync changed the
 * view meanwhile: then wake whoever waits. */
__attribute__((noinline, cold)) static void record_wake(struct pt_hdr *h)
{
	struct pt_view *sl = pt_view_att(fast_b());

	if ((!sl || sl->hdr != h || sl->policy != POSIX_TRACE_FLUSH) && /* its flusher: */
	    atomic_exchange_explicit(&h->waiters, 0, memory_order_acq_rel)) /* woken per chunk */
		pt_wake_readers(h);
	pt_leave(0);
}

/* Whether a 32-bit word is not 0, read relaxed: with gcc on x86-64 one
 * compare with the word in memory (an atomic load, as an aligned 4-byte
 * read is there), where gcc makes a load, then a test (clang turns the
 * asm's flag into more instructions than its own load and test, so it
 * gets the atomic load; so does TSan, which sees it). */
static inline int fast_nz(const _Atomic uint32_t *w)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__clang__)
	int nz;
	__asm__ volatile("cmpl $0, %1" : "=@ccnz"(nz) : "m"(*w));
	return nz;
#else
	return atomic_load_explicit(w, memory_order_relaxed) != 0;
#endif
}

/* The last r bytes of a payload (1 to 7), as pt_put_bytes puts them in
 * their word (zero above them), with no loop: 4, 2 and 1 bytes read from
 * the end down, so that no register but the word and the source is held */
static inline uint64_t fast_tail(const unsigned char *s, uint32_t r)
{
	uint64_t v = 0;
	if (r & 4) {
		uint32_t x;
		__builtin_memcpy(&x, s + (r & 3), 4);
		v = x;
	}
	if (r & 2) {
		uint16_t x;
		__builtin_memcpy(&x, s + (r & 1), 2);
		v = v << 16 | x;
	}
	if (r & 1)
		v = v << 8 | s[0];
	return v;
}

/* The payload into the record (pt_put_bytes' result): two words a step,
 * by an index that runs up to 0 from below (it is the loop's count and
 * both addresses' offset), then the last n % 16 bytes; fewer instructions
 * per word than pt_put_bytes' loop, and no loop for the last bytes, on
 * the path that counts. */
static inline void fast_put(pt_word *dst, const unsigned char *src, uint32_t n)
{
	uintptr_t k = n & ~(uintptr_t)15;
	const unsigned char *se = src + k; /* the pairs' end, where the rest begins */
	char *de = (char *)dst + k;

	if (k) {
		intptr_t i = -(intptr_t)k;
		do {
			uint64_t a, b;
			__builtin_memcpy(&a, se + i, 8);
			__builtin_memcpy(&b, se + i + 8, 8);
			atomic_store_explicit((pt_word *)(de + i), a, memory_order_relaxed);
			atomic_store_explicit((pt_word *)(de + i + 8), b, memory_order_relaxed);
			/* (the index stays the loop's: not made into two pointers
			 * and an end, two instructions a step more) */
			__asm__("" : "+r"(i));
		} while (i += 16);
	}
	if (n & 8) {
		uint64_t x;
		__builtin_memcpy(&x, se, 8);
		atomic_store_explicit((pt_word *)de, x, memory_order_relaxed);
		se += 8;
		de += 8;
	}
	if (PT_UNLIKELY(n & 7))
		atomic_store_explicit((pt_word *)de, fast_tail(se, n & 7), memory_order_relaxed);
}

/* The clock the fast path reads, clk being pt_clock_tsc's value for the
 * copy of the path (below) that reads it: the TSC with rdtsc, or rdtscp
 * (ordered), inline, with no call that would need registers saved; else
 * CLOCK_MONOTONIC through the vDSO.  A copy for each, so that the default
 * pays for no test of the others. */
static inline uint64_t fast_now(int clk, uint64_t *lo)
{
#if PT_HAVE_TSC && defined(__x86_64__)
	if (clk == PT_TSC_FAST) {
		/* (rdtsc itself: its low half is in rax already, zero above
		 * it, as a record's first word wants it; the builtin's result
		 * would be cut to 32 bits again) */
		uint64_t a, d;
		__asm__ volatile("rdtsc" : "=a"(a), "=d"(d));
		*lo = a;
		return d << 32 | a;
	}
#endif
	uint64_t ts;
#if PT_HAVE_TSC
	unsigned aux;
	if (clk == PT_TSC_FAST)
		ts = __rdtsc();
	else if (clk == PT_TSC_ORDERED)
		ts = __rdtscp(&aux);
	else
#endif
		ts = pt_mono_ns();
	*lo = ts & 0xffffffffu;
	return ts;
}
static void record_other_clock(trace_event_id_t id, const void *data, size_t len,
                               uintptr_t addr, int clk);

/* The general way for an event the fast path left (pt_nest already back
 * at 0), or the copy of the path for the thread's clock mode (armed in
 * another mode, the state word's test failed: the right copy's, which
 * leaves here too when the general way's turn has come). */
__attribute__((always_inline)) static inline void fast_leave(trace_event_id_t id,
                                                             const void *data, size_t len,
                                                             uintptr_t addr, int clk)
{
	if (PT_UNLIKELY(pt_clock_tsc != clk))
		record_other_clock(id, data, len, addr, clk);
	else
		record_general(id, data, len, (void *)addr);
}

/* A short record that found the clock behind or the chunk's base far,
 * after its in-flight mark and the writer's move (pt_nest held): the
 * writer moved back and the mark cleared (nothing written), then the
 * general way.  The caller is the last record's (tw->addr), and the
 * record's size comes from len: the path holds no register for either
 * past its use, and saves none. */
__attribute__((noinline, cold)) static void fast_undo(trace_event_id_t id, const void *data,
                                                      size_t len, int clk)
{
	struct pt_tw *tw = &pt_rec.tw[0][0];
	_Atomic uint32_t *cw = (_Atomic uint32_t *)((char *)pt_rec.fast.hdr + pt_rec.fast.cw);
	tw->pos -= PT_REC_BYTES(len, 0);
	atomic_store_explicit(cw, tw->pos, memory_order_relaxed);
	uintptr_t addr = (uintptr_t)tw->addr;
	pt_leave(0);
	fast_leave(id, data, len, addr, clk);
}

/* The record, once the checks before the clock passed (record_event):
 * the room in the chunk, the record's address, the in-flight mark, the
 * clock, then the writer's state and the record's words (w1 before the
 * payload: nothing is visible before the commit).  The commit word is
 * the header's chunk table's, at the offset fast_arm kept (pt_fast.cw);
 * the commit's value is read back from TLS after the copy.  wide is a
 * constant in each copy.  0: written; 1: nothing written, the general
 * way's to do; 2 (short records only): nothing written, and the general
 * way done (fast_undo, which holds no register of this frame). */
__attribute__((always_inline)) static inline int fast_write(trace_event_id_t id,
                                                            const void *data, uint32_t n,
                                                            uintptr_t addr, struct pt_hdr *h,
                                                            int clk, unsigned wide)
{
	struct pt_tw *tw = &pt_rec.tw[0][0];
	uint32_t pos = tw->pos, end = pos + PT_REC_BYTES(n, wide);
	if (PT_UNLIKELY(end > pt_rec.fast.lim))
		return 1;
	_Atomic uint32_t *cw = (_Atomic uint32_t *)((char *)h + pt_rec.fast.cw);
	pt_word *p = (pt_word *)(pt_rec.fast.data + pos);
	/* in flight: the mark before the clock is read (layout.h,
	 * PT_COMMIT_BUSY), on the line the commit stores to anyway (pos +
	 * BUSY: pos is below it); the compiler keeps it before the clock
	 * (the empty asm, a compiler barrier, is kept before the clock's
	 * volatile asm or builtin, and nothing is held in a register across
	 * it that the path could not as well read again); the CPU may show
	 * the store a little later, when its store buffer drains: the
	 * reader's slack, reader/read.c */
	atomic_store_explicit(cw, pos + PT_COMMIT_BUSY, memory_order_relaxed);
	tw->pos = end;
	__asm__ volatile("" : : : "memory");
	uint64_t lo, ts = fast_now(clk, &lo);
	if (PT_UNLIKELY(ts < tw->last_ts || (ts - tw->base_ts) >> 32)) {
		if (!wide) {
			fast_undo(id, data, n, clk);
			return 2;
		}
		tw->pos = pos;
		atomic_store_explicit(cw, pos, memory_order_relaxed); /* (nothing written) */
		return 1;
	}
	tw->nev++;
	tw->last_ts = ts;
	if (wide) {
		atomic_store_explicit(&p[PT_REC_W1(n)], pt_rec_w1(ts, addr), memory_order_relaxed);
		tw->addr = addr;
	}
	atomic_store_explicit(&p[0],
	                      lo | (uint64_t)id << 32 | (uint64_t)(wide ? PT_RF_WIDE : 0) << 44 |
	                          (uint64_t)n << 48,
	                      memory_order_relaxed); /* (pt_rec_w0) */
	fast_put(p + 1, data, n);
	return 0;
}

/* The end of an event fast_write wrote: the commit, which clears the
 * mark, then a reader that waits woken.  The header's address, the commit
 * word's offset from it and the commit's value are read back from TLS,
 * not held in registers across the copy. */
#define FAST_DONE()                                                                      \
	do {                                                                             \
		struct pt_hdr *h_ = pt_rec.fast.hdr;                                     \
		_Atomic uint32_t *cw_ = (_Atomic uint32_t *)((char *)h_ + pt_rec.fast.cw); \
		atomic_store_explicit(cw_, pt_rec.tw[0][0].pos, memory_order_release);     \
		if (PT_UNLIKELY(fast_nz(&h_->waiters))) {                                \
			record_wake(h_);                                                 \
			return;                                                          \
		}                                                                        \
		pt_leave(0);                                                             \
		return;                                                                  \
	} while (0)

/* A record with the wide header (a caller other than the last record's,
 * in the object of the thread's last event): its own frame, reached by a
 * tail call once record_event's checks passed (pt_nest held), so that the
 * short record's frame saves no register for it. */
__attribute__((always_inline)) static inline void fast_wide(trace_event_id_t id,
                                                            const void *data, size_t len,
                                                            uintptr_t addr, struct pt_hdr *h,
                                                            int clk)
{
	if (PT_LIKELY(addr - pt_obj.lo < pt_obj.span) &&
	    !fast_write(id, data, (uint32_t)len, addr, h, clk, 1))
		FAST_DONE();
	pt_leave(0);
	fast_leave(id, data, len, addr, clk);
}

#define FAST_WIDE(name, clk)                                                                   \
	__attribute__((noinline)) static void name(trace_event_id_t id, const void *data,       \
	                                           size_t len, uintptr_t addr, struct pt_hdr *h) \
	{                                                                                      \
		fast_wide(id, data, len, addr, h, clk);                                        \
	}
FAST_WIDE(fast_wide_tsc, PT_TSC_FAST)
FAST_WIDE(fast_wide_ordered, PT_TSC_ORDERED)
FAST_WIDE(fast_wide_mono, 0)

/* An event whose id is in range: the common case, written straight
 * through in one frame whose only calls are tail calls.  The thread not
 * inside posix_trace_event already (nesting level 0), the fast path armed
 * for this thread (struct pt_fast), nothing changed since its last
 * resync, one stream running, the stream's state what it was when armed,
 * the payload not cut, the caller the last record's (or in the object of
 * the thread's last event: fast_wide), room in the thread's open chunk,
 * the clock not behind and the chunk's base near.  When any of that is
 * not so, it leaves before writing anything and the general way
 * (record_general) tests everything again.  The guarantees are that
 * way's: the thread is marked busy (pt_nest) before it reads the live
 * word, so a shutdown that cleared the stream's bit waits for it (and
 * nothing of the stream is touched before that word is checked); a
 * signal handler that interrupts it sees the mark and records at level 1,
 * into a chunk of its own (and never touches the level-0 writer or
 * pt_fast); the chunk's geometry is the view's, checked when the segment
 * was attached and the chunk taken, and copied into pt_fast when it was
 * armed; and a stop, a clear, a shutdown or a stream that stopped itself
 * changes the header's state word, which every event compares with the
 * one armed (and with the clock mode's bits, fast_clk_key: a copy for
 * another mode leaves; no test of the mode before that).  (Measured piece
 * by piece against a minimal ring: bench/ablate.c, docs/performance.md;
 * counted: tests/fastpath_cost.) */
__attribute__((always_inline)) static inline void record_event(trace_event_id_t id,
                                                               const void *data, size_t len,
                                                               struct pt_ctl *c, uintptr_t addr,
                                                               int clk)
{
	if (PT_UNLIKELY(fast_nz(&pt_nest) || !data))
		goto general;
	atomic_store_explicit(&pt_nest, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	/* Whether pt_fast may be used: the control word as when armed (no
	 * change here since; a thread never armed, or disarmed, keeps a word
	 * with no stream running, which the next test fails), the slot still
	 * attached; then the stream's state word as when armed, one load from
	 * an address made from TLS.  Nothing is loaded through the view,
	 * nothing of the stream before the control word is checked. */
	struct pt_tw *tw = &pt_rec.tw[0][0];
	uint32_t w = atomic_load_explicit(&c->live, memory_order_acquire);
	uint32_t att = atomic_load_explicit(&pt_proc.att, memory_order_acquire);
	if (PT_UNLIKELY(w != pt_rec.fast.w || !(w & att)))
		goto bail;
	struct pt_hdr *h = pt_rec.fast.hdr;
	/* (the payload's bound: the header's copy, which fast_arm found the
	 * view's; a controller that changed it since cannot make a record
	 * leave its chunk, lim says where that ends) */
	if (PT_UNLIKELY((atomic_load_explicit(&h->state, memory_order_acquire) | fast_clk_key(clk)) !=
	                    pt_rec.fast.st ||
	                len > h->attr.max_data))
		goto bail;
	/* the stream's own filter (a copy in the view is what a resync
	 * keeps; a change of the filter changes the control word) */
	const char *fw = (const char *)h->filter + (uintptr_t)(id / 64) * 8;
	if (atomic_load_explicit((const _Atomic uint64_t *)fw, memory_order_relaxed) >> (id % 64) & 1)
		goto done;
	/* the caller against the last record's: a short header here, or a
	 * wide one in a frame of its own */
	if (PT_UNLIKELY(addr != tw->addr)) {
		if (clk == PT_TSC_FAST)
			fast_wide_tsc(id, data, len, addr, h);
		else if (clk == PT_TSC_ORDERED)
			fast_wide_ordered(id, data, len, addr, h);
		else
			fast_wide_mono(id, data, len, addr, h);
		return;
	}
	int r = fast_write(id, data, (uint32_t)len, addr, h, clk, 0);
	if (PT_UNLIKELY(r)) {
		if (r == 2)
			return;
		goto bail;
	}
	FAST_DONE();
done:
	pt_leave(0);
	return;
bail:
	pt_leave(0);
general:
	fast_leave(id, data, len, addr, clk);
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

/* Not the clock of the copy that was called (clk): the right copy's.
 * (Every event of a process whose clock is not the default comes here
 * from the default copy: not cold.) */
__attribute__((noinline)) static void record_other_clock(trace_event_id_t id,
                                                               const void *data, size_t len,
                                                               uintptr_t addr, int clk)
{
	struct pt_ctl *c = pt_ctl; /* (not kept across the other copy's path) */
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

/* The id's range, whether a stream runs here, then the fast path itself
 * (record_event's default copy, in this frame: no call or jump in front
 * of it).  No second test of the wanted bitmap on the way: <trace.h>'s
 * callers just made it, and with a stream running the stream's filter
 * decides (and the general way makes it first).  (Aligned as
 * record_event_tsc is, for the same reason.) */
PT_API __attribute__((aligned(64))) void posix_trace_event(trace_event_id_t id,
                                                           const void *restrict data, size_t len)
{
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return; /* system ids cannot be forged; others are out of range */
	/* No stream running here (a caller without <trace.h>'s inline test,
	 * say): the general way's first test, at once (the fast path reads
	 * the word again once the thread is marked busy) */
	struct pt_ctl *c = pt_ctl;
	uint32_t w = atomic_load_explicit(&c->live, memory_order_relaxed);
	if (PT_UNLIKELY(!(w & PT_LIVE_MASK))) {
		/* what the general way does then, for an id <trace.h>'s test
		 * let through (record_idle), after that test (for a caller
		 * that did not make it) */
		if (atomic_load_explicit(&c->want[id / 64], memory_order_relaxed) >> (id % 64) & 1)
			record_idle(w);
		return;
	}
	record_event(id, data, len, c, (uintptr_t)__builtin_return_address(0), PT_TSC_FAST);
}

/* posix_trace_event() for <trace.h>'s inline test, which has just found
 * the id's bit set in the wanted bitmap: the id's range (the test masks
 * the index, so an id out of range may pass it), then the fast path,
 * whose first test of the control word stands for the function's test
 * that a stream runs (with none, the word is not the armed one, and the
 * general way tests everything).  3 instructions and a load fewer an
 * event than the function. */
PT_API __attribute__((aligned(64))) void __posix_trace_event_wanted(trace_event_id_t id,
                                                                    const void *restrict data,
                                                                    size_t len)
{
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return;
	record_event(id, data, len, pt_ctl, (uintptr_t)__builtin_return_address(0), PT_TSC_FAST);
}

/* Extension: the same, recorded as if called from site (a wrapper passes
 * __builtin_return_address(0): its own caller's), or from the caller when
 * site is NULL.  <trace.h> has no inline test for it: the wanted bitmap's
 * test first, then a copy of the same path, reached by a jump. */
PT_API void posixtrace_event_at(trace_event_id_t id, const void *restrict data, size_t len,
                                const void *site)
{
	if (id - PT_SYS_IDS >= PT_NIDS - PT_SYS_IDS)
		return;
	struct pt_ctl *c = pt_ctl;
	if (PT_LIKELY(!(atomic_load_explicit(&c->want[id / 64], memory_order_relaxed) >> (id % 64) &
	                1)))
		return;
	record_event_tsc(id, data, len, c,
	                 site ? (uintptr_t)site : (uintptr_t)__builtin_return_address(0));
}

/* Extension: a named trigger, the system event PT_SYS_TRIGGER with the
 * name as payload, through the general way (system ids never pass the
 * wanted bitmap, and the fast path is for user ids): the same tests as an
 * event of another id, then the write, which tests each stream's filter. */
PT_API void posixtrace_trigger(const char *name)
{
	struct pt_ctl *c = pt_ctl;
	uint32_t w = atomic_load_explicit(&c->live, memory_order_relaxed);
	size_t len = 0;

	if (PT_LIKELY(!(w & PT_LIVE_MASK)) || !name)
		return;
	while (len < PT_TRIGGER_NAME_MAX && name[len])
		len++;
	void *addr = __builtin_return_address(0);
	if (PT_UNLIKELY(w != atomic_load_explicit(&pt_proc.seen, memory_order_relaxed)))
		record_resync(PT_SYS_TRIGGER, name, len, w, addr);
	else
		record_live(PT_SYS_TRIGGER, name, len, w, addr);
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
	fast_off(); /* the rows change below */
	uint32_t att = atomic_load_explicit(&pt_proc.att, memory_order_acquire);
	while (att) {
		unsigned s = (unsigned)__builtin_ctz(att);
		struct pt_view *sl = pt_view(s);
		att &= att - 1;
		for (unsigned l = 0; l < PT_LEVELS; l++) {
			struct pt_tw *tw = tw_at(s, l);
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
	memset(pt_rec.tw, 0, sizeof pt_rec.tw);
	memset(&pt_rec.fast, 0, sizeof pt_rec.fast);
	atomic_store(&pt_nest, 0);
}
