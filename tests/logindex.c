/*
 * logindex.c -- the block index of the log's summary (format 7,
 * src/log/logsum.c) and the open that trusts it (src/log/logread.c):
 *
 * - opening a finished log reads its header, END block and summary only:
 *   the bytes read at open (the reader counts them) are a small part of
 *   the file, where the scan of the same log reads all of it;
 * - seeking to the last window and reading it to the end reads a bounded
 *   number of blocks (at most three: the one holding the last loss count
 *   before the window, and the window's), whatever the log's size;
 * - what it reads is what a scan at open reads, event for event (ids,
 *   times, writers, addresses, payloads, loss counts, error events and
 *   their times), names, map of loaded code and status alike: on a whole
 *   log in both byte orders; with a damaged block in the middle, two
 *   damaged blocks side by side, a damaged first block, a damaged last
 *   events block (each read as one error event, as the scan has them);
 *   with a damaged summary, or an index entry that disagrees with its
 *   block (its checksum made right), the first then scans and the second
 *   reads that block as damage;
 * - seeking gives the same point and loss count either way;
 * - a format-6 log (no index) is scanned;
 * - the batches of pt_logr_next_batch (the view's index, one lock and
 *   no payload copy an event) are the events pt_logr_next gives, in
 *   order, with the same writers and loss counts, batches and single
 *   events mixed: on every log above, through the index and after a
 *   scan, and on a LOOP log that wrapped (its OVERFLOW/RESUME pair);
 * - reading stopped at a window's end (pt_logr_stop_after, show --to)
 *   reads a bounded number of bytes past the window, yet a late event
 *   stamped inside it is read, through the index and after a scan alike.
 */
#include "t.h"
#include "logfmt_util.h"

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

#define NEV 40000u
#define BLOCK 4096u

struct rec {
	uint64_t ts, thr, addr, lost, hash;
	int32_t pid;
	unsigned id, trunc, lost_ok;
	size_t len;
};

/* A log of NEV events of the sequence (RESUMEs with a count every 997),
 * blocks of BLOCK bytes; version 0: the current format. */
static int make_log_late(int swap, unsigned version, int late);

static int make_log(int swap, unsigned version)
{
	return make_log_late(swap, version, 0);
}

/* late: also, after event LATE_AFTER, an event stamped as LATE_TS (as one
 * whose thread was kept off its CPU before publishing it) */
#define LATE_AFTER 30000u
#define LATE_TS (ev_ts(100) + 7)
static int make_log_late(int swap, unsigned version, int late)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .swap = swap, .block_size = BLOCK, .version = version };
	struct pt_logw w;
	struct pt_ext_obj m;
	int fd = memfd_create("logindex", 0);

	REQUIRE(fd >= 0);
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	put_names(&w);
	memset(&m, 0, sizeof m);
	m.kind = PT_EXT_OBJ_ADD, m.pid = 1000, m.lo = 0x400000, m.hi = 0x500000, m.ts = T0;
	strcpy(m.path, "/usr/bin/app");
	CHECK_RC(pt_logw_obj(&w, &m), 0);
	for (uint64_t i = 0; i < NEV; i++) {
		CHECK_RC(put_ev(&w, i), 0);
		if (i % 997 == 996)
			CHECK_RC(pt_logw_event_lost(&w, ev_ts(i), 0, 0, 0, POSIX_TRACE_RESUME, i), 0);
		if (late && i == LATE_AFTER)
			CHECK_RC(pt_logw_event(&w, LATE_TS, 1000, 0x7f0000001000ull, 0x401000, 33, 0,
			                       NULL, 0), 0);
	}
	w.stream_lost = 77;
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	return fd;
}

/* Every event from where r is, into *out (malloc'd); their number. */
static size_t read_rest(struct pt_logr *r, struct rec **out)
{
	static unsigned char buf[TRACE_DATA_MAX];
	size_t n = 0, cap = 1024;
	struct rec *v = malloc(cap * sizeof *v);

	REQUIRE(v != NULL);
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len;
		int un = 0;
		REQUIRE(pt_logr_next(r, &ev, buf, sizeof buf, &len, &un) == 0);
		if (un)
			break;
		if (n == cap)
			REQUIRE((v = realloc(v, (cap *= 2) * sizeof *v)) != NULL);
		struct rec *x = &v[n++];
		memset(x, 0, sizeof *x);
		x->ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		        (uint64_t)ev.posix_timestamp.tv_nsec;
		x->thr = (uint64_t)ev.posix_thread_id;
		x->addr = (uint64_t)(uintptr_t)ev.posix_prog_address;
		x->pid = (int32_t)ev.posix_pid;
		x->id = (unsigned)ev.posix_event_id;
		x->trunc = (unsigned)ev.posix_truncation_status;
		x->lost_ok = (unsigned)r->last_lost_ok;
		x->lost = r->last_lost_ok ? r->last_lost : 0;
		x->len = len;
		x->hash = pt_log_crc(0, buf, len);
	}
	*out = v;
	return n;
}

static size_t nerrors(const struct rec *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += v[i].id == POSIX_TRACE_ERROR;
	return k;
}

/* The events of fd read in batches (every third step one pt_logr_next
 * instead, as a reader may mix them) are those pt_logr_next alone
 * gives: times, ids, writers, and the loss count after each step. */
static void same_batched(int fd, int flags, const char *what)
{
	static struct pt_ext_batch b;
	static unsigned char buf[TRACE_DATA_MAX];
	struct pt_logr r, s;
	size_t n = 0, bad = 0, batches = 0, lost = 0, words = 0, qwords = 0;

	REQUIRE(pt_logr_open_opt(&r, fd, flags) == 0);
	REQUIRE(pt_logr_open_opt(&s, fd, flags) == 0);
	for (int step = 0;; step++) {
		struct posix_trace_event_info ev, ew;
		size_t len;
		int un = 0;
		if (step % 3 == 2) { /* one event the ordinary way */
			REQUIRE(pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un) == 0);
			memset(&b, 0, sizeof b);
			if (!un) {
				b.n = b.nw = 1;
				b.w[0].pid = (int32_t)ev.posix_pid;
				b.w[0].thread = (uint64_t)ev.posix_thread_id;
				b.ev[0].ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
				             (uint64_t)ev.posix_timestamp.tv_nsec;
				b.ev[0].id = (uint16_t)ev.posix_event_id;
			}
		} else {
			memset(&b, 0x5a, sizeof b);
			REQUIRE(pt_logr_next_batch(&r, &b) == 0);
			CHECK(b.n <= PT_EXT_BATCH && b.nw <= PT_EXT_BATCH_W);
			batches += b.n > 1;
		}
		for (size_t i = 0; i < b.n; i++, n++) {
			REQUIRE(pt_logr_next(&s, &ew, buf, sizeof buf, &len, &un) == 0);
			const struct pt_ext_bevent *e = &b.ev[i];
			lost += (e->flags & PT_EXT_BEV_LOST) != 0;
			words += (e->flags & PT_EXT_BEV_WORD) != 0;
			if (un || e->w >= b.nw) {
				bad++;
				break;
			}
			uint64_t ts = (uint64_t)ew.posix_timestamp.tv_sec * 1000000000u +
			              (uint64_t)ew.posix_timestamp.tv_nsec;
			/* a loss count ends its batch; a 4-byte payload is in word,
			 * an 8-byte one in word and hi */
			unsigned want = s.last_lost_ok ? PT_EXT_BEV_LOST : len == 4 ? PT_EXT_BEV_WORD
			              : len == 8 ? PT_EXT_BEV_QWORD : 0;
			int32_t word = 0;
			uint32_t hi = 0;
			if (want == PT_EXT_BEV_WORD)
				memcpy(&word, buf, 4);
			if (want == PT_EXT_BEV_QWORD) {
				uint64_t q;
				memcpy(&q, buf, 8);
				word = (int32_t)(uint32_t)q, hi = (uint32_t)(q >> 32);
				qwords++;
			}
			if (step % 3 == 2) /* (made here from getnext's) */
				want = e->flags, word = e->word, hi = e->hi;
			if ((e->ts != ts || e->id != ew.posix_event_id ||
			     b.w[e->w].pid != (int32_t)ew.posix_pid ||
			     b.w[e->w].thread != (uint64_t)ew.posix_thread_id || e->flags != want ||
			     e->word != word || e->hi != hi || ((e->flags & PT_EXT_BEV_LOST) && i + 1 != b.n)) &&
			    bad++ == 0)
				fprintf(stderr, "  (%s: event %zu differs: id %u/%u ts %llu/%llu)\n", what,
				        n, e->id, (unsigned)ew.posix_event_id,
				        (unsigned long long)e->ts, (unsigned long long)ts);
		}
		/* the loss count the command reads after each step */
		CHECK(r.last_lost_ok == s.last_lost_ok && r.last_lost == s.last_lost &&
		      r.wrap_told == s.wrap_told);
		if (!b.n) {
			REQUIRE(pt_logr_next(&s, &ew, buf, sizeof buf, &len, &un) == 0);
			CHECK_EQ(un, 1); /* both at the end */
			break;
		}
	}
	CHECK_EQ(bad, 0u);
	CHECK(batches > 0 && n > 0);
	CHECK(lost > 0 && words > 0 && qwords > 0); /* (every kind met) */
	pt_logr_close(&r);
	pt_logr_close(&s);
}

/* The log read through the index (indexed: whether it has one that
 * holds) and by a scan: the same (meta_lost: but for the names and the
 * map, in a damaged block).  The number of error events. */
static size_t same_both_ways(int fd, int indexed, int meta_lost, const char *what)
{
	struct pt_logr a, b;
	struct rec *va, *vb;
	struct posix_trace_status_info sa, sb;

	REQUIRE(pt_logr_open(&a, fd) == 0);
	REQUIRE(pt_logr_open_opt(&b, fd, PT_LOGR_SCAN) == 0);
	CHECK_EQ(a.indexed, indexed);
	CHECK_EQ(b.indexed, 0);
	same_batched(fd, 0, what);
	same_batched(fd, PT_LOGR_SCAN, what);
	size_t na = read_rest(&a, &va), nb = read_rest(&b, &vb);
	CHECK_EQ(na, nb);
	size_t bad = 0, first_bad = SIZE_MAX;
	for (size_t i = 0; i < na && i < nb; i++)
		if (memcmp(&va[i], &vb[i], sizeof va[i]) && bad++ == 0)
			first_bad = i;
	CHECK_EQ(bad, 0u);
	if (bad)
		fprintf(stderr, "  (%s: first differing event %zu: id %u/%u ts %llu/%llu)\n", what,
		        first_bad, va[first_bad].id, vb[first_bad].id,
		        (unsigned long long)va[first_bad].ts, (unsigned long long)vb[first_bad].ts);
	/* names and the map: the same; or, when the block holding them is
	 * damaged, the scan has none of them and the index all (from the
	 * summary) */
	for (unsigned id = 0; id < PT_NIDS; id++) {
		const char *x = pt_logr_name(&a, id), *y = pt_logr_name(&b, id);
		CHECK(meta_lost ? !y : !x == !y && (!x || !strcmp(x, y)));
	}
	CHECK_EQ(a.objs.n, meta_lost && indexed ? 1u : b.objs.n);
	CHECK_EQ(b.objs.n, meta_lost ? 0u : 1u);
	int same_map = a.objs.n == b.objs.n;
	for (size_t i = 0; same_map && i < a.objs.n; i++) {
		struct pt_ext_obj oa, ob;
		pt_objstore_get(&a.objs, i, &oa);
		pt_objstore_get(&b.objs, i, &ob);
		same_map = !memcmp(&oa, &ob, sizeof oa);
	}
	CHECK(a.objs.n != b.objs.n || same_map);
	CHECK_EQ(pt_logr_status(&a, &sa), pt_logr_status(&b, &sb));
	CHECK(!memcmp(&sa, &sb, sizeof sa));
	CHECK(a.lost == b.lost && a.dropped == b.dropped && a.stream_lost == b.stream_lost);
	size_t ne = nerrors(va, na);
	pt_logr_close(&a);
	pt_logr_close(&b);
	free(va);
	free(vb);
	return ne;
}

static void flip(int fd, uint64_t off)
{
	unsigned char c;
	REQUIRE(pread(fd, &c, 1, (off_t)off) == 1);
	c ^= 0x40;
	REQUIRE(pwrite(fd, &c, 1, (off_t)off) == 1);
}

/* Opening reads a small part of the file; seeking to the last window
 * and reading it, at most three blocks; the same events and loss count
 * as a scan's seek. */
static void t_fast(int swap)
{
	struct pt_logr r, s;
	struct stat st;
	int fd = make_log(swap, 0);

	REQUIRE(fstat(fd, &st) == 0);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.indexed, 1);
	CHECK(r.nitems > 300); /* a log of many blocks */
	/* header, END block, the summary (32 bytes a block in its index) and
	 * the window read to find each of its parts */
	uint64_t open_max = PT_LOG_HDR + PT_LOG_END_LEN + r.nitems * PT_LOG_IDX_ENT * 2 + 8 * BLOCK;
	CHECK((uint64_t)st.st_size > 8 * open_max);
	CHECK(r.bytes_read <= open_max);
	REQUIRE(pt_logr_open_opt(&s, fd, PT_LOGR_SCAN) == 0);
	CHECK(s.bytes_read >= (uint64_t)st.st_size - BLOCK);

	uint64_t x = ev_ts(NEV - 50), lr = 99, ls = 98;
	uint64_t before = r.bytes_read;
	CHECK_RC(pt_logr_seek(&r, x, &lr), 0);
	CHECK_RC(pt_logr_seek(&s, x, &ls), 0);
	CHECK_EQ(lr, ls);
	CHECK_EQ(lr, (uint64_t)(NEV - 50) / 997 * 997 - 1);
	struct rec *vr, *vs;
	size_t nr = read_rest(&r, &vr), ns = read_rest(&s, &vs);
	CHECK(r.bytes_read - before <= 3 * BLOCK);
	CHECK_EQ(nr, ns);
	CHECK(nr == ns && !memcmp(vr, vs, nr * sizeof *vr));
	size_t from = 0;
	for (size_t i = 0; i < nr; i++)
		from += vr[i].ts >= x;
	CHECK_EQ(from, 50u + (NEV - 1) / 997 - (NEV - 50) / 997); /* and the RESUMEs */
	free(vr);
	free(vs);
	pt_logr_close(&r);
	pt_logr_close(&s);

	CHECK_EQ(same_both_ways(fd, 1, 0, "whole"), 0u);
	close(fd);
}

/* Offsets of the events blocks, from the index. */
static size_t blocks(int fd, uint64_t *off, uint32_t *len, size_t max)
{
	struct pt_logr r;
	size_t n = 0;

	REQUIRE(pt_logr_open(&r, fd) == 0);
	REQUIRE(r.indexed);
	for (size_t i = 0; i < r.nitems && n < max; i++, n++)
		off[n] = r.items[i].off, len[n] = r.items[i].len;
	pt_logr_close(&r);
	return n;
}

static void t_damage(void)
{
	static uint64_t off[4096];
	static uint32_t len[4096];
	int fd = make_log(0, 0);
	size_t n = blocks(fd, off, len, 4096);

	REQUIRE(n > 300);
	/* one block in the middle: its body */
	flip(fd, off[n / 2] + len[n / 2] - 3);
	CHECK_EQ(same_both_ways(fd, 1, 0, "one damaged block"), 1u);
	/* two side by side: one error event */
	flip(fd, off[n / 3] + PT_LOG_BLK + 20);
	flip(fd, off[n / 3 + 1] + PT_LOG_BLK + 20);
	CHECK_EQ(same_both_ways(fd, 1, 0, "two damaged blocks"), 2u);
	/* the first block (names, the map and the first events); the last */
	flip(fd, off[0] + len[0] - 1);
	flip(fd, off[n - 1] + len[n - 1] - 1);
	CHECK_EQ(same_both_ways(fd, 1, 1, "first and last damaged"), 4u);
	/* a block's header: the scan looks for the next one 8 bytes on */
	flip(fd, off[n / 4] + 2);
	CHECK_EQ(same_both_ways(fd, 1, 1, "a damaged header"), 5u);
	close(fd);

	/* a damaged summary: no index, the log is scanned */
	fd = make_log(0, 0);
	struct pt_log_summary sm;
	REQUIRE(pt_log_summary_read_index(fd, &sm) == 0);
	uint64_t soff = sm.sum_off;
	pt_log_summary_free(&sm);
	flip(fd, soff + PT_LOG_BLK + 10);
	CHECK_EQ(same_both_ways(fd, 0, 0, "damaged summary"), 1u);
	close(fd);
}

/* An index entry that disagrees with its block (the summary's checksum
 * made right): that block reads as damage, nothing else changes. */
static void t_lying_index(void)
{
	static unsigned char b[BLOCK];
	struct pt_log_summary sm;
	struct pt_log_bhdr h;
	struct pt_logr r;
	int fd = make_log(0, 0);

	REQUIRE(pt_log_summary_read_index(fd, &sm) == 0);
	uint64_t soff = sm.sum_off, nidx = sm.nidx;
	pt_log_summary_free(&sm);
	/* the first INDEX entry is in the last part: find it there */
	REQUIRE(pt_logr_open(&r, fd) == 0);
	uint64_t at = soff, found = 0;
	for (;;) {
		REQUIRE(pread(fd, b, PT_LOG_BLK, (off_t)at) == PT_LOG_BLK);
		REQUIRE(pt_logr_bhdr(&r, b, &h));
		if (h.type != PT_LOG_BT_SUMMARY)
			break;
		REQUIRE(pread(fd, b, h.len, (off_t)at) == (ssize_t)h.len);
		uint32_t o = PT_LOG_BLK;
		for (uint32_t i = 0; i < h.nrec && !found; i++) {
			unsigned kind = pt_log_get16(b + o, 0), elen = pt_log_get16(b + o + 2, 0);
			if (kind == PT_LOG_S_INDEX && pt_log_get32(b + o + 4, 0) == 0) {
				/* block 10's largest timestamp, one ns later */
				unsigned char *e = b + o + 4 + 8 + 10 * PT_LOG_IDX_ENT;
				pt_log_put64(e + 24, pt_log_get64(e + 24, 0) + 1, 0);
				pt_log_put32(b + PT_LOG_B_BCRC, pt_log_crc(0, b + PT_LOG_BLK, h.len - PT_LOG_BLK), 0);
				pt_log_put32(b + PT_LOG_B_HCRC, pt_log_crc(0, b, PT_LOG_B_HCRC), 0);
				REQUIRE(pwrite(fd, b, h.len, (off_t)at) == (ssize_t)h.len);
				found = 1;
			}
			o += PT_LOG_S_HDR + elen;
		}
		at += PT_LOG_ALIGN8(h.len);
	}
	pt_logr_close(&r);
	REQUIRE(found && nidx > 10);
	struct rec *v, *w;
	struct pt_logr s;
	REQUIRE(pt_logr_open(&r, fd) == 0);
	REQUIRE(pt_logr_open_opt(&s, fd, PT_LOGR_SCAN) == 0);
	CHECK_EQ(r.indexed, 1);
	size_t nr = read_rest(&r, &v), ns = read_rest(&s, &w);
	CHECK_EQ(nerrors(v, nr), 1u);
	CHECK_EQ(nerrors(w, ns), 0u);
	/* the block's events are not there, the rest are */
	CHECK(nr < ns && nr > ns - BLOCK / 8);
	free(v);
	free(w);
	pt_logr_close(&r);
	pt_logr_close(&s);
	close(fd);
}

/* Reading a window that ends at hi (show --to): stopped after the last
 * block that may hold an event at or before hi, the events read are the
 * whole read's first ones, every event at or before hi among them; with
 * no late event, a bounded number of bytes past the window's blocks is
 * read; a late event (stamped in the window, written 30 000 events
 * later) is still read. */
static void t_stop(int flags, int late)
{
	struct pt_logr r;
	struct stat st;
	struct rec *v, *w;
	int fd = make_log_late(0, 0, late);
	uint64_t hi = ev_ts(200);

	REQUIRE(fstat(fd, &st) == 0);
	REQUIRE(pt_logr_open_opt(&r, fd, flags) == 0);
	CHECK_EQ(r.indexed, !flags);
	size_t nw = read_rest(&r, &w);
	pt_logr_rewind(&r);
	pt_logr_stop_after(&r, hi);
	uint64_t before = r.bytes_read;
	size_t nv = read_rest(&r, &v);
	uint64_t got = r.bytes_read - before;
	size_t last_in = 0, seen_late = 0;
	for (size_t i = 0; i < nw; i++)
		if (w[i].ts <= hi)
			last_in = i + 1;
	for (size_t i = 0; i < nv; i++)
		seen_late += v[i].ts == LATE_TS && v[i].id == 33;
	CHECK(nv <= nw && !memcmp(v, w, nv * sizeof *v)); /* the whole read's first ones */
	CHECK(nv >= last_in);
	CHECK_EQ(seen_late, (size_t)late);
	if (!late) {
		/* the blocks up to event 200 (at most 200 events of up to 216
		 * bytes), and the one after them */
		CHECK(got <= 200 * 216 + 2 * BLOCK);
		CHECK(nv < 400);
	} else {
		CHECK(nv > LATE_AFTER);
		CHECK(got < (uint64_t)st.st_size);
	}
	/* to the end again */
	pt_logr_stop_after(&r, UINT64_MAX);
	pt_logr_rewind(&r);
	free(v);
	CHECK_EQ(read_rest(&r, &v), nw);
	free(v);
	free(w);
	pt_logr_close(&r);
	close(fd);
}

/* Format 6: no index, a scan (reads the whole file), same events. */
static void t_format6(void)
{
	struct pt_logr r;
	struct stat st;
	int fd = make_log(0, 6);

	REQUIRE(fstat(fd, &st) == 0);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.version, 6);
	CHECK_EQ(r.indexed, 0);
	CHECK(r.bytes_read >= (uint64_t)st.st_size - BLOCK);
	pt_logr_close(&r);
	CHECK_EQ(same_both_ways(fd, 0, 0, "format 6"), 0u);
	close(fd);
}

/* A LOOP log that wrapped: batches give its OVERFLOW/RESUME pair before
 * the oldest event kept, as the ordinary reader does. */
static void t_batch_wrapped(void)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .block_size = BLOCK };
	struct pt_logw w;
	struct pt_logr r;
	int fd = memfd_create("logindex-loop", 0);

	REQUIRE(fd >= 0);
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_LOOP, 64 * BLOCK, &o) == 0);
	put_names(&w);
	for (uint64_t i = 0; i < NEV / 4; i++) {
		CHECK_RC(put_ev(&w, i), 0);
		if (i % 997 == 996)
			CHECK_RC(pt_logw_event_lost(&w, ev_ts(i), 0, 0, 0, POSIX_TRACE_RESUME, i), 0);
	}
	w.stream_lost = 77;
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	CHECK(w.lost > 0);
	pt_logw_free(&w);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK(r.wrapped);
	pt_logr_close(&r);
	same_batched(fd, 0, "wrapped LOOP log");
	close(fd);
}

int main(void)
{
	T_BEGIN(120);
	t_fast(0);
	t_fast(1);
	t_damage();
	t_lying_index();
	t_format6();
	t_batch_wrapped();
	t_stop(0, 0);
	t_stop(0, 1);
	t_stop(PT_LOGR_SCAN, 0);
	t_stop(PT_LOGR_SCAN, 1);
	T_END();
}
