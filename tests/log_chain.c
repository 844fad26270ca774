/*
 * log_chain.c -- the reader's merge of blocks whose times overlap, when
 * they overlap in a chain all along the log: W writers' CHUNK blocks
 * written in turns, writer k's chunk j covering ticks from j*P + k*P/W
 * on, for P ticks, its events interleaved in time with the other
 * writers' (each a distinct time), so that every block overlaps the next
 * one in the file, and no group of blocks ever ends.
 *
 * Read back (pt_logr_next, through the block index and by a scan, and
 * pt_logr_next_batch), checked against what was written (the independent
 * witness): every event in non-decreasing timestamp order, exactly the
 * events written (per writer: their count, their sequence numbers, in the
 * payload, in order), no error event; and the bytes of blocks the merge
 * held at once (merge_peak) at most twice the writers' count times the
 * largest block.  The merge's bound (merge_cap, the tests' hook for
 * PT_LOGR_MERGE_BYTES) is lowered to 1 MiB so that a log of a few MiB
 * shows what a log of more than 64 MiB would; one such log is read with
 * the bound as it is too.  Then the bound below one block: the fallback
 * (the file's order), every event still read, each writer's in order.
 * And, from inside a merge: a rewind, a seek (every event from there on,
 * in order), reading stopped after a time (every event up to it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "t.h"
#include "../src/log/logpriv.h"
#include "../src/log/batch.h"

#define NS0   1700000000000000000ull
#define SEG   1000ull    /* the clock segment's first tick: ns = NS0 + tick - SEG */
#define T0    100000ull  /* the first chunk's first tick */
#define NEV   2000u      /* events a chunk */
#define STEP  8ull       /* ticks between a writer's events (>= the writers) */
#define P     (NEV * STEP)
#define ID    17
#define MAXW  4

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

static uint64_t thread_of(unsigned k)
{
	return 0x100 + k;
}

/* Writer k's chunk j (of nw writers): NEV records, each 8 bytes of
 * payload (k << 32 | its sequence number). */
static void chunk(struct pt_logw *w, unsigned nw, unsigned k, uint64_t j)
{
	static uint64_t recs[2 * NEV];
	uint64_t start = T0 + j * P + k * (P / nw) + k;
	uint32_t n = 0;

	for (uint32_t i = 0; i < NEV; i++) {
		uint64_t tick = start + i * STEP;
		recs[n++] = (tick & 0xffffffffull) | (uint64_t)ID << 32 | (uint64_t)8 << 48;
		recs[n++] = (uint64_t)k << 32 | (j * NEV + i);
	}
	struct pt_logw_chunk c = {
		.pid = 100, .thread = thread_of(k), .recs = recs, .len = 8 * n, .nev = NEV,
		.btick = start, .addr = 0x401000, .seg = SEG, .mult = 1ull << 32,
		.nsoff = (int64_t)NS0, .base = NS0 + start - SEG, .below = UINT64_MAX,
	};
	REQUIRE(pt_logw_chunk(w, &c) == 1);
}

static void write_log(const char *path, unsigned nw, uint64_t nchunks)
{
	struct pt_attr_img a;
	struct pt_logw w;
	struct pt_logw_opt o = { .chunk_size = 64 << 10 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	REQUIRE(fd >= 0);
	memset(&a, 0, sizeof a);
	a.max_data = 64, a.log_policy = POSIX_TRACE_APPEND, a.has_log = 1;
	a.stream_policy = POSIX_TRACE_FLUSH;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	CHECK_RC(pt_logw_name(&w, ID, "chain"), 0);
	for (uint64_t j = 0; j < nchunks; j++)
		for (unsigned k = 0; k < nw; k++)
			chunk(&w, nw, k, j);
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	close(fd);
}

struct seen {
	uint64_t next[MAXW]; /* each writer's next sequence number */
	uint64_t events, errors, back, bad, last_ts;
	int any;             /* (after a seek) a writer's first may be any: */
	int started[MAXW];
	uint64_t first[MAXW]; /* the first one read */
};

/* The time of writer k's event seq (of nw writers) */
static uint64_t ts_of(unsigned nw, unsigned k, uint64_t seq)
{
	uint64_t j = seq / NEV, i = seq % NEV;

	return NS0 + T0 + j * P + k * (P / nw) + k + i * STEP - SEG;
}

/* One event read: its time, id, writer's thread and payload (k, seq) */
static void see(struct seen *s, unsigned nw, uint64_t ts, unsigned id, uint64_t thread,
                uint32_t k, uint32_t seq)
{
	if (id == POSIX_TRACE_ERROR) {
		s->errors++;
		return;
	}
	s->events++;
	if (s->events > 1 && ts < s->last_ts)
		s->back++;
	s->last_ts = ts;
	if (k < nw && s->any && !s->started[k]) {
		s->started[k] = 1;
		s->first[k] = s->next[k] = seq;
	}
	if (id != ID || k >= nw || thread != thread_of(k) || seq != s->next[k]) {
		if (s->bad++ < 3)
			fprintf(stderr, "  event %llu: id %u, writer %u (thread %#llx), seq %u, want %llu\n",
			        (unsigned long long)s->events, id, k, (unsigned long long)thread, seq,
			        k < nw ? (unsigned long long)s->next[k] : 0ull);
		if (k < nw)
			s->next[k] = seq;
	}
	if (k < nw)
		s->next[k]++;
}

/* Events of r into s (batch: pt_logr_next_batch, else pt_logr_next), to
 * the end or max of them. */
static void read_all(struct pt_logr *r, struct seen *s, unsigned nw, int batch, uint64_t max)
{
	if (batch) {
		static struct pt_ext_batch b;
		while (s->events + s->errors < max) {
			REQUIRE(pt_logr_next_batch(r, &b) == 0);
			if (!b.n)
				break;
			for (size_t i = 0; i < b.n; i++) {
				const struct pt_ext_bevent *e = &b.ev[i];
				REQUIRE(e->w < b.nw);
				if (e->id == ID)
					CHECK_EQ(e->flags, PT_EXT_BEV_QWORD);
				see(s, nw, e->ts, e->id, b.w[e->w].thread, e->hi, (uint32_t)e->word);
			}
		}
	} else {
		while (s->events + s->errors < max) {
			struct posix_trace_event_info ev;
			unsigned char buf[64];
			size_t len;
			int un = 0;
			uint64_t v = 0;
			REQUIRE(pt_logr_next(r, &ev, buf, sizeof buf, &len, &un) == 0);
			if (un)
				break;
			if (len == 8)
				memcpy(&v, buf, 8);
			see(s, nw, (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
			            (uint64_t)ev.posix_timestamp.tv_nsec,
			    (unsigned)ev.posix_event_id, (uint64_t)ev.posix_thread_id, (uint32_t)(v >> 32),
			    (uint32_t)v);
		}
	}
}

static uint32_t largest_block(const struct pt_logr *r)
{
	uint32_t m = 0;

	for (size_t i = 0; i < r->nitems; i++)
		m = r->items[i].len > m ? r->items[i].len : m;
	return m;
}

/* The log at path read (batch: pt_logr_next_batch, else pt_logr_next;
 * flags for the open; cap: the merge's bound, 0 as it is); ordered: the
 * events must come in timestamp order and the merge's memory be bounded */
static void read_log(const char *path, unsigned nw, uint64_t nchunks, int flags, int batch,
                     uint64_t cap, int ordered, const char *what)
{
	struct pt_logr r;
	struct seen s;
	int fd = open(path, O_RDONLY);

	memset(&s, 0, sizeof s);
	REQUIRE(fd >= 0);
	REQUIRE(pt_logr_open_opt(&r, fd, flags) == 0);
	r.merge_cap = cap;
	read_all(&r, &s, nw, batch, UINT64_MAX);
	uint64_t bound = 2ull * nw * largest_block(&r);
	printf("%s: %u writers, %llu blocks of at most %u bytes, %llu events; %llu out of order; "
	       "merge held at most %llu bytes (bound %llu)\n", what, nw,
	       (unsigned long long)r.nitems, largest_block(&r), (unsigned long long)s.events,
	       (unsigned long long)s.back, (unsigned long long)r.merge_peak,
	       (unsigned long long)bound);
	CHECK_EQ(s.errors, 0);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.events, nw * nchunks * NEV);
	for (unsigned k = 0; k < nw; k++)
		CHECK_EQ(s.next[k], nchunks * NEV);
	if (ordered) {
		CHECK_EQ(s.back, 0);
		CHECK(r.merge_peak <= bound);
	}
	pt_logr_close(&r);
	close(fd);
}

/* Log path read partway (inside a merge), then: rewound, read whole;
 * partway again, then a seek to writer 0's middle event, read on: every
 * event from then on; then reading stopped after that time, from the
 * start, and (mid) partway before it is stopped: every event up to then. */
static void read_moves(const char *path, unsigned nw, uint64_t nchunks, int batch,
                       const char *what)
{
	struct pt_logr r;
	struct seen s;
	uint64_t lost = 1, total = nchunks * NEV, t = ts_of(nw, 0, total / 2);
	int fd = open(path, O_RDONLY);

	REQUIRE(fd >= 0);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	r.merge_cap = 1u << 20;
	memset(&s, 0, sizeof s);
	read_all(&r, &s, nw, batch, 12345);
	pt_logr_rewind(&r);
	memset(&s, 0, sizeof s);
	read_all(&r, &s, nw, batch, UINT64_MAX);
	CHECK_EQ(s.back + s.bad + s.errors, 0);
	CHECK_EQ(s.events, nw * total);

	pt_logr_rewind(&r);
	memset(&s, 0, sizeof s);
	read_all(&r, &s, nw, batch, 777);
	CHECK_RC(pt_logr_seek(&r, t, &lost), 0);
	CHECK_EQ(lost, 0);
	memset(&s, 0, sizeof s);
	s.any = 1;
	read_all(&r, &s, nw, batch, UINT64_MAX);
	CHECK_EQ(s.back + s.bad + s.errors, 0);
	for (unsigned k = 0; k < nw; k++) {
		CHECK(s.started[k]);
		CHECK_EQ(s.next[k], total);
		CHECK(s.first[k] == 0 || ts_of(nw, k, s.first[k] - 1) < t);
		CHECK(s.first[k] > 0); /* (it did not start from the start) */
	}
	printf("%s: seek to the middle: %llu events read\n", what, (unsigned long long)s.events);

	for (int mid = 0; mid < 2; mid++) {
		pt_logr_stop_after(&r, UINT64_MAX);
		pt_logr_rewind(&r);
		memset(&s, 0, sizeof s);
		if (mid)
			read_all(&r, &s, nw, batch, 3333);
		pt_logr_stop_after(&r, t);
		read_all(&r, &s, nw, batch, UINT64_MAX);
		CHECK_EQ(s.back + s.bad + s.errors, 0);
		CHECK(s.events < nw * total);
		for (unsigned k = 0; k < nw; k++)
			CHECK(s.next[k] == total || ts_of(nw, k, s.next[k]) > t);
		printf("%s: stopped after the middle%s: %llu events read\n", what,
		       mid ? " (partway)" : "", (unsigned long long)s.events);
	}
	pt_logr_close(&r);
	close(fd);
}

int main(void)
{
	char path[] = "/tmp/pt-log-chain-XXXXXX";
	int fd = mkstemp(path);

	T_BEGIN(120);
	REQUIRE(fd >= 0);
	close(fd);

	/* 2 writers, ~6 MiB, the bound 1 MiB */
	write_log(path, 2, 100);
	read_log(path, 2, 100, 0, 0, 1u << 20, 1, "2 writers, next");
	read_log(path, 2, 100, PT_LOGR_SCAN, 0, 1u << 20, 1, "2 writers, next, scan");
	read_log(path, 2, 100, 0, 1, 1u << 20, 1, "2 writers, batch");
	read_moves(path, 2, 100, 0, "2 writers, next");
	read_moves(path, 2, 100, 1, "2 writers, batch");
	/* the bound below a block: the file's order, every event still read */
	read_log(path, 2, 100, 0, 0, 1, 0, "2 writers, bound 1 byte, next");
	read_log(path, 2, 100, 0, 1, 1, 0, "2 writers, bound 1 byte, batch");

	/* 4 writers */
	write_log(path, 4, 50);
	read_log(path, 4, 50, 0, 0, 1u << 20, 1, "4 writers, next");
	read_log(path, 4, 50, 0, 1, 1u << 20, 1, "4 writers, batch");
	read_moves(path, 4, 50, 0, "4 writers, next");

	/* more than 64 MiB, the bound as it is */
	write_log(path, 2, 1100);
	read_log(path, 2, 1100, 0, 0, 0, 1, "2 writers, 64 MiB bound, next");
	read_log(path, 2, 1100, 0, 1, 0, 1, "2 writers, 64 MiB bound, batch");
	unlink(path);
	T_END();
}
