/*
 * logsum.c -- the log's summary (format 5 and later, src/log/logsum.c): what
 * pt_log_summary_read() gives, read from the end of the file only, is
 * checked against what this test wrote (its own counts per type and per
 * writer (a short record after a name record too; types taking turns in
 * short records), first and last
 * timestamps, writers in order of their first event, names, entries of the map, the last loss count) and against the
 * full reader: the events it returns, with no error event for the
 * summary.  Both byte orders; a block size so small that the summary
 * takes many blocks, with 700 writers; an UNTIL_FULL log that filled
 * (the summary counts what was written, or there is none); a LOOP log, a
 * log cut short, a format-3 log, a damaged summary and one that could not
 * be written (no error then) have none (ENOENT) and still read whole (the
 * damaged one with one error event).  Through
 * the API (src/ext.h): pt_ext_log_summary() on the same log.  Format 6
 * against 5: thread identities and payload descriptions in the log and
 * its summary (6), none (5), and a 6 relabelled 5 (damage, no summary).
 *
 * pt_logr_seek() (show --from): on a log whose blocks are not in time
 * order (a writer's events stamped before those of blocks written
 * earlier), for many times X, the events read after seeking to X that
 * are stamped at or after X are exactly those of a whole read (same
 * sequence), and the loss count it reports is the last one before the
 * point it seeks to.
 */
#include <sys/resource.h>
#include "t.h"
#include "logfmt_util.h"
#include "../src/ext.h"

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

struct want {
	uint64_t events, first, last, gaps, last_lost;
	uint64_t count[PT_NIDS], tfirst[PT_NIDS], tlast[PT_NIDS];
	struct pt_logw_sumw wr[1024];
	uint32_t nwr;
};

static void note(struct want *x, int32_t pid, uint64_t thr, unsigned id, uint64_t ts)
{
	uint32_t k;
	for (k = 0; k < x->nwr && (x->wr[k].pid != pid || x->wr[k].thread != thr); k++)
		;
	if (k == x->nwr) {
		REQUIRE(x->nwr < 1024);
		x->wr[x->nwr++] = (struct pt_logw_sumw){ pid, thr, 0, ts, ts, 0, 0, 0, { 0, 0, 0 } };
	}
	x->wr[k].count++;
	x->wr[k].first = ts < x->wr[k].first ? ts : x->wr[k].first;
	x->wr[k].last = ts > x->wr[k].last ? ts : x->wr[k].last;
	if (!x->events || ts < x->first)
		x->first = ts;
	if (ts > x->last)
		x->last = ts;
	if (!x->count[id] || ts < x->tfirst[id])
		x->tfirst[id] = ts;
	if (ts > x->tlast[id])
		x->tlast[id] = ts;
	x->count[id]++;
	x->events++;
}

/* n events of the sequence, with a RESUME carrying a count every 997
 * and, when many, events of `writers` distinct threads of pid 77 */
static void write_log(int fd, struct pt_logw *w, struct want *x, uint64_t n, uint32_t writers)
{
	struct xev e;

	memset(x, 0, sizeof *x);
	put_names(w);
	struct pt_ext_obj o;
	memset(&o, 0, sizeof o);
	o.kind = PT_EXT_OBJ_BEGIN, o.pid = 1000, o.ts = T0;
	CHECK_RC(pt_logw_obj(w, &o), 0);
	o.kind = PT_EXT_OBJ_ADD, o.lo = 0x400000, o.hi = 0x500000, o.bid_len = 20;
	memset(o.bid, 0x5a, 20);
	strcpy(o.path, "/usr/bin/app");
	CHECK_RC(pt_logw_obj(w, &o), 0);
	for (uint64_t i = 0; i < n; i++) {
		gen(i, g_maxlen, &e);
		if (put_ev(w, i) == 0)
			note(x, e.pid, e.thr, e.id, e.ts);
		if (i % 997 == 996 && !w->full) {
			int rc = pt_logw_event_lost(w, e.ts, 0, 0, 0, POSIX_TRACE_RESUME, i);
			CHECK(rc == 0 || (rc == ENOSPC && w->full));
			if (rc == 0) {
				x->last_lost = i;
				x->gaps++;
				note(x, 0, 0, POSIX_TRACE_RESUME, e.ts);
			}
		}
	}
	/* two events of one writer from one address (the second a short
	 * record) with a name record between them: both are that writer's
	 * (the summary once gave the second to the block's writer 0) */
	for (int k = 0; k < 2 && !w->full; k++) {
		uint64_t ts = ev_ts(n) + k;
		if (k == 0) { /* (another writer first: 78 is not the block's writer 0) */
			CHECK_RC(pt_logw_event(w, ts, 79, 0x7000, 0x401000, 17, 0, NULL, 0), 0);
			note(x, 79, 0x7000, 17, ts);
		} else
			CHECK_RC(pt_logw_name(w, 41, "event-41"), 0); /* (a new name: a record) */
		CHECK_RC(pt_logw_event(w, ts, 78, 0x8000, 0x401234, 17, 0, NULL, 0), 0);
		note(x, 78, 0x8000, 17, ts);
	}
	for (uint32_t k = 0; k < writers; k++) {
		uint64_t ts = ev_ts(n) + k;
		CHECK_RC(pt_logw_event(w, ts, 77, 0x9000 + k, 0x401000, 17, 0, NULL, 0), 0);
		note(x, 77, 0x9000 + k, 17, ts);
	}
	/* types taking turns in one writer's short records (the summary
	 * counts two runs at once): two types, then three (a run closed at
	 * each turn), then two with repeats; a time stepping back now and
	 * then (at j 2 below its type's first); from 2000 on another
	 * writer's event every 50 (the run before it is the other
	 * writer's) */
	uint64_t t0 = ev_ts(n) + writers + 1000;
	for (uint32_t j = 0; j < 3000 && !w->full; j++) {
		static const unsigned char d[16];
		unsigned id = j < 1000 ? 20 + j % 2 : j < 2000 ? 20 + j % 3 : j % 7 == 0 ? 23 : 20 + j % 2;
		uint64_t ts = t0 + 7ull * j - (j % 5 == 2 ? 20 : 0);
		int b = j >= 2000 && j % 50 == 0;
		int rc = pt_logw_event(w, ts, b ? 1002 : 1001, b ? 0x7e00 : 0x7d00, 0x401500, id, 0, d,
		                       j % 13);
		CHECK(rc == 0 || (rc == ENOSPC && w->full));
		if (rc == 0)
			note(x, b ? 1002 : 1001, b ? 0x7e00 : 0x7d00, id, ts);
	}
	(void)fd;
}

static void check_summary(int fd, const struct want *x, int swap)
{
	struct pt_log_summary s;
	CHECK_RC(pt_log_summary_read(fd, &s), 0);
	CHECK_EQ(s.events, x->events);
	CHECK_EQ(s.first, x->first);
	CHECK_EQ(s.last, x->last);
	CHECK_EQ(s.gaps, x->gaps);
	CHECK_EQ(s.last_lost, x->last_lost);
	int bad = 0;
	for (unsigned id = 0; id < PT_NIDS; id++)
		bad += s.count[id] != x->count[id] ||
		       (x->count[id] && (s.tfirst[id] != x->tfirst[id] || s.tlast[id] != x->tlast[id]));
	CHECK_EQ(bad, 0);
	CHECK_EQ(s.nwr, x->nwr);
	bad = 0;
	for (uint32_t k = 0; k < s.nwr && k < x->nwr; k++) {
		const struct pt_logw_sumw *p = &s.wr[k], *q = &x->wr[k];
		int d = p->pid != q->pid || p->thread != q->thread || p->count != q->count ||
		        p->first != q->first || p->last != q->last;
		if (d && bad++ < 3)
			fprintf(stderr, "writer %u: %d %llx %llu %llu %llu, wrote %d %llx %llu %llu %llu\n",
			        k, p->pid, (unsigned long long)p->thread, (unsigned long long)p->count,
			        (unsigned long long)p->first, (unsigned long long)p->last, q->pid,
			        (unsigned long long)q->thread, (unsigned long long)q->count,
			        (unsigned long long)q->first, (unsigned long long)q->last);
	}
	CHECK_EQ(bad, 0);
	CHECK(s.names && !strcmp(s.names[17], "event-17") && !strcmp(s.names[19], "event-19") &&
	      !(s.known[0] >> 18 & 1) &&
	      !(s.known[0] >> 16 & 1));
	CHECK_EQ(s.objs.n, 2);
	struct pt_ext_obj o1;
	if (s.objs.n == 2)
		pt_objstore_get(&s.objs, 1, &o1);
	CHECK(s.objs.n == 2 && !strcmp(o1.path, "/usr/bin/app") && o1.bid_len == 20);
	CHECK_EQ(s.status.posix_stream_status, ST.posix_stream_status);
	CHECK_EQ(s.status.posix_log_full_status, ST.posix_log_full_status);
	CHECK_EQ(s.stream_lost, 123456);
	CHECK_EQ(s.attr.max_data, 200);
	(void)swap;
	pt_log_summary_free(&s);

	/* the same through the API */
	struct pt_ext_summary *es = NULL;
	CHECK_RC(pt_ext_log_summary(fd, &es), 0);
	if (es) {
		CHECK_EQ(es->events, x->events);
		CHECK_EQ(es->nwriters, x->nwr);
		CHECK_EQ(es->count[17], x->count[17]);
		CHECK(!strcmp(es->names[17], "event-17") && !es->names[16][0]);
		CHECK(es->losses.total_ok && es->losses.total == 123456);
		CHECK_EQ(es->losses.at_resume, x->last_lost);
		size_t ms = 0;
		CHECK_RC(posix_trace_attr_getmaxdatasize(&es->attr, &ms), 0);
		CHECK_EQ(ms, 200);
		pt_ext_summary_free(es);
	}
}

/* The events the full reader returns, and of them the error events. */
static uint64_t count_events(int fd, uint64_t *nerr)
{
	struct pt_logr r;
	static unsigned char buf[TRACE_DATA_MAX + 1];
	uint64_t n = 0;

	*nerr = 0;
	REQUIRE(pt_logr_open(&r, fd) == 0);
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len;
		int un = 0;
		if (pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un) || un)
			break;
		*nerr += ev.posix_event_id == POSIX_TRACE_ERROR;
		n++;
	}
	pt_logr_close(&r);
	return n;
}

/* The full reader: every event, no error event but those expected. */
static void check_events(int fd, const struct want *x, size_t errors)
{
	struct pt_logr r;
	uint64_t nerr = 0, n = count_events(fd, &nerr);

	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(n, x->events + errors);
	CHECK_EQ(nerr, errors);
	CHECK(pt_logr_status(&r, &(struct posix_trace_status_info){ 0 }) == 0);
	pt_logr_close(&r);
}

static void t_append(int swap, uint32_t block, uint32_t writers)
{
	static struct want x;
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .swap = swap, .block_size = block };
	struct pt_logw w;
	int fd = mfd();

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	write_log(fd, &w, &x, 20000, writers);
	w.stream_lost = 123456;
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	check_summary(fd, &x, swap);
	check_events(fd, &x, 0);
	close(fd);
}

/* No summary: ENOENT, and the log reads as before. */
static void no_summary(int fd, const char *what)
{
	struct pt_log_summary s;
	int rc = pt_log_summary_read(fd, &s);
	CHECK_RC(rc, ENOENT);
	if (rc != ENOENT)
		fprintf(stderr, "  (%s)\n", what);
	if (rc == 0)
		pt_log_summary_free(&s);
}

/* A log of 3000 events (policy, format version 0 = current), finished
 * or not; its fd. */
static int small_log(int policy, unsigned version, int finish, struct want *x)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .version = version };
	struct pt_logw w;
	int fd = mfd();

	REQUIRE(pt_logw_init_opt(&w, fd, &a, policy, policy == POSIX_TRACE_LOOP ? 1 << 20 : 0,
	                         &o) == 0);
	write_log(fd, &w, x, 3000, 0);
	w.stream_lost = 123456;
	if (finish)
		CHECK_RC(pt_logw_finish(&w, &ST), 0);
	else
		CHECK_RC(pt_logw_sync(&w), 0);
	pt_logw_free(&w);
	return fd;
}

static void t_none(void)
{
	static struct want x;
	int fd;

	fd = small_log(POSIX_TRACE_LOOP, 0, 1, &x);
	no_summary(fd, "LOOP");
	close(fd);
	fd = small_log(POSIX_TRACE_APPEND, 0, 0, &x); /* cut short: never finished */
	no_summary(fd, "cut short");
	close(fd);
	fd = small_log(POSIX_TRACE_APPEND, 3, 1, &x);
	no_summary(fd, "format 3");
	close(fd);
	/* a damaged summary: none, and one error event where it was */
	fd = small_log(POSIX_TRACE_APPEND, 0, 1, &x);
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char byte;
	/* a byte of the writer entries, just before the END block */
	REQUIRE(pread(fd, &byte, 1, end - (off_t)PT_LOG_END_LEN - 20) == 1);
	byte ^= 0x40;
	REQUIRE(pwrite(fd, &byte, 1, end - (off_t)PT_LOG_END_LEN - 20) == 1);
	no_summary(fd, "damaged");
	check_events(fd, &x, 1);
	close(fd);
}

/* UNTIL_FULL that filled: a summary, if there was room for it, counts
 * exactly what the full reader returns. */
static void t_until_full(void)
{
	static struct want x;
	struct pt_attr_img a = mkattr(200);
	struct pt_logw w;
	struct pt_log_summary s;
	int fd = mfd();

	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_UNTIL_FULL, 200000) == 0);
	write_log(fd, &w, &x, 20000, 0);
	CHECK(w.full);
	w.stream_lost = 123456;
	pt_logw_finish(&w, &ST);
	pt_logw_free(&w);
	int rc = pt_log_summary_read(fd, &s);
	CHECK(rc == 0 || rc == ENOENT);
	if (rc == 0) {
		uint64_t nerr;
		CHECK_EQ(s.events, count_events(fd, &nerr));
		pt_log_summary_free(&s);
	}
	printf("until-full: %s\n", rc == 0 ? "a summary of what was written" : "no room, no summary");
	close(fd);
}

/* Format 6 against 5 (and 7 against 6, and 8, the current one): a log with thread identities (THREAD)
 * and payload descriptions (TYPE) among its events.  Written as 6, the
 * full reader and the summary both give them; written as 5 (the summary
 * but no such entries), neither has them and the summary still reads; a
 * version-6 log relabelled 5 (header CRC fixed) has them where format 5
 * has none: the blocks that hold them are damage, the summary is none. */
static int meta_log(unsigned version, struct want *x)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .version = version };
	struct pt_logw w;
	struct pt_ext_obj m;
	int fd = mfd();

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	memset(&m, 0, sizeof m);
	m.kind = PT_EXT_OBJ_THREAD, m.pid = 77, m.base = 0x7f00aa, m.lo = 4321, m.ts = T0;
	strcpy(m.path, "worker-1");
	CHECK_RC(pt_logw_obj(&w, &m), 0);
	memset(&m, 0, sizeof m);
	m.kind = PT_EXT_OBJ_TYPE, m.pid = 77, m.lo = 20, m.ts = T0;
	strcpy(m.path, "id:u32, cost_us:u32");
	CHECK_RC(pt_logw_obj(&w, &m), 0);
	write_log(fd, &w, x, 3000, 0);
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	return fd;
}

/* The log of meta_log() read whole (version, its THREAD and TYPE entries:
 * `meta` of each, no error event) and through its summary. */
static void meta_check(int fd, unsigned version, size_t meta, const struct want *x)
{
	struct pt_logr r;
	struct pt_ext_summary *es;
	size_t nthr = 0, ntyp = 0;

	check_events(fd, x, 0);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ((unsigned)r.version, version);
	for (size_t i = 0; i < r.objs.n; i++) {
		nthr += pt_objstore_kind(&r.objs, i) == PT_EXT_OBJ_THREAD;
		ntyp += pt_objstore_kind(&r.objs, i) == PT_EXT_OBJ_TYPE;
	}
	pt_logr_close(&r);
	CHECK_EQ(nthr, meta);
	CHECK_EQ(ntyp, meta);
	REQUIRE(pt_ext_log_summary(fd, &es) == 0);
	CHECK_EQ(es->events, x->events);
	CHECK_EQ(es->nobjs, 2u); /* the map of loaded code only */
	CHECK_EQ(es->nthreads, meta);
	CHECK_EQ(es->ntypes, meta);
	if (es->nthreads == 1)
		CHECK(es->threads[0].pid == 77 && es->threads[0].tid == 4321 &&
		      es->threads[0].thread == 0x7f00aa && !strcmp(es->threads[0].name, "worker-1"));
	if (es->ntypes == 1)
		CHECK(es->types[0].id == 20 && !strcmp(es->types[0].desc, "id:u32, cost_us:u32"));
	pt_ext_summary_free(es);
}

/* The header says format version (CRC fixed). */
static void relabel(int fd, unsigned version)
{
	unsigned char h[PT_LOG_HDR];

	REQUIRE(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	pt_log_put16(h + PT_LOG_H_VERSION, (uint16_t)version, 0);
	pt_log_put32(h + PT_LOG_H_CRC, pt_log_crc(0, h, PT_LOG_H_CRC), 0);
	REQUIRE(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
}

/* A PROC entry's CONT flag (format 11): kept, in the summary and read
 * whole; left out when written as format 10; a format 10 log that has it
 * is damaged there (the entry is not taken). */
static size_t proc_log(unsigned version, int *fd_out)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .version = version };
	struct pt_logw w;
	struct pt_ext_obj m;
	static struct want x;
	int fd = mfd();

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	for (int k = 0; k < 2; k++) { /* one that begins a process, one that goes on */
		memset(&m, 0, sizeof m);
		m.kind = PT_EXT_OBJ_PROC, m.pid = 77, m.lo = 1, m.ts = T0 + (uint64_t)k;
		m.flags = k ? PT_EXT_OBJ_CONT : 0;
		strcpy(m.path, k ? "after exec" : "before");
		CHECK_RC(pt_logw_obj(&w, &m), 0);
	}
	write_log(fd, &w, &x, 100, 0);
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	struct pt_ext_summary *es;
	size_t cont = 0;
	REQUIRE(pt_ext_log_summary(fd, &es) == 0);
	CHECK_EQ(es->nprocs, 2u);
	for (size_t i = 0; i < es->nprocs; i++)
		cont += es->procs[i].cont && !strcmp(es->procs[i].cmdline, "after exec");
	pt_ext_summary_free(es);
	*fd_out = fd;
	return cont;
}

static void t_proc_cont(void)
{
	uint64_t nerr;
	int fd;

	CHECK_EQ(proc_log(0, &fd), 1u);
	count_events(fd, &nerr);
	CHECK_EQ(nerr, 0u);
	relabel(fd, 10); /* (the summary too says 11's: no summary then) */
	count_events(fd, &nerr);
	CHECK(nerr >= 1);
	close(fd);
	CHECK_EQ(proc_log(10, &fd), 0u);
	count_events(fd, &nerr);
	CHECK_EQ(nerr, 0u);
	close(fd);
}

static void t_versions(void)
{
	static struct want x;
	struct pt_logr r;
	uint64_t nerr;
	int fd;

	CHECK_EQ(PT_LOG_VERSION, 11u);
	fd = meta_log(0, &x);
	meta_check(fd, 11, 1, &x);
	close(fd);

	/* written as format 10 (as main's writer did before PROC's CONT) */
	fd = meta_log(10, &x);
	meta_check(fd, 10, 1, &x);
	close(fd);

	/* written as format 9 (as main's writer did before WAITS entries) */
	fd = meta_log(9, &x);
	meta_check(fd, 9, 1, &x);
	close(fd);

	/* written as format 8 (as main's writer did before CHUNK blocks) */
	fd = meta_log(8, &x);
	meta_check(fd, 8, 1, &x);
	close(fd);

	/* written as format 7 (as main's writer did: no checkpoints) */
	fd = meta_log(7, &x);
	meta_check(fd, 7, 1, &x);

	/* relabelled 6: its block index is a kind format 6 does not have */
	relabel(fd, 6);
	count_events(fd, &nerr);
	CHECK(nerr >= 1);
	no_summary(fd, "format 7 relabelled 6");
	close(fd);

	/* written as format 6 (as main's writer did): a summary without index */
	fd = meta_log(6, &x);
	meta_check(fd, 6, 1, &x);

/* relabelled 5: the header says a format without such entries */
	relabel(fd, 5);
	count_events(fd, &nerr);
	CHECK(nerr >= 1);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.version, 5);
	for (size_t i = 0; i < r.objs.n; i++)
		CHECK(pt_objstore_kind(&r.objs, i) != PT_EXT_OBJ_THREAD &&
		      pt_objstore_kind(&r.objs, i) != PT_EXT_OBJ_TYPE);
	pt_logr_close(&r);
	no_summary(fd, "format 6 relabelled 5");
	close(fd);

	/* written as format 5 (as main's writer did): a summary, no entries */
	fd = meta_log(5, &x);
	meta_check(fd, 5, 0, &x);
	close(fd);
}

/* A summary whose write fails (the file may not grow past the END
 * block: RLIMIT_FSIZE) is left out, and that is not an error: every event
 * is in the log, which is whole and finished. */
static void t_no_room_to_write(void)
{
	static struct want x;
	struct pt_attr_img a = mkattr(200);
	struct pt_logw w;
	struct rlimit old, lim;
	int fd = mfd();

	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	write_log(fd, &w, &x, 3000, 0);
	w.stream_lost = 123456;
	CHECK_RC(pt_logw_sync(&w), 0);
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = w.pos + PT_LOG_END_LEN;
	REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	CHECK_RC(w.err, 0);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
	pt_logw_free(&w);
	no_summary(fd, "no room to write it");
	check_events(fd, &x, 0);
	close(fd);
}

struct sev { uint64_t ts; unsigned id; uint64_t lost; };

static size_t read_from(struct pt_logr *r, uint64_t x, struct sev *out, size_t cap,
                        uint64_t *first_lost_ctx)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	size_t n = 0;
	int first = 1;
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len;
		int un = 0;
		if (pt_logr_next(r, &ev, buf, sizeof buf, &len, &un) || un)
			break;
		uint64_t ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)ev.posix_timestamp.tv_nsec;
		if (first && r->last_lost_ok && first_lost_ctx)
			*first_lost_ctx = r->last_lost;
		first = 0;
		if (ts < x || n == cap)
			continue;
		out[n++] = (struct sev){ ts, ev.posix_event_id, r->last_lost_ok ? r->last_lost : 0 };
	}
	return n;
}

static void t_seek(void)
{
	enum { N = 30000 };
	static struct sev all[N * 2], part[N * 2];
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .block_size = 2048 };
	struct pt_logw w;
	struct pt_logr r;
	uint64_t lost = 0;
	int fd = mfd();

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	for (uint64_t i = 0; i < N; i++) {
		/* writer 1 on time; writer 2 lags behind by up to 3000 events */
		uint64_t ts = T0 + i * 100;
		if (i % 3 == 2)
			ts -= (i * 7919 % 3000) * 100;
		CHECK_RC(pt_logw_event(&w, ts, 1, i % 3 == 2 ? 2 : 1, 0x1000, 20 + i % 3, 0, &i, 8), 0);
		if (i % 1000 == 999)
			CHECK_RC(pt_logw_event_lost(&w, T0 + i * 100, 0, 0, 0, POSIX_TRACE_RESUME,
			                            lost += 3), 0);
	}
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK(r.nitems > 100);
	size_t nall = read_from(&r, 0, all, N * 2, NULL);
	CHECK_EQ(nall, N + N / 1000);
	int bad = 0, skipped = 0;
	for (uint64_t x = T0; x < T0 + N * 100ull + 500; x += 100 * 997) {
		/* the events at or after x, in the whole read's order */
		size_t want = 0;
		for (size_t k = 0; k < nall; k++)
			want += all[k].ts >= x;
		uint64_t before = 99;
		REQUIRE(pt_logr_seek(&r, x, &before) == 0);
		skipped += r.cur > 0;
		size_t at = r.cur;
		size_t n = read_from(&r, x, part, N * 2, NULL);
		size_t j = 0;
		for (size_t k = 0; k < nall; k++)
			if (all[k].ts >= x) {
				if (j >= n || part[j].ts != all[k].ts || part[j].id != all[k].id)
					bad++;
				j++;
			}
		bad += n != want;
		/* the count before the seek point: the last RESUME of the blocks skipped */
		uint64_t expect_before = 0;
		{
			static unsigned char buf[TRACE_DATA_MAX + 1];
			struct pt_logr q;
			/* (in the order of the file: the blocks before the point) */
			REQUIRE(pt_logr_open_opt(&q, fd, PT_LOGR_FILE_ORDER) == 0);
			while (q.cur < at) {
				struct posix_trace_event_info ev;
				size_t len;
				int un = 0;
				if (pt_logr_next(&q, &ev, buf, sizeof buf, &len, &un) || un)
					break;
				if (q.last_lost_ok && q.cur < at)
					expect_before = q.last_lost;
			}
			pt_logr_close(&q);
		}
		bad += before != expect_before;
		if (bad && bad < 4)
			fprintf(stderr, "seek %llu: %zu events, want %zu; before %llu, want %llu\n",
			        (unsigned long long)(x - T0), n, want, (unsigned long long)before,
			        (unsigned long long)expect_before);
	}
	CHECK_EQ(bad, 0);
	CHECK(skipped > 10); /* the index did skip blocks */
	pt_logr_close(&r);
	close(fd);
}

/* More entries of the map than a reader keeps (PT_LOG_OBJS_MAX, the
 * first ones): the writer keeps a copy of those only (it kept every one,
 * so a recorder of a program forking for days grew by each child's
 * entries), and the summary and the full reader give the same first
 * PT_LOG_OBJS_MAX entries as before.  That is a million entries and a GB
 * of memory (8 s): with PT_STRESS set (make stress); without, 70 000, more
 * than the 65 536 readers used to keep (a forking service's 21 845th
 * child was its last one named), all of them kept. */
static void t_many_objects(void)
{
	uint32_t keep = getenv("PT_STRESS") ? PT_LOG_OBJS_MAX : 70000;
	struct pt_attr_img a = mkattr(200);
	struct pt_logw w;
	struct pt_ext_obj m;
	struct want x;
	struct pt_logr r;
	struct pt_ext_summary *es;
	int fd = mfd();
	uint32_t n = keep == PT_LOG_OBJS_MAX ? PT_LOG_OBJS_MAX + 1000 : keep;

	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	for (uint32_t i = 0; i < n; i++) {
		memset(&m, 0, sizeof m);
		m.kind = i % 5 ? PT_EXT_OBJ_ADD : PT_EXT_OBJ_BEGIN;
		m.pid = (int32_t)(1000 + i / 5), m.ts = T0 + i;
		m.lo = 0x400000 + 0x1000ull * i, m.hi = m.lo + 0x1000, m.base = m.lo;
		snprintf(m.path, sizeof m.path, "/lib/o%u.so", i);
		CHECK_RC(pt_logw_obj(&w, &m), 0);
	}
	CHECK_EQ(w.nobjs, keep);
	write_log(fd, &w, &x, 100, 0);
	uint32_t extra = w.nobjs - keep; /* (write_log's own entries, under the bound) */
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.objs.n, (size_t)keep + extra);
	int first_ok = r.objs.n == keep + extra;
	for (size_t i = 0; first_ok && i < keep; i++) {
		struct pt_ext_obj o;
		pt_objstore_get(&r.objs, i, &o);
		first_ok = o.ts == T0 + i;
	}
	CHECK(first_ok);
	pt_logr_close(&r);
	REQUIRE(pt_ext_log_summary(fd, &es) == 0);
	CHECK_EQ(es->nobjs, (size_t)keep + extra);
	CHECK(es->nobjs >= keep && es->objs[keep - 1].ts == T0 + keep - 1);
	printf("many objects: %u written, %u kept by the writer, the reader and the summary\n", n,
	       keep);
	pt_ext_summary_free(es);
	close(fd);
}

int main(void)
{
	T_BEGIN(120);
	t_many_objects();
	t_append(0, 0, 0);
	t_append(1, 0, 0);
	t_append(0, 1024, 700); /* the summary in many blocks */
	t_none();
	t_until_full();
	t_no_room_to_write();
	t_versions();
	t_proc_cont();
	t_seek();
	T_END();
}
