/*
 * records.c -- the event record format in the stream (src/shm/layout.h):
 * short (8-byte) and wide (16-byte) headers.
 *
 * 1. Encoding: every timestamp, id, flag set, length and address that a
 *    record can carry comes back from its words, short records within
 *    2^32 ticks of the chunk's base and wide ones within 2^47.
 * 2. The writer's rule, read off the segment: in each of this thread's
 *    chunks the first record is wide, and a later one is wide exactly when
 *    its caller differs from the record before it.  Events come from three
 *    call sites in a random order, with payloads of 0 to 40 bytes.
 * 3. Read back: every event, in order, with the address of its own call
 *    site (the same for all events of a site, distinct between sites,
 *    inside the site's function), its id and its payload.
 * 4. Time: an event more than 2^32 ticks after its chunk's base is wide
 *    although its caller did not change, and its timestamp is right
 *    (between CLOCK_REALTIME read around the call).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "../src/api/api.h"
#include "helpers.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#define N 20000

static trace_event_id_t ids[3];
static unsigned char pay[64];
static volatile unsigned calls; /* (so that no site ends in a tail call) */

NOINLINE static void site0(size_t len) { posix_trace_event(ids[0], pay, len); calls++; }
NOINLINE static void site1(size_t len) { posix_trace_event(ids[1], pay, len); calls++; }
NOINLINE static void site2(size_t len) { posix_trace_event(ids[2], pay, len); calls++; }
static void (*const sites[3])(size_t) = { site0, site1, site2 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static unsigned char site_of[N];
static uint32_t len_of[N];

static void encoding(void)
{
	for (int i = 0; i < 200000; i++) {
		uint64_t base = next_rand(), r = next_rand();
		int wide = i & 1;
		uint64_t ts = base + (wide ? r & (PT_MASK48 >> 1) : r & 0xffffffffull);
		uint32_t id = (uint32_t)(r >> 50) & 0x3ffu, n = (uint32_t)next_rand() & 0xffffu;
		unsigned flags = (i & 2 ? PT_RF_TRUNC : 0) | (wide ? PT_RF_WIDE : 0);
		uintptr_t addr = (uintptr_t)(next_rand() & PT_MASK48);
		uint64_t w0 = pt_rec_w0(ts, id, flags, n), w1 = wide ? pt_rec_w1(ts, addr) : 0;
		int ok = pt_rec_tick(base, w0, w1) == ts && PT_REC_ID(w0) == id &&
		         PT_REC_LEN(w0) == n && PT_REC_FLAGS(w0) == flags &&
		         !!PT_REC_WIDE(w0) == wide && (!wide || (w1 & PT_MASK48) == addr);
		CHECK(ok);
		if (!ok)
			break;
	}
	/* the edges: 2^32 - 1 ticks short, 2^47 - 1 wide, a base near 2^64 */
	uint64_t base = UINT64_MAX - 5;
	CHECK(pt_rec_tick(base, pt_rec_w0(base + 0xffffffffull, 1, 0, 0), 0) == base + 0xffffffffull);
	uint64_t far = base + (1ull << 47) - 1;
	CHECK(pt_rec_tick(base, pt_rec_w0(far, 1, PT_RF_WIDE, 0), pt_rec_w1(far, 0)) == far);
}

/* This thread's chunks of its own events (level 0: START and STOP, the
 * trace id's, are at another), walked record by record: the writer's rule. */
static uint32_t walk(trace_id_t trid, uint32_t *nwide)
{
	struct pt_trid *t;
	uint32_t total = 0;

	*nwide = 0;
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	const struct pt_view *v = &t->s.view;
	for (uint32_t c = 0; c < v->nchunks; c++) {
		const struct pt_chunk *ck = &v->chunks[c];
		uint32_t commit = PT_COMMIT_POS(atomic_load(&ck->commit));
		unsigned state = PT_SS_STATE(atomic_load(&ck->ss));
		if ((state != PT_CK_OPEN && state != PT_CK_SEALED) || atomic_load(&ck->level) ||
		    atomic_load(&ck->pid) != getpid() ||
		    atomic_load(&ck->thread) != (uint64_t)pthread_self() || !commit)
			continue;
		const char *data = (const char *)v->data + (size_t)c * v->chunk_size;
		uint64_t prev = 0, base = atomic_load(&ck->base_ts);
		for (uint32_t off = 0; off < commit;) {
			const pt_word *rec = (const pt_word *)(data + off);
			uint64_t w0 = atomic_load(&rec[0]);
			int wide = PT_REC_WIDE(w0) != 0;
			uint64_t w1 = wide ? atomic_load(&rec[PT_REC_W1(PT_REC_LEN(w0))]) : 0;
			uint64_t addr = wide ? w1 & PT_MASK48 : prev;
			uint64_t far = (pt_rec_tick(base, w0, w1) - base) >> 32;
			/* a record whose caller did not change, near its chunk's
			 * base, is short */
			int ok = wide == (off == 0 || addr != prev || far);
			CHECK(ok);
			if (!ok)
				break;
			prev = addr;
			off += PT_REC_BYTES(PT_REC_LEN(w0), wide);
			*nwide += wide;
			total++;
		}
	}
	pt_trid_unlock(t);
	return total;
}

/* The next event of trid into ev, buf (64 bytes), *len: 0 when none is left. */
static int next_event(trace_id_t trid, struct posix_trace_event_info *ev, unsigned char *buf,
                      size_t *len)
{
	int none;
	REQUIRE(posix_trace_trygetnext_event(trid, ev, buf, 64, len, &none) == 0);
	return !none;
}

int main(void)
{
	trace_attr_t attr;
	trace_id_t trid;

	T_BEGIN(60);
	encoding();

	for (unsigned i = 0; i < sizeof pay; i++)
		pay[i] = (unsigned char)(i * 37 + 11);
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 4 << 20) == 0); /* holds them all */
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, 64) == 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	for (int k = 0; k < 3; k++) {
		char name[16];
		snprintf(name, sizeof name, "site%d", k);
		REQUIRE(posix_trace_eventid_open(name, &ids[k]) == 0);
	}
	REQUIRE(posix_trace_start(trid) == 0);
	uint32_t changes = 0;
	for (int i = 0; i < N; i++) {
		uint64_t r = next_rand();
		/* runs: the site changes about one time in four */
		site_of[i] = i && r % 4 ? site_of[i - 1] : (unsigned char)(r >> 8) % 3;
		len_of[i] = (uint32_t)(r >> 16) % 41;
		changes += i && site_of[i] != site_of[i - 1];
		sites[site_of[i]](len_of[i]);
	}
	REQUIRE(posix_trace_stop(trid) == 0);

	uint32_t nwide;
	CHECK_EQ(walk(trid, &nwide), N);
	printf("records: %u events, %u call-site changes, %u wide records\n", N, changes, nwide);
	CHECK(nwide > changes && nwide < changes + 64); /* + one per chunk begun */

	uintptr_t at[3] = { 0, 0, 0 };
	int i = 0;
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
	while (next_event(trid, &ev, buf, &len)) {
		if (ev.posix_event_id < PT_SYS_IDS)
			continue; /* START, STOP */
		CHECK(i < N);
		if (i >= N)
			break;
		int k = site_of[i];
		uintptr_t a = (uintptr_t)ev.posix_prog_address;
		if (!at[k]) {
			at[k] = a;
			CHECK(a > (uintptr_t)sites[k] && a - (uintptr_t)sites[k] < 256);
		}
		int ok = ev.posix_event_id == ids[k] && a == at[k] && len == len_of[i] &&
		         !memcmp(buf, pay, len);
		CHECK(ok);
		if (!ok)
			break;
		i++;
	}
	CHECK_EQ(i, N);
	CHECK(at[0] != at[1] && at[1] != at[2] && at[0] != at[2]);

	/* an event more than 2^32 ticks after its chunk's base */
	REQUIRE(posix_trace_clear(trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	site0(8);
	uint64_t t0 = pt_now(), bound = pt_mono_ns() + 20000000000ull;
	while (pt_now() - t0 < (1ull << 32) + (1ull << 28) && pt_mono_ns() < bound)
		usleep(50000);
	REQUIRE(pt_now() - t0 > (1ull << 32));
	struct timespec b, e;
	clock_gettime(CLOCK_REALTIME, &b);
	site0(8);
	clock_gettime(CLOCK_REALTIME, &e);
	REQUIRE(posix_trace_stop(trid) == 0);
	CHECK_EQ(walk(trid, &nwide), 2);
	CHECK_EQ(nwide, 2); /* the same caller, but far from the base */
	int got = 0;
	while (next_event(trid, &ev, buf, &len)) {
		if (ev.posix_event_id != ids[0])
			continue;
		CHECK(ev.posix_prog_address == (void *)at[0] && len == 8);
		if (++got == 2) {
			long long ts = (long long)ev.posix_timestamp.tv_sec * 1000000000LL +
			               ev.posix_timestamp.tv_nsec;
			/* (the clock's bound: implementation-defined.md) */
			CHECK(ts >= (long long)b.tv_sec * 1000000000LL + b.tv_nsec - 10000);
			CHECK(ts <= (long long)e.tv_sec * 1000000000LL + e.tv_nsec + 10000);
		}
	}
	CHECK_EQ(got, 2);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	T_END();
}
