/*
 * stream_fuzz.c -- libFuzzer target for the stream reader (src/reader/read.c) and
 * the controller's other calls on a segment that a hostile traced process
 * writes over while the controller reads it (docs/security.md).
 *
 * Per input: a stream for this process (LOOP or UNTIL_FULL, small), a fixed
 * set of events (payloads of 0 bytes to more than max-data-size, nested
 * signal levels, a second thread), then a script: patches over the segment
 * (bytes, words, word additions) between reads, more events, stop, start,
 * clear, status and names, clock advances; then a read to the end and
 * shutdown.  Checked: no crash, out-of-bounds access, hang or unbounded
 * allocation (ASan, UBSan, -timeout, -rss_limit_mb); every call succeeds;
 * every event is well formed (id < 1024, length within the buffer and the
 * record limit, truncation status, tv_nsec); no more events than a bound
 * set by what was recorded and patched (else the reader loops); once read
 * dry, polls that find nothing grow nothing in the reader; after shutdown
 * nothing of the stream stays mapped (its slot's lock is free); until the
 * first patch, no POSIX_TRACE_ERROR, no unknown id, payloads as recorded.
 *
 * Runs depend only on the input: the library is built for this target with
 * clock_gettime and pthread_self redirected here (a virtual clock, reset
 * per input; fixed thread ids), ticks come from that clock, not the TSC,
 * and the recorded pid is fixed.  STREAM_FUZZ_TRACE=1 prints the script and
 * the events; STREAM_FUZZ_TWICE=1 runs each input twice and compares.
 * Input format: fuzz/stream_seeds.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../src/api/api.h"

#define T0       1000000000000ull      /* virtual CLOCK_MONOTONIC at each start */
#define REAL_OFF 1700000000000000000ull /* CLOCK_REALTIME - CLOCK_MONOTONIC */
#define NBUF     4

int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts);
pthread_t ptfuzz_thread_self(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Atomic uint64_t fake_ns;
static _Thread_local pthread_t fake_self = 0x7f0000001000ul;
static trace_event_id_t ids[4];
static const size_t lens[8] = { 0, 1, 8, 13, 64, 300, 1500, 70000 };
static const size_t bufsz[NBUF] = { 0, 5, 64, TRACE_DATA_MAX + 1 };
static unsigned char *bufs[NBUF], payload[256 + 70000];
static int tracing, lockfd; /* lockfd: the control memfd, opened anew */
/* per input */
static trace_id_t trid;
static struct pt_view *view;
static const uint8_t *in;
static size_t left, max_data;
static uint64_t recorded, nread, npatch, digest;
static int clean, slot;

/* every clock read advances the virtual clock by 100 ns */
int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)
		return clock_gettime(clk, ts);
	uint64_t ns = atomic_fetch_add(&fake_ns, 100) + (clk == CLOCK_REALTIME ? REAL_OFF : 0);
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
	return 0;
}

pthread_t ptfuzz_thread_self(void) { return fake_self; }

static unsigned next(void) { return left ? (left--, *in++) : 0; }

_Noreturn static void fail(const char *what)
{
	fprintf(stderr, "stream_fuzz: %s (after %llu events)\n", what, (unsigned long long)nread);
	abort();
}

/* n events of the fixed pattern at a signal nesting level (PT_LEVELS: too
 * deep for the library, so they are lost and the loss reported) */
static void record(unsigned n, unsigned seed, unsigned level)
{
	for (unsigned i = 0, k = seed; i < n; i++, k++, recorded++) {
		atomic_store(&pt_nest, level);
		posix_trace_event(ids[k % 4], payload + (k * 7 & 0xff), lens[k % 8]);
		atomic_store(&pt_nest, 0);
	}
}

static void *thread_main(void *arg)
{
	fake_self = 0x7f0000002000ul;
	record((unsigned)(uintptr_t)arg, 3, 0);
	return NULL; /* its chunks are sealed as it exits */
}

static void in_thread(unsigned n)
{
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, (void *)(uintptr_t)n) || pthread_join(th, NULL))
		fail("pthread");
}

static void check(const struct posix_trace_event_info *ev, const unsigned char *d, size_t len,
                  size_t num)
{
	trace_event_id_t id = ev->posix_event_id;
	int tr = ev->posix_truncation_status;
	long ns = ev->posix_timestamp.tv_nsec;
	size_t lim = id < PT_SYS_IDS ? 2 * sizeof(trace_event_set_t) : max_data;
	uint64_t bound = 4096 + 4 * recorded +
	                 npatch * (2 * recorded + 2 * PT_LOSS_RING + 4 * (view->chunk_size / 16 + 1));

	if (tracing)
		fprintf(stderr, "  event %u len %zu/%zu trunc %d t %lld.%09ld\n", id, len, num, tr,
		        (long long)ev->posix_timestamp.tv_sec, ns);
	if (id >= PT_NIDS || len > num || len > lim || tr < POSIX_TRACE_NOT_TRUNCATED ||
	    tr > POSIX_TRACE_TRUNCATED_READ || (tr == POSIX_TRACE_TRUNCATED_READ && len != num) ||
	    ns < 0 || ns >= 1000000000)
		fail("malformed event");
	if (++nread > bound)
		fail("more events than the stream can hold: the reader loops");
	if (clean && (id == POSIX_TRACE_ERROR ||
	              (id >= PT_SYS_IDS && id != ids[0] && id != ids[1] && id != ids[2] && id != ids[3])))
		fail("undamaged stream: error or unknown id");
	for (size_t k = 1; clean && id >= PT_SYS_IDS && k < len; k++)
		if (d[k] != (unsigned char)(d[0] + k))
			fail("undamaged stream: payload differs");
	digest = digest * 31 + id * 7 + len + (uint64_t)tr + (uint64_t)ns;
	for (size_t k = 0; k < len; k++)
		digest = digest * 31 + d[k];
}

/* One event into buffer b: 1, or none available now: 0.  Mode 0 try,
 * 1 timed with a deadline passed, 2 timed with a deadline one clock step
 * ahead (the reader registers as a waiter and sleeps 1 ms, once). */
static int read_one(unsigned b, unsigned mode)
{
	struct posix_trace_event_info ev;
	uint64_t at = mode == 2 ? atomic_load(&fake_ns) + REAL_OFF + 100 : 0;
	struct timespec dl = { (time_t)(at / 1000000000u), (long)(at % 1000000000u) };
	size_t len = 0;
	int none = 0, rc;

	b %= NBUF;
	if (!mode)
		rc = posix_trace_trygetnext_event(trid, &ev, bufs[b], bufsz[b], &len, &none);
	else if ((rc = posix_trace_timedgetnext_event(trid, &ev, bufs[b], bufsz[b], &len, &none,
	                                              &dl)) == ETIMEDOUT || rc == EINTR)
		return 0; /* EINTR: libFuzzer's timer signal */
	if (rc)
		fail("getnext failed");
	if (!none)
		check(&ev, bufs[b], len, bufsz[b]);
	return !none;
}

/* A part of the segment, from the controller's own geometry: r % 9 =
 * header, one of its counters (number r / 9), chunk descriptors, the
 * acquisition and seal logs, chunk data (16 MiB at most), names, loss ring,
 * the map of loaded code (its first 64 entries). */
static unsigned char *region(unsigned r, size_t *n)
{
#define O(f) offsetof(struct pt_hdr, f)
	static const size_t ctr[13] = { O(state), O(overrun), O(stop_ts), O(lost), O(loss_gen),
	                                O(free_top), O(acq_seq), O(sealed_bytes), O(seal_seq),
	                                O(reclaim), O(waiters), O(obj_next), O(obj_lost) };
	struct pt_view *v = view;
	unsigned char *h = (unsigned char *)v->hdr;
	size_t log = ((size_t)v->log_mask + 1) * 8, data = (size_t)v->nchunks * v->chunk_size;
	struct { void *p; size_t n; } rg[9] = {
		{ h, sizeof *v->hdr }, { h + ctr[r / 9 % 13], sizeof *v->hdr - ctr[r / 9 % 13] },
		{ v->chunks, v->nchunks * sizeof *v->chunks }, { (void *)v->acq_log, log },
		{ (void *)v->seal_log, log }, { v->data, data < (1u << 24) ? data : 1u << 24 },
		{ v->names, PT_NIDS * sizeof *v->names }, { h + O(loss_tag), 4 * PT_LOSS_RING * 8 },
		{ v->objs, 64 * sizeof *v->objs },
	};
	*n = rg[r % 9].n;
	return rg[r % 9].p;
}

/* The traced process writes over its segment: kind 0 bytes, 1 a word
 * (8 bytes), 2 a signed byte added to a word.  Offsets wrap in the region. */
static void patch(int kind)
{
	unsigned r = next(), off = next() | next() << 8 | next() << 16;
	size_t n, len = kind == 0 ? next() % 65 : 8;
	unsigned char *p = region(r, &n), b[64];
	uint64_t w;

	off = r % 9 == 1 ? 0 : off % n;
	if (kind)
		off &= ~7u;
	if (len > n - off)
		len = n - off;
	for (size_t i = 0; i < (kind == 2 ? 1 : len); i++)
		b[i] = (unsigned char)next();
	if (kind == 2) {
		memcpy(&w, p + off, 8);
		w += (uint64_t)(int64_t)(int8_t)b[0];
		memcpy(b, &w, 8);
	}
	memcpy(p + off, b, len);
	npatch++;
	clean = 0;
}

/* Entries the reader holds (chunks queued, losses, writers). */
static size_t reader_holds(void)
{
	struct pt_trid *t;

	if (pt_trid_lock(trid, &t))
		fail("lock");
	size_t n = t->s.rd.ck_cap + t->s.rd.loss.cap + t->s.rd.w_cap;
	for (uint32_t i = 0; i < t->s.rd.nw; i++)
		n += t->s.rd.w[i].lost.cap;
	pt_trid_unlock(t);
	return n;
}

static void names_and_status(void)
{
	struct posix_trace_status_info st;
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t id;
	int none = 0;

	if (posix_trace_get_status(trid, &st) || posix_trace_eventtypelist_rewind(trid))
		fail("status");
	for (unsigned i = 0; !none; i++) {
		if (posix_trace_eventtypelist_getnext_id(trid, &id, &none) ||
		    (!none && (i >= PT_NIDS || id >= PT_NIDS)))
			fail("type list");
		if (!none && !posix_trace_eventid_get_name(trid, id, name) &&
		    strnlen(name, sizeof name) == sizeof name)
			fail("name not terminated");
	}
	/* the map of loaded code: whatever was written there, sound entries */
	struct pt_ext_obj o[8];
	size_t n = 0;
	for (size_t from = 0; !pt_ext_objects(trid, from, o, 8, &n) && n; from += n)
		for (size_t i = 0; i < n; i++)
			if (o[i].kind < PT_EXT_OBJ_BEGIN || o[i].kind > PT_EXT_OBJ_LOST ||
			    o[i].bid_len > PT_EXT_OBJ_BID_MAX || !memchr(o[i].path, 0, sizeof o[i].path) ||
			    from + i > PT_OBJ_SLOTS + 64)
				fail("map of loaded code");
	/* a name this process has: found in its registry, claimed in the stream */
	if (posix_trace_trid_eventid_open(trid, "fuzz-b", &id) || id >= PT_NIDS)
		fail("trid_eventid_open");
}

static void run_op(unsigned op)
{
	unsigned a;

	if (tracing)
		fprintf(stderr, "op %u\n", op % 12);
	switch (op % 12) {
	case 0: case 1: case 2: patch((int)(op % 12)); break;
	case 3: a = next(); /* up to 16 events, buffer a >> 4, first mode a >> 6 */
		for (unsigned i = 0; i <= (a & 15) && read_one(a >> 4, (i + (a >> 6)) % 3); i++)
			;
		break;
	case 4: while (read_one(NBUF - 1, 0)) /* read dry */
			;
		break;
	case 5: a = next(); record(a & 63, a, (a >> 6) == 3 ? PT_LEVELS : a >> 6); break;
	case 6: in_thread(next() & 63); break;
	case 7: recorded++; if (posix_trace_stop(trid)) fail("stop"); break;
	case 8: recorded++; if (posix_trace_start(trid)) fail("start"); break;
	case 9: if (posix_trace_clear(trid)) fail("clear"); break;
	case 10: atomic_fetch_add(&fake_ns, (uint64_t)next() * 1000000u); break; /* ms */
	default: names_and_status(); break;
	}
}

static uint64_t run(const uint8_t *data, size_t size)
{
	static const size_t sizes[4] = { 256, 4096, 16384, 131072 }, maxd[4] = { 0, 24, 200, 1200 };
	trace_attr_t attr;
	struct pt_trid *t;
	unsigned setup, nev;
	int rc;

	in = data, left = size;
	setup = next(), nev = next();
	recorded = nread = npatch = digest = 0;
	clean = 1;
	max_data = maxd[setup >> 3 & 3];
	atomic_store(&fake_ns, T0);
	pt_record_atfork_child(); /* this thread's chunks in earlier streams: forget them */
	pt_proc.retry_at = 0;

	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, setup & 1 ? POSIX_TRACE_UNTIL_FULL : POSIX_TRACE_LOOP);
	posix_trace_attr_setstreamsize(&attr, sizes[setup >> 1 & 3]);
	posix_trace_attr_setmaxdatasize(&attr, max_data);
	if ((rc = posix_trace_create(0, &attr, &trid)) != 0) {
		fprintf(stderr, "stream_fuzz: posix_trace_create: %s\n", strerror(rc));
		exit(1); /* all 128 streams of the machine in use: not a finding */
	}
	posix_trace_attr_destroy(&attr);
	if (posix_trace_start(trid) || pt_trid_lock(trid, &t))
		fail("start");
	view = &t->s.view; /* as a traced process finds its own mapping */
	slot = t->slot;
	pt_trid_unlock(t);

	record(nev / 2, 0, 0);
	for (unsigned l = 1; (setup & 0x80) && l <= PT_LEVELS; l++)
		record(2, l, l);
	if (setup & 0x20)
		in_thread(nev / 4);
	record(nev - nev / 2, nev, 0);
	if ((setup & 0x40) && posix_trace_stop(trid))
		fail("stop");
	while (left)
		run_op(next());
	while (read_one(NBUF - 1, 0))
		;
	size_t holds = reader_holds(), got = 0; /* polls that find nothing allocate nothing */
	for (int i = 0; i < 64; i++)
		got += (size_t)read_one(NBUF - 1, 0);
	if (!got && reader_holds() > holds)
		fail("the reader grows while there is nothing to read");
	names_and_status();
	if (posix_trace_shutdown(trid))
		fail("shutdown");
	/* the slot's lock is gone with the stream, unless a mapping outlived it */
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = slot, .l_len = 1 };
	if (fcntl(lockfd, F_OFD_GETLK, &fl) || fl.l_type != F_UNLCK)
		fail("after shutdown the slot is still locked: the segment is still mapped");
	return digest;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[4] = { "fuzz-a", "fuzz-b", "fuzz-c", "fuzz-d" };

	(void)argc, (void)argv;
	pt_clock_tsc = 0; /* ticks from the virtual clock */
	pt_pid = 4242;
	tracing = getenv("STREAM_FUZZ_TRACE") != NULL;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", pt_ctl_fd);
	if ((lockfd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		abort();
	for (unsigned i = 0; i < sizeof payload; i++)
		payload[i] = (unsigned char)i;
	for (unsigned i = 0; i < NBUF; i++) /* exact sizes: ASan sees any overrun */
		if (!(bufs[i] = malloc(bufsz[i])))
			abort();
	for (unsigned i = 0; i < 4; i++)
		if (posix_trace_eventid_open(names[i], &ids[i]))
			abort();
	if (posix_trace_create(0, NULL, &trid) || posix_trace_shutdown(trid))
		abort(); /* once-per-process work (the clock calibration) done here */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t d = run(data, size);

	if (getenv("STREAM_FUZZ_TWICE") && run(data, size) != d)
		fail("two runs of one input differ");
	return 0;
}
