/*
 * ablate.c -- where the flight recorder's cost above the floor goes (run
 * by `make bench`; issue 38).
 *
 * The floor (bench_util.h) is the least a per-thread ring recorder does
 * per event.  Each step the library's recording path takes on top of it
 * is added to the floor on its own, in a model built here from the same
 * kinds of memory the library uses (a control segment, a view, a stream
 * header on lines of their own, thread-local words):
 *
 *   inline   <trace.h>'s inline test: the wanted bitmap's word, a branch
 *   chain    the entry's own test, of the id's range (the library's entry
 *            is its writer: one function, no call in between)
 *   nest     pt_enter/pt_leave: the thread's registration and nesting word
 *   loads    the checks' loads: the control word against the one the
 *            thread kept, the attached slots; then the stream header's
 *            state, its address a thread-local word, against the state
 *            kept, and the payload's bound in the header: two loads deep,
 *            and none of it feeds the record's address, which comes from
 *            thread-local words, as the floor's does (event.c, struct
 *            pt_fast; all of the thread's words in one object, as pt_rec)
 *   filter   the stream's filter word in its header, a bit test
 *   commit   a release store of the chunk's commit offset, its place the
 *            header's address plus an offset kept in thread-local memory
 *   waiters  a load of the stream's waiters word, a branch
 *   book     the writer's bookkeeping, as struct pt_tw keeps it: room for
 *            the record, short or wide (caller address against the last
 *            one), the clock not behind, the chunk's base near; then
 *            position, count and last timestamp updated
 *   saves    a frame that saves and restores four callee-saved registers
 *            (x86-64 only; what the library's recording function did until
 *            2026-11-29: it saves none now, so "all" leaves this step out
 *            and the row says what the frame would cost)
 *
 * Each step is measured against the floor in the same run, the two
 * alternated (A/B/A/B, RUNS pairs of N events), so the machine's drift
 * falls on both; the table gives the median over pairs of the difference
 * and its spread.  "all" is the floor with every step, against which the
 * library's own recorder (a running LOOP stream) is also set the same way
 * ("rec-all"); the rows marked "+" add the steps one after another, in
 * the library's order, to show where the timestamp's latency stops hiding
 * them.  The "recorder" row, the library over the floor, is bench/bench's
 * own measurement (bench_vs_floor in bench_util.h: the same loops, pairs
 * and events), so that the two programs give the same figure.
 * Timed in the thread's CPU time; single-threaded; run it pinned
 * (taskset -c 1) when the machine is quietest.
 */
#include <errno.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include "../src/ext.h"
#include "bench_util.h"

#define RUNS 9
#define N 2000000ull
#define PAYLOAD 32
#define STREAM (16u << 20)

enum {
	S_INLINE = 1, S_CHAIN = 2, S_NEST = 4, S_LOADS = 8, S_FILTER = 16, S_COMMIT = 32,
	S_WAITERS = 64, S_BOOK = 128, S_SAVES = 256, S_ALL = 255 /* (the library's steps: not saves) */
};
#define M_CHUNK (256u << 10) /* a 16 MiB stream's chunk size */

/* the model's shared memory: each word on a line of its own, as the
 * library's control segment and stream header place them */
struct m_hdr {
	alignas(64) _Atomic uint32_t state;
	uint64_t max_data;
	alignas(64) _Atomic uint64_t filter[__TRACE_EVENT_ID_LIMIT / 64];
	alignas(64) _Atomic uint32_t waiters;
	alignas(64) _Atomic uint32_t commit;
};
struct m_ctl {
	alignas(64) _Atomic uint32_t live;
	alignas(64) _Atomic uint64_t want[__TRACE_EVENT_ID_LIMIT / 64];
};
static struct m_ctl *m_ctl;
/* the one stream: its header, then (pages on) a chunk; a step alone
 * reaches the header directly */
static struct {
	struct m_hdr h;
	alignas(4096) char chunk[64];
} m_seg;
static struct {
	_Atomic uint32_t att;
} m_proc;
/* one thread-local object, as the library's pt_rec: what struct pt_fast
 * keeps (the chunk, the header's address, the commit word's offset from
 * it, the state and control word kept, the chunk size), the nesting word
 * and registration, and the writer's chunk, as struct pt_tw keeps it */
static _Thread_local struct {
	struct {
		char *data;
		struct m_hdr *hdr;
		uint32_t cw, st, w, lim;
	} fast;
	_Atomic unsigned nest;
	int index;
	struct {
		uint32_t key, idx, pos, nev;
		uint64_t base_ts, last_ts, seq, addr;
	} tw;
} m_rec;
#define m_fast  m_rec.fast
#define m_nest  m_rec.nest
#define m_index m_rec.index
#define m_tw    m_rec.tw
static _Atomic uint64_t m_woken;
static trace_event_id_t id;

__attribute__((noinline)) static void m_register(void)
{
	m_index = 1;
}

/* a new chunk for the bookkeeping step (what pool.c does is not modelled) */
__attribute__((noinline)) static void m_new_chunk(uint64_t ts)
{
	m_tw.pos = 0;
	m_tw.nev = 0;
	m_tw.base_ts = m_tw.last_ts = ts;
	m_tw.addr = UINT64_MAX;
}

__attribute__((noinline)) static void m_wake(struct m_hdr *h)
{
	atomic_store(&h->waiters, 0);
	atomic_fetch_add(&m_woken, 1);
}

/* One event, the steps in `f` added to the floor, in the library's order. */
__attribute__((always_inline)) static inline void m_write(unsigned f, trace_event_id_t e,
                                                          const void *data, size_t len)
{
	struct m_hdr *h = &m_seg.h;
	unsigned level = 0;

	__asm__("" : "+r"(e), "+r"(data), "+r"(len)); /* no constant length, as in the library */
	if (f & S_NEST) {
		if (__builtin_expect(m_index == 0, 0))
			m_register();
		level = atomic_load_explicit(&m_nest, memory_order_relaxed);
		atomic_store_explicit(&m_nest, level + 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
	}
	if (f & S_LOADS) {
		uint32_t w = atomic_load_explicit(&m_ctl->live, memory_order_acquire);
		uint32_t att = atomic_load_explicit(&m_proc.att, memory_order_acquire);
		if (__builtin_expect(w != m_fast.w || !(w & att), 0))
			goto out;
		h = m_fast.hdr;
		if (__builtin_expect(atomic_load_explicit(&h->state, memory_order_acquire) !=
		                     m_fast.st || len > h->max_data, 0))
			goto out;
	}
	if (f & S_FILTER) {
		if (atomic_load_explicit(&h->filter[e / 64], memory_order_relaxed) >> (e % 64) & 1)
			goto out;
	}
#if defined(__x86_64__)
	if (f & S_SAVES)
		__asm__ volatile("" : : : "rbx", "r12", "r13", "r14");
#endif
	/* (the library compares the caller with the last one before it reads
	 * the clock, the rest after) */
	uintptr_t addr = (uintptr_t)__builtin_return_address(0);
	unsigned wide = (f & S_BOOK) && addr != m_tw.addr;
	uint64_t ts = bench_tsc();
	if (f & S_BOOK) {
		uint32_t rec = (uint32_t)((len + 7) & ~(size_t)7) + (wide ? 16 : 8);
		if (__builtin_expect(m_tw.pos + rec > m_fast.lim || ts < m_tw.last_ts ||
		                     (ts - m_tw.base_ts) >> 32, 0)) {
			m_new_chunk(ts);
			rec = (uint32_t)((len + 7) & ~(size_t)7) + 16;
		}
		m_tw.pos += rec;
		m_tw.nev++;
		m_tw.last_ts = ts;
		if (__builtin_expect(wide, 0))
			m_tw.addr = addr;
	}
	bench_ring_put(ts, e, data, len);
	if (f & S_COMMIT)
		atomic_store_explicit((_Atomic uint32_t *)((char *)h + m_fast.cw),
		                      (uint32_t)bench_ring.pos, memory_order_release);
	if ((f & S_WAITERS) &&
	    __builtin_expect(atomic_load_explicit(&h->waiters, memory_order_relaxed) != 0, 0))
		m_wake(h);
out:
	if (f & S_NEST) {
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&m_nest, level, memory_order_release);
	}
}

/* A variant: the event function (with S_CHAIN, the entry's test of the
 * id first, as event.c's posix_trace_event makes it) and its loop. */
/* (each function on a 64-byte boundary: where code falls moves a loop
 * like this one by a few tenths of a ns, which would fall on one side) */
#define VARIANT(name, F)                                                                        \
	__attribute__((noinline, aligned(64))) static void event_##name(trace_event_id_t e, const void *d,    \
	                                                   size_t n)                             \
	{                                                                                        \
		if (((F) & S_CHAIN) && e - PT_SYS_IDS >= __TRACE_EVENT_ID_LIMIT - PT_SYS_IDS)    \
			return;                                                                  \
		m_write(F, e, d, n);                                                             \
	}                                                                                        \
	__attribute__((aligned(64))) static double loop_##name(uint64_t count)                   \
	{                                                                                        \
		unsigned char buf[PAYLOAD] = { 0 };                                              \
		double t0 = bench_cpu_us();                                                      \
		for (uint64_t i = 0; i < count; i++) {                                           \
			buf[0] = (unsigned char)i;                                               \
			if (!((F) & S_INLINE) ||                                                 \
			    __builtin_expect(atomic_load_explicit(&m_ctl->want[(id / 64) % 16],  \
			                                          memory_order_relaxed) >>       \
			                             (id % 64) & 1, 1))                          \
				event_##name(id, buf, PAYLOAD);                                  \
		}                                                                                \
		return (bench_cpu_us() - t0) * 1e3 / (double)count;                              \
	}

VARIANT(floor, 0)
VARIANT(inline, S_INLINE)
VARIANT(chain, S_CHAIN)
VARIANT(nest, S_NEST)
VARIANT(loads, S_LOADS)
VARIANT(filter, S_FILTER)
VARIANT(commit, S_COMMIT)
VARIANT(waiters, S_WAITERS)
VARIANT(book, S_BOOK)
VARIANT(saves, S_SAVES)
VARIANT(all, S_ALL)
/* the steps one after another, in the library's order */
VARIANT(c2, S_INLINE | S_CHAIN)
VARIANT(c3, S_INLINE | S_CHAIN | S_NEST)
VARIANT(c4, S_INLINE | S_CHAIN | S_NEST | S_LOADS)
VARIANT(c5, S_INLINE | S_CHAIN | S_NEST | S_LOADS | S_FILTER)
VARIANT(c6, S_INLINE | S_CHAIN | S_NEST | S_LOADS | S_FILTER | S_COMMIT)
VARIANT(c7, S_INLINE | S_CHAIN | S_NEST | S_LOADS | S_FILTER | S_COMMIT | S_WAITERS)
VARIANT(c8, S_ALL & ~S_SAVES)

static double cpu_ns(void)
{
	return bench_cpu_us() * 1e3;
}

/* the library's own recorder, through <trace.h>'s inline test */
BENCH_EVENT_LOOP(loop_recorder, posix_trace_event, id, PAYLOAD, cpu_ns)

struct row {
	const char *name, *what;
	double (*loop)(uint64_t);
	double (*base)(uint64_t);
};
static double row_ns[24][RUNS], row_diff[24][RUNS]; /* per row: its time, B - A */

static void die(const char *what, int rc)
{
	fprintf(stderr, "ablate: %s: %s\n", what, strerror(rc));
	exit(1);
}

int main(void)
{
	static struct m_ctl ctl;
	trace_attr_t attr;
	trace_id_t trid;
	int rc;

	if ((rc = posix_trace_eventid_open("ablate.event", &id)) != 0)
		die("posix_trace_eventid_open", rc);
	m_ctl = &ctl;
	atomic_store(&m_seg.h.state, 1);
	m_seg.h.max_data = PAYLOAD;
	atomic_store(&ctl.live, 0x100 | 1);
	atomic_store(&ctl.want[(id / 64) % 16], 1ull << (id % 64));
	atomic_store(&m_proc.att, 1);
	m_fast.data = m_seg.chunk;
	m_fast.hdr = &m_seg.h;
	m_fast.cw = (uint32_t)offsetof(struct m_hdr, commit);
	m_fast.st = 1;
	m_fast.w = 0x100 | 1;
	m_fast.lim = M_CHUNK;
	if (bench_ring_init(STREAM) != 0)
		die("the floor's ring", ENOMEM);

	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP);
	posix_trace_attr_setstreamsize(&attr, STREAM);
	if ((rc = posix_trace_create(0, &attr, &trid)) != 0)
		die("posix_trace_create", rc);
	posix_trace_attr_destroy(&attr);
	posix_trace_start(trid);

	struct row rows[] = {
		{ "inline", "the inline test (wanted bitmap word, branch)", loop_inline, loop_floor },
		{ "chain", "the entry's test of the id", loop_chain, loop_floor },
		{ "nest", "pt_enter/pt_leave (registration test, nesting word)", loop_nest,
		  loop_floor },
		{ "loads", "the checks' loads: control word, attached slots; header (from TLS) -> state, payload bound", loop_loads,
		  loop_floor },
		{ "filter", "the filter word (header), a bit test", loop_filter, loop_floor },
		{ "commit", "the commit store (release, a line of its own)", loop_commit,
		  loop_floor },
		{ "waiters", "the waiters load, a branch", loop_waiters, loop_floor },
		{ "book", "the writer's bookkeeping (struct pt_tw's checks and updates)", loop_book,
		  loop_floor },
		{ "saves", "four callee-saved registers saved and restored", loop_saves, loop_floor },
		{ "+chain", "one after another: inline, chain", loop_c2, loop_floor },
		{ "+nest", "... and nest", loop_c3, loop_floor },
		{ "+loads", "... and loads", loop_c4, loop_floor },
		{ "+filter", "... and filter", loop_c5, loop_floor },
		{ "+commit", "... and commit", loop_c6, loop_floor },
		{ "+waiters", "... and waiters", loop_c7, loop_floor },
		{ "+book", "... and book", loop_c8, loop_floor },
		{ "all", "every step the library takes (as +book: it saves no register)", loop_all,
		  loop_floor },
		{ "rec-all", "the library over the model with every step", loop_recorder, loop_all },
	};
	const unsigned nrows = sizeof rows / sizeof rows[0];
	double fl[RUNS];

	for (unsigned i = 0; i < nrows; i++) { /* warm-up: pages, branches, caches */
		rows[i].loop(N / 4);
		rows[i].base(N / 4);
	}
	for (int k = 0; k < RUNS; k++) {
		fl[k] = loop_floor(N);
		for (unsigned i = 0; i < nrows; i++) {
			/* A/B in one order on even runs, B/A on odd ones */
			double a, b;
			if (k & 1) {
				b = rows[i].loop(N);
				a = rows[i].base(N);
			} else {
				a = rows[i].base(N);
				b = rows[i].loop(N);
			}
			row_ns[i][k] = b;
			row_diff[i][k] = b - a;
		}
	}
	/* the library over the floor: bench/bench's measurement, the same
	 * code (bench_util.h), so the two programs give one figure */
	struct bench_vs vs;
	if (bench_vs_floor(id, NULL, &vs) != 0)
		die("the floor's ring", ENOMEM);
	posix_trace_shutdown(trid);
	qsort(fl, RUNS, sizeof *fl, bench_cmp_double);

	printf("ablation: the recorder's steps over the floor, %d interleaved pairs of %llu "
	       "events, %d-byte payload, medians (min..max of the differences)\n\n",
	       RUNS, (unsigned long long)N, PAYLOAD);
	printf("floor (a minimal per-thread ring, bench_util.h): %.2f ns/event (%.2f..%.2f)\n\n",
	       fl[RUNS / 2], fl[0], fl[RUNS - 1]);
	printf("| step | added to | ns/event | difference, ns | spread |\n|---|---|---:|---:|---|\n");
	for (unsigned i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double *b = row_ns[i], *d = row_diff[i];
		qsort(b, RUNS, sizeof *b, bench_cmp_double);
		qsort(d, RUNS, sizeof *d, bench_cmp_double);
		printf("| %s: %s | %s | %.2f | %+.2f | %+.2f..%+.2f |\n", r->name, r->what,
		       r->base == loop_floor ? "floor" : "all", b[RUNS / 2], d[RUNS / 2], d[0],
		       d[RUNS - 1]);
		bench_json("ablate", r->name, "added_to_floor", r->base == loop_floor ? 1.0 : 0.0,
		           "ns_per_event", b[RUNS / 2], "difference_ns", d[RUNS / 2], "low_ns", d[0],
		           "high_ns", d[RUNS - 1], NULL);
		if (r->loop == loop_all) { /* the library next, then the library over all */
			printf("| recorder: the library, posix_trace_event into a LOOP stream (%d "
			       "pairs of %llu, as bench/bench) | floor | %.2f | %+.2f | %+.2f..%+.2f |\n",
			       BENCH_VS_RUNS, (unsigned long long)BENCH_VS_EVENTS, vs.rec, vs.above,
			       vs.lo, vs.hi);
			bench_json("ablate", "recorder", "added_to_floor", 1.0, "ns_per_event", vs.rec,
			           "difference_ns", vs.above, "low_ns", vs.lo, "high_ns", vs.hi, NULL);
		}
	}
	return atomic_load(&m_woken) != 0; /* no model waiter ever: a wake is a bug */
}
