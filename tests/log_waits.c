/*
 * log_waits.c -- the no-loss waits in the log's summary (format 10): each
 * writer's posixtrace_noloss_wait events, how many, their payloads (ns)
 * added up and the longest, counted by the writer as it writes, so that
 * `info` tells them without reading the events.
 *
 * A log written straight with the log writer: a thread's chunks as CHUNK
 * blocks (one of few runs, whose waits the chunk's walk adds up; one whose
 * types take turns every record, more runs than the walk keeps, counted
 * from a converted copy; waits back to back, which never go the walk's
 * quick way), a second thread's events as events blocks (waits between
 * short records of the same shape, back to back too), a third that never
 * waits.  Checked, against what this test wrote and against the waits
 * the full reader returns (the independent witness):
 *   - format 10: the summary's WAITS entries, through pt_log_summary_read
 *     and pt_ext_log_summary (waits_known), exactly;
 *   - format 9 (the writer's version option): the same log has no WAITS
 *     entry, and pt_ext_log_summary says the waits are not known;
 *   - the format 10 log relabelled 9: its WAITS entries are of a kind
 *     format 9 does not have: no summary (ENOENT), every wait still read;
 *   - a wait whose payload is not 8 bytes: the reader's pass does not add
 *     it, the summary does not either, and the waits are not known (they
 *     do not add up to the type's count);
 *   - no wait at all: known, every writer's zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include "t.h"
#include "../src/log/logpriv.h"
#include "../src/ext.h"

#define NS0   1700000000000000000ull
#define T0    1000000ull /* the chunks' first tick */
#define SEG   1000ull    /* the clock segment's first tick: ns = NS0 + tick - SEG */
#define WAIT  PT_SYS_NOLOSS_WAIT

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

struct who { int32_t pid; uint64_t thread; struct pt_log_waits w; };
static struct who g_who[3] = { { 100, 0x1, { 0, 0, 0 } }, { 100, 0x2, { 0, 0, 0 } },
	                       { 101, 0x3, { 0, 0, 0 } } };

static void add(struct pt_log_waits *w, uint64_t v)
{
	w->n++;
	w->ns += v;
	w->max = v > w->max ? v : w->max;
}

/* One chunk record of type id at tick, len bytes of payload (v in its
 * first 8), short, into recs at *k (words). */
static void put_rec(uint64_t *recs, uint32_t *k, unsigned id, uint64_t tick, uint32_t len,
                    uint64_t v)
{
	recs[(*k)++] = (tick & 0xffffffffull) | (uint64_t)id << 32 | (uint64_t)len << 48;
	for (uint32_t j = 0; j < (len + 7) / 8; j++)
		recs[(*k)++] = j ? 0x5a5a5a5a5a5a5a5aull : v;
}

/* A chunk of thread 0: nev records from tick on, made by kind (0: few
 * runs, waits in pairs; 1: a, b, wait taking turns every record; none: b
 * in place of each wait); the waits it holds noted.  1 if the log took
 * it. */
static int chunk(struct pt_logw *w, int kind, uint64_t tick, uint32_t nev, int none)
{
	static uint64_t recs[8192];
	uint32_t k = 0;

	for (uint32_t i = 0; i < nev; i++) {
		unsigned id = kind ? (i % 3 == 0 ? 17 : i % 3 == 1 ? 18 : WAIT)
		                   : (i % 100 >= 40 && i % 100 < 42 ? WAIT : i % 100 < 70 ? 17 : 18);
		uint64_t v = 1000 + (tick + i) % 9973;
		id = none && id == WAIT ? 18 : id;
		put_rec(recs, &k, id, tick + i * 10, 8, v);
		if (id == WAIT)
			add(&g_who[0].w, v);
	}
	struct pt_logw_chunk c = {
		.pid = g_who[0].pid, .thread = g_who[0].thread, .recs = recs, .len = 8 * k,
		.nev = nev, .btick = T0, .addr = 0x401000, .seg = SEG, .mult = 1ull << 32,
		.nsoff = (int64_t)NS0, .base = NS0 + tick - SEG, .below = UINT64_MAX,
	};
	return pt_logw_chunk(w, &c);
}

/* The log at path, format version (0: the writer's own); odd: one wait of
 * thread 1 with a 4-byte payload; none: no wait at all.  Notes what was
 * written in g_who. */
static void write_log(const char *path, unsigned version, int odd, int none)
{
	struct pt_attr_img a;
	struct pt_logw w;
	struct pt_logw_opt o = { .version = version, .chunk_size = 64 << 10 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	REQUIRE(fd >= 0);
	for (int i = 0; i < 3; i++)
		g_who[i].w = (struct pt_log_waits){ 0, 0, 0 };
	memset(&a, 0, sizeof a);
	a.max_data = 64, a.log_policy = POSIX_TRACE_APPEND, a.has_log = 1;
	a.stream_policy = POSIX_TRACE_FLUSH;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	CHECK_RC(pt_logw_name(&w, WAIT, "posixtrace_noloss_wait"), 0);
	CHECK_RC(pt_logw_name(&w, 17, "a"), 0);
	CHECK_RC(pt_logw_name(&w, 18, "b"), 0);
	uint64_t tick = T0;
	/* thread 0: two chunks of each kind */
	for (int c = 0; c < 4; c++, tick += 100000)
		CHECK_EQ(chunk(&w, c % 2, tick, 600, none), 1);
	/* thread 1, events blocks: a, a, wait, wait, a, wait, b, ... */
	uint64_t ns = NS0 + tick - SEG;
	for (uint32_t i = 0; i < 3000; i++, ns += 10) {
		unsigned id = none ? 17 : i % 7 == 2 || i % 7 == 3 || i % 7 == 5 ? WAIT : i % 7 == 6 ? 18 : 17;
		uint64_t v = 500 + i * 37 % 7919;
		uint32_t len = odd && i == 100 ? 4 : 8;
		if (id == WAIT && len == 8)
			add(&g_who[1].w, v);
		CHECK_RC(pt_logw_event(&w, ns, g_who[1].pid, g_who[1].thread, 0x402000, id, 0, &v, len),
		         0);
	}
	/* thread 2: never waits */
	for (uint32_t i = 0; i < 500; i++, ns += 10)
		CHECK_RC(pt_logw_event(&w, ns, g_who[2].pid, g_who[2].thread, 0x403000, 17 + i % 2, 0,
		                       &i, sizeof i), 0);
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	close(fd);
}

/* The waits the full reader returns, per writer of g_who, into got; the
 * waits of any other writer: a failure.  Its error events: how many. */
static uint64_t read_waits(const char *path, struct pt_log_waits got[3])
{
	uint64_t errs = 0;
	struct pt_logr r;
	int fd = open(path, O_RDONLY);

	REQUIRE(fd >= 0);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	memset(got, 0, 3 * sizeof *got);
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char buf[64];
		size_t len;
		int un = 0;
		REQUIRE(pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un) == 0);
		if (un)
			break;
		errs += ev.posix_event_id == POSIX_TRACE_ERROR;
		if (ev.posix_event_id != WAIT || len != 8)
			continue;
		uint64_t v;
		memcpy(&v, buf, 8);
		int k = 0;
		while (k < 3 && (g_who[k].pid != ev.posix_pid ||
		                 g_who[k].thread != (uint64_t)ev.posix_thread_id))
			k++;
		CHECK(k < 3);
		if (k < 3)
			add(&got[k], v);
	}
	pt_logr_close(&r);
	close(fd);
	return errs;
}

static int same(const struct pt_log_waits *a, const struct pt_log_waits *b)
{
	return a->n == b->n && a->ns == b->ns && a->max == b->max;
}

/* The summary's waits of log path: through the format reader and the
 * API, checked against g_who (known: the waits are said) */
static void check_summary(const char *path, int known, const char *what)
{
	struct pt_log_summary s;
	struct pt_ext_summary *x = NULL;
	int fd = open(path, O_RDONLY);

	REQUIRE(fd >= 0);
	CHECK_RC(pt_log_summary_read(fd, &s), 0);
	CHECK_EQ(s.nwr, 3);
	for (uint32_t i = 0; i < s.nwr && i < 3; i++) {
		const struct pt_log_waits want = known ? g_who[i].w : (struct pt_log_waits){ 0, 0, 0 };
		CHECK_EQ(s.wr[i].pid, g_who[i].pid);
		CHECK_EQ(s.wr[i].thread, g_who[i].thread);
		if (!same(&s.wr[i].waits, &want))
			fprintf(stderr, "%s: writer %u: waits %llu, %llu ns, longest %llu; want %llu, %llu, "
			        "%llu\n", what, i, (unsigned long long)s.wr[i].waits.n,
			        (unsigned long long)s.wr[i].waits.ns, (unsigned long long)s.wr[i].waits.max,
			        (unsigned long long)want.n, (unsigned long long)want.ns,
			        (unsigned long long)want.max);
		CHECK(same(&s.wr[i].waits, &want));
	}
	pt_log_summary_free(&s);
	CHECK_RC(pt_ext_log_summary(fd, &x), 0);
	if (x) {
		CHECK_EQ(x->waits_known, known);
		CHECK_EQ(x->nwriters, 3);
		for (size_t i = 0; i < x->nwriters && i < 3; i++)
			if (known) {
				CHECK_EQ(x->writers[i].waits, g_who[i].w.n);
				CHECK_EQ(x->writers[i].wait_ns, g_who[i].w.ns);
				CHECK_EQ(x->writers[i].wait_max, g_who[i].w.max);
			}
		pt_ext_summary_free(x);
	}
	close(fd);
}

static int version_of(const char *path)
{
	unsigned char h[16];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? pread(fd, h, sizeof h, 0) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof h ? pt_log_get16(h + PT_LOG_H_VERSION, 0) : -1;
}

int main(void)
{
	char path[] = "/tmp/pt-log-waits-XXXXXX";
	struct pt_log_waits got[3];
	int fd = mkstemp(path);

	T_BEGIN(60);
	REQUIRE(fd >= 0);
	close(fd);

	/* format 10: the waits in the summary, as the reader returns them */
	write_log(path, 0, 0, 0);
	CHECK_EQ(version_of(path), (int)PT_LOG_VERSION);
	CHECK(PT_LOG_VERSION >= 10);
	CHECK(g_who[0].w.n > 0 && g_who[1].w.n > 0 && g_who[2].w.n == 0);
	CHECK_EQ(read_waits(path, got), 0);
	for (int k = 0; k < 3; k++)
		CHECK(same(&got[k], &g_who[k].w));
	check_summary(path, 1, "format 10");
	struct pt_log_waits want[3] = { g_who[0].w, g_who[1].w, g_who[2].w };

	/* relabelled 9: damage, no summary */
	unsigned char h[PT_LOG_HDR];
	struct pt_log_summary s;
	REQUIRE((fd = open(path, O_RDWR)) >= 0);
	REQUIRE(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	pt_log_put16(h + PT_LOG_H_VERSION, 9, 0);
	pt_log_put32(h + PT_LOG_H_CRC, pt_log_crc(0, h, PT_LOG_H_CRC), 0);
	REQUIRE(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	CHECK_RC(pt_log_summary_read(fd, &s), ENOENT);
	close(fd);
	CHECK(read_waits(path, got) >= 1); /* (the summary block: damaged) */
	for (int k = 0; k < 3; k++)
		CHECK(same(&got[k], &want[k]));

	/* format 9: none in the summary, not known */
	write_log(path, 9, 0, 0);
	CHECK_EQ(version_of(path), 9);
	CHECK_EQ(read_waits(path, got), 0);
	for (int k = 0; k < 3; k++)
		CHECK(same(&got[k], &g_who[k].w));
	check_summary(path, 0, "format 9");

	/* a wait of 4 bytes: neither the reader nor the summary adds it up,
	 * so the waits do not add up to the count: not known */
	write_log(path, 0, 1, 0);
	CHECK_EQ(read_waits(path, got), 0);
	for (int k = 0; k < 3; k++)
		CHECK(same(&got[k], &g_who[k].w));
	struct pt_ext_summary *x = NULL;
	REQUIRE((fd = open(path, O_RDONLY)) >= 0);
	CHECK_RC(pt_ext_log_summary(fd, &x), 0);
	if (x) {
		CHECK_EQ(x->waits_known, 0);
		CHECK_EQ(x->count[WAIT], g_who[0].w.n + g_who[1].w.n + 1);
		CHECK_EQ(x->writers[1].waits, g_who[1].w.n);
		pt_ext_summary_free(x);
	}
	close(fd);

	/* no wait: known, all zero */
	write_log(path, 0, 0, 1);
	CHECK(g_who[0].w.n == 0 && g_who[1].w.n == 0);
	check_summary(path, 1, "no wait");
	unlink(path);
	T_END();
}
