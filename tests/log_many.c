/*
 * log_many.c -- pt_ext_next_many(), many of a log's events with their
 * payloads a call (what the commands' passes over a log read): the same
 * events, in the same order, with the same fields, payloads, lengths and
 * truncation statuses as posix_trace_getnext_event() gives one at a time
 * with a buffer of TRACE_DATA_MAX + 1 bytes, and after each
 * POSIX_TRACE_RESUME (which ends a call) the same loss counts from
 * pt_ext_losses(); the same at the end.  Each log is read three ways at
 * once, event by event: getnext alone (the witness), pt_ext_next_many()
 * alone, and the two taking turns.  The logs:
 *   - APPEND, written by hand: payloads of 0 to TRACE_DATA_MAX bytes (so
 *     that calls end on their payload room), some truncated, an
 *     OVERFLOW/RESUME pair every 700 events;
 *   - the same with two of its blocks damaged (ERROR events);
 *   - a LOOP log that wrapped (its pair before the oldest event);
 *   - a log a stream's flusher wrote (format 9: CHUNK blocks, one thread
 *     at a time, no-loss mode), read through the block index and after a
 *     seek too.
 * And what a call refuses: a NULL batch, a live stream's id, a closed id.
 */
#include <pthread.h>
#include "logfmt_util.h"
#include "../src/ext.h"

#define NEV 30000u

static struct pt_ext_many M, C;

struct reader {
	trace_id_t t;
	struct pt_ext_many *m; /* NULL: getnext alone */
	size_t at;
	int turn;              /* taking turns: the next refill is a getnext */
	unsigned char buf[TRACE_DATA_MAX + 1];
	struct { size_t calls, full, room, resume; } st;
};

struct got {
	struct posix_trace_event_info ev;
	size_t len;
	const unsigned char *data;
	int last; /* the last of its call (next_many) */
};

/* The next event of x: 1, or 0 at the end. */
static int next(struct reader *x, struct got *g)
{
	int un = 0;

	if (x->m && x->at < x->m->n) {
		size_t i = x->at++;
		g->ev = x->m->ev[i];
		g->len = x->m->len[i];
		g->data = x->m->data + x->m->off[i];
		g->last = x->at == x->m->n;
		CHECK_EQ(x->m->off[i] % 16, 0);
		return 1;
	}
	if (!x->m || (x->turn ^= 1)) {
		CHECK_RC(posix_trace_getnext_event(x->t, &g->ev, x->buf, sizeof x->buf, &g->len, &un),
		         0);
		g->data = x->buf;
		g->last = 1;
		return !un;
	}
	CHECK_RC(pt_ext_next_many(x->t, x->m), 0);
	x->at = 0;
	x->st.calls++;
	if (!x->m->n)
		return 0;
	size_t n = x->m->n, bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes = x->m->off[i] + x->m->len[i];
	int resume = x->m->ev[n - 1].posix_event_id == POSIX_TRACE_RESUME;
	x->st.full += n == PT_EXT_MANY;
	x->st.resume += resume;
	/* a call ends full, after a RESUME, at the end, or past its room */
	x->st.room += n < PT_EXT_MANY && !resume && bytes > PT_EXT_MANY_SOFT;
	for (size_t i = 0; i + 1 < n; i++)
		CHECK(x->m->ev[i].posix_event_id != POSIX_TRACE_RESUME);
	return next(x, g);
}

static int same_losses(trace_id_t a, trace_id_t b)
{
	struct pt_ext_losses x, y;

	if (pt_ext_losses(a, &x) || pt_ext_losses(b, &y))
		return 0;
	return x.resume_ok == y.resume_ok && x.at_resume == y.at_resume &&
	       x.total_ok == y.total_ok && x.total == y.total &&
	       x.log_overwritten == y.log_overwritten && x.log_dropped == y.log_dropped &&
	       x.wrap_at_resume == y.wrap_at_resume && x.implausible == y.implausible;
}

static int same_event(const struct got *a, const struct got *b)
{
	const struct posix_trace_event_info *x = &a->ev, *y = &b->ev;

	return x->posix_event_id == y->posix_event_id && x->posix_pid == y->posix_pid &&
	       x->posix_thread_id == y->posix_thread_id &&
	       x->posix_prog_address == y->posix_prog_address &&
	       x->posix_timestamp.tv_sec == y->posix_timestamp.tv_sec &&
	       x->posix_timestamp.tv_nsec == y->posix_timestamp.tv_nsec &&
	       x->posix_truncation_status == y->posix_truncation_status && a->len == b->len &&
	       !memcmp(a->data, b->data, a->len);
}

struct tally { size_t events, user, resumes, errors, bytes, calls, full, room; };

/* The three readers of fd side by side, from where each is (the same
 * place) to the end; the events. */
static struct tally compare(const char *what, struct reader *r)
{
	struct tally t = { 0 };
	size_t bad = 0, loss_bad = 0, ends = 0;

	for (;;) {
		struct got g[3];
		int more[3];
		for (int k = 0; k < 3; k++)
			more[k] = next(&r[k], &g[k]);
		if (!more[0] || !more[1] || !more[2]) {
			ends += more[0] == more[1] && more[1] == more[2];
			break;
		}
		t.events++;
		t.user += g[0].ev.posix_event_id >= PT_SYS_IDS;
		t.bytes += g[0].len;
		bad += !same_event(&g[0], &g[1]) || !same_event(&g[0], &g[2]);
		if (g[0].ev.posix_event_id == POSIX_TRACE_ERROR)
			t.errors++;
		if (g[0].ev.posix_event_id == POSIX_TRACE_RESUME) {
			t.resumes++;
			/* the RESUME ends its call: the counts are its own */
			CHECK(g[1].last && g[2].last);
			loss_bad += !same_losses(r[0].t, r[1].t) || !same_losses(r[0].t, r[2].t);
		}
	}
	CHECK_EQ(ends, 1);
	CHECK_EQ(bad, 0);
	CHECK_EQ(loss_bad, 0);
	CHECK(same_losses(r[0].t, r[1].t) && same_losses(r[0].t, r[2].t));
	t.calls = r[1].st.calls, t.full = r[1].st.full, t.room = r[1].st.room;
	printf("%s: %zu events (%zu RESUMEs, %zu errors, %zu payload bytes) the same three ways; "
	       "next_many: %zu calls, %zu full, %zu ended by their payload room\n",
	       what, t.events, t.resumes, t.errors, t.bytes, t.calls, t.full, t.room);
	return t;
}

static struct reader R[3];

static void open3(int fd)
{
	struct pt_ext_many *ms[3] = { NULL, &M, &C };

	for (int k = 0; k < 3; k++) {
		int d = dup(fd);
		REQUIRE(d >= 0 && lseek(d, 0, SEEK_SET) == 0);
		memset(&R[k].st, 0, sizeof R[k].st);
		R[k].m = ms[k], R[k].at = 0, R[k].turn = 0;
		if (ms[k])
			ms[k]->n = 0;
		REQUIRE(posix_trace_open(d, &R[k].t) == 0);
	}
}

static void close3(void)
{
	for (int k = 0; k < 3; k++)
		CHECK_RC(posix_trace_close(R[k].t), 0);
}

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

/* A log written by hand: n events of the shared sequence (payloads up to
 * maxlen, cut at maxpay), a pair every 700 events with its count. */
static int hand_log(int policy, uint64_t log_max, uint64_t n)
{
	int fd = mfd();
	struct pt_attr_img a = mkattr(g_maxpay);
	struct pt_logw w;
	uint64_t lost = 0;

	REQUIRE(pt_logw_init(&w, fd, &a, policy, log_max) == 0);
	put_names(&w);
	for (uint64_t i = 0; i < n; i++) {
		CHECK_RC(put_ev(&w, i), 0);
		if (i % 700 == 699) {
			uint64_t ts = ev_ts(i) + 1;
			lost += i % 7 + 1;
			CHECK_RC(pt_logw_event(&w, ts, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), 0);
			CHECK_RC(pt_logw_event_lost(&w, ts, 0, 0, 0, POSIX_TRACE_RESUME, lost), 0);
		}
	}
	w.stream_lost = lost;
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	return fd;
}

/* flips a byte in the body of the block around off */
static void damage(int fd, uint64_t off)
{
	unsigned char c;

	REQUIRE(pread(fd, &c, 1, (off_t)off) == 1);
	c ^= 0x5a;
	REQUIRE(pwrite(fd, &c, 1, (off_t)off) == 1);
}

static void t_hand(void)
{
	g_maxlen = TRACE_DATA_MAX, g_maxpay = 40000; /* some cut when recorded */
	int fd = hand_log(POSIX_TRACE_APPEND, 0, 3000);
	open3(fd);
	struct tally t = compare("APPEND, large payloads", R);
	close3();
	CHECK_EQ(t.resumes, 3000 / 700);
	CHECK(t.room > 0); /* calls ended by their payload room */
	CHECK(t.events >= 3000);

	uint64_t sz = fsize(fd);
	damage(fd, sz / 3);
	damage(fd, 2 * sz / 3);
	open3(fd);
	t = compare("the same, two blocks damaged", R);
	close3();
	CHECK(t.errors >= 1);
	close(fd);

	g_maxlen = 200, g_maxpay = 200;
	fd = hand_log(POSIX_TRACE_APPEND, 0, NEV);
	open3(fd);
	t = compare("APPEND, small payloads", R);
	close3();
	CHECK(t.full > 0);
	CHECK_EQ(t.resumes, NEV / 700);
	close(fd);

	fd = hand_log(POSIX_TRACE_LOOP, 256 * 1024, NEV);
	open3(fd);
	t = compare("a LOOP log that wrapped", R);
	close3();
	CHECK(t.events < NEV && t.resumes >= 1);
	close(fd);
}

/* ------------------------------------------------- written by a flusher */

/* the CHUNK blocks of the log in fd (walked from its header on) */
static unsigned chunk_blocks(int fd)
{
	uint64_t off = PT_LOG_HDR, size = fsize(fd);
	unsigned n = 0;

	while (off + PT_LOG_BLK <= size) {
		unsigned char h[PT_LOG_BLK];
		REQUIRE(pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h);
		uint32_t len = pt_log_get32(h + PT_LOG_B_LEN, 0);
		if (memcmp(h, "PTLB", 4) || len < PT_LOG_BLK)
			break;
		n += pt_log_get16(h + PT_LOG_B_TYPE, 0) == PT_LOG_BT_CHUNK;
		off += (len + 7u) & ~7u;
	}
	return n;
}

static trace_event_id_t ev_id;

static void *emit(void *arg)
{
	unsigned char p[96];
	uint32_t k = (uint32_t)(uintptr_t)arg;

	for (uint32_t i = 0; i < 40000; i++) {
		memcpy(p, &k, 4);
		memcpy(p + 4, &i, 4);
		posix_trace_event(ev_id, p, 8 + (i % 11) * 8);
	}
	return NULL;
}

static void t_flushed(void)
{
	char path[] = "/tmp/pt-log-many-XXXXXX";
	int fd = mkstemp(path);
	trace_attr_t a;
	trace_id_t t, live;

	REQUIRE(fd >= 0);
	unlink(path);
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH);
	posix_trace_attr_setstreamsize(&a, 1 << 20);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	posixtrace_attr_setnoloss(&a, 60000); /* (nothing lost: chunks go whole) */
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &t) == 0);
	REQUIRE(posix_trace_eventid_open("many.ev", &ev_id) == 0);
	REQUIRE(posix_trace_start(t) == 0);
	for (uintptr_t k = 0; k < 3; k++) { /* one thread at a time: CHUNK blocks */
		pthread_t th;
		REQUIRE(pthread_create(&th, NULL, emit, (void *)k) == 0);
		pthread_join(th, NULL);
	}
	/* what a call refuses */
	REQUIRE(posix_trace_create(0, NULL, &live) == 0);
	CHECK_RC(pt_ext_next_many(live, &M), EINVAL);
	CHECK_EQ(M.n, 0);
	CHECK_RC(posix_trace_shutdown(live), 0);
	CHECK_RC(pt_ext_next_many(live, &M), EINVAL);
	CHECK_RC(posix_trace_shutdown(t), 0);
	posix_trace_attr_destroy(&a);

	open3(fd);
	CHECK_RC(pt_ext_next_many(R[1].t, NULL), EINVAL);
	struct tally all = compare("written by a flusher", R);
	CHECK_EQ(all.user, 3 * 40000);
	/* after a seek to the middle, through the index */
	uint64_t mid = 0, before[3];
	CHECK_RC(posix_trace_rewind(R[0].t), 0);
	for (size_t i = 0; i < all.events / 2; i++) {
		struct got g;
		REQUIRE(next(&R[0], &g));
		mid = (uint64_t)g.ev.posix_timestamp.tv_sec * 1000000000u +
		      (uint64_t)g.ev.posix_timestamp.tv_nsec;
	}
	for (int k = 0; k < 3; k++) {
		CHECK_RC(pt_ext_seek(R[k].t, mid, &before[k]), 0);
		memset(&R[k].st, 0, sizeof R[k].st);
		R[k].at = 0;
		if (R[k].m)
			R[k].m->n = 0;
	}
	struct tally half = compare("the same after a seek to its middle", R);
	CHECK(half.events > 0 && half.events < all.events);
	CHECK(before[0] == before[1] && before[1] == before[2]);
	close3();
	unsigned nchunk = chunk_blocks(fd);
	printf("the flusher's log: %u CHUNK blocks\n", nchunk);
	CHECK(nchunk >= 3);
	close(fd);
}

int main(void)
{
	T_BEGIN(120);
	t_hand();
	t_flushed();
	T_END();
}
