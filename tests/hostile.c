/*
 * hostile.c -- the shared segment is a trust boundary.  While two threads
 * record into a LOOP stream and a reader reads it, a third thread writes
 * random words over the segment: chunk descriptors, both logs, the loss
 * ring, the event records, the pool counters.  The reader must never
 * crash, hang or return a record that is not well-formed, and it must
 * report the damage it notices as POSIX_TRACE_ERROR events.  Afterwards
 * shutdown works and a fresh stream records normally.  Then the same over a
 * FLUSH stream with a log: its flusher survives, and the log reads back as
 * well-formed events.
 *
 * This test reaches into the library's internals (src/api/api.h and the layers under it) to find the
 * segment, as a hostile traced process would find its own mapping.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "../src/api/api.h"
#include "hostile_util.h"

#ifdef __SANITIZE_THREAD__ /* gcc -fsanitize=thread */
#define SECONDS 1.0
#else
#define SECONDS 1.5
#endif

static trace_event_id_t ev;

/* The attributes of both streams: small, so the scribbler hits often. */
static void small_attr(trace_attr_t *attr)
{
	REQUIRE(posix_trace_attr_init(attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(attr, 256 << 10) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(attr, 64) == 0);
}

/* Two writers recording into the started stream trid and the scribbler
 * writing over its segment, until unleashed_stop() stops them. */
static void unleash(trace_id_t trid, pthread_t w[2], pthread_t *s)
{
	static struct hu_writer wr[2];
	static struct hu_scribble sc;
	sc = (struct hu_scribble){ hu_segment(trid), 88172645463325252ull, 1 };
	atomic_store(&hu_stop, 0);
	for (long i = 0; i < 2; i++) {
		wr[i] = (struct hu_writer){ ev, 40, (uint64_t)(i + 1) * 7919 + 1 };
		pthread_create(&w[i], NULL, hu_writer, &wr[i]);
	}
	pthread_create(s, NULL, hu_scribbler, &sc);
}

static void unleashed_stop(pthread_t w[2], pthread_t s)
{
	atomic_store(&hu_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	pthread_join(s, NULL);
}

/* A FLUSH stream with a log, scribbled on while two threads record: its
 * flusher (the fast path for runs, the general path for the rest) never
 * crashes or hangs, and the log it leaves reads back as well-formed
 * events (the bytes of a payload may be scribbled; its length and id are
 * never out of bounds). */
static void with_log(void)
{
	char path[] = "/tmp/pt-hostile-log-XXXXXX";
	int fd = mkstemp(path);
	trace_attr_t attr;
	trace_id_t trid, log;
	pthread_t w[2], s;

	REQUIRE(fd >= 0);
	small_attr(&attr);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_create_withlog(0, &attr, fd, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	unleash(trid, w, &s);
	double end = t_now_s() + SECONDS;
	while (t_now_s() < end)
		usleep(10000);
	unleashed_stop(w, s);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	int rfd = open(path, O_RDONLY);
	REQUIRE(rfd >= 0 && posix_trace_open(rfd, &log) == 0);
	uint64_t got = 0, mine = 0, bad = 0, told = 0;
	for (;;) {
		struct posix_trace_event_info info;
		unsigned char data[128];
		size_t len;
		int none, rc = posix_trace_getnext_event(log, &info, data, sizeof data, &len, &none);
		CHECK_RC(rc, 0);
		if (rc || none)
			break;
		got++;
		mine += info.posix_event_id == ev;
		told += info.posix_event_id == POSIX_TRACE_OVERFLOW;
		if ((info.posix_event_id == ev && len > 64) ||
		    info.posix_event_id >= __TRACE_EVENT_ID_LIMIT ||
		    info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ)
			bad++;
	}
	printf("hostile, with a log: %llu events in the log, %llu of them the writers', %llu "
	       "losses told\n", (unsigned long long)got, (unsigned long long)mine,
	       (unsigned long long)told);
	/* the writers' events are in the log, or their loss is told: a
	 * scribbled pool counter (sealed_bytes near 2^64) can keep the stream
	 * full for good, and its writers lose every event after it, counted
	 * (a traced process can always spoil its own recording) */
	CHECK(mine > 0 || told > 0);
	CHECK_EQ(bad, 0);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(fd);
	unlink(path);
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t w[2], s;

	REQUIRE(posix_trace_eventid_open("hostile", &ev) == 0);
	small_attr(&attr);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	unleash(trid, w, &s);

	uint64_t got = 0, errors = 0, bad = 0, other = 0;
	double end = t_now_s() + SECONDS;
	while (t_now_s() < end) {
		struct posix_trace_event_info info;
		unsigned char data[128];
		size_t len;
		int none;
		int rc = posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len, &none);
		CHECK_EQ(rc, 0);
		if (rc || none)
			continue;
		got++;
		if (info.posix_event_id == POSIX_TRACE_ERROR) {
			errors++;
		} else if (info.posix_event_id == ev) {
			/* a record that passed the checks is within bounds; its bytes
			 * may be scribbled, but its length never exceeds the limit */
			if (len > 64 || info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ)
				bad++;
		} else if (info.posix_event_id >= __TRACE_EVENT_ID_LIMIT) {
			bad++;
		} else {
			other++;
		}
	}
	unleashed_stop(w, s);

	printf("hostile: %llu events read, %llu POSIX_TRACE_ERROR, %llu others\n",
	       (unsigned long long)got, (unsigned long long)errors, (unsigned long long)other);
	CHECK(got > 0);
	CHECK_EQ(bad, 0);
	/* reading on after the damage stops still terminates */
	for (int i = 0; i < 1000000; i++) {
		struct posix_trace_event_info info;
		unsigned char data[128];
		size_t len;
		int none;
		if (posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len, &none) || none)
			break;
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);

	/* the library is still sound: a new stream records and reads normally */
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (int i = 0; i < 100; i++)
		posix_trace_event(ev, &i, sizeof i);
	CHECK_RC(posix_trace_stop(trid), 0);

	/* and one deliberate lie, deterministically: the 50th user record of
	 * this thread's chunk claims a payload longer than max-data-size */
	struct pt_trid *t;
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	struct pt_view *sv = &t->s.view;
	uint32_t lie = PT_NIL;
	for (uint32_t i = 0; i < sv->nchunks; i++) {
		uint64_t ss = atomic_load(&sv->chunks[i].ss);
		if (PT_SS_STATE(ss) == PT_CK_OPEN &&
		    atomic_load(&sv->chunks[i].pid) == getpid() &&
		    atomic_load(&sv->chunks[i].thread) == (uint64_t)pthread_self() &&
		    atomic_load(&sv->chunks[i].commit) > 0)
			lie = i;
	}
	REQUIRE(lie != PT_NIL);
	/* this thread's records (START and STOP are the controller's, in a
	 * chunk of their own): one wide record of 16 + 8 bytes, then, from the
	 * same call site, 99 short ones of 8 + 8 */
	const pt_word *first = (const pt_word *)(sv->data + (size_t)lie * sv->chunk_size);
	CHECK(PT_REC_WIDE(atomic_load(&first[0])));
	CHECK_EQ(atomic_load(&sv->chunks[lie].commit), 24u + 99u * 16u);
	pt_word *rec = (pt_word *)(sv->data + (size_t)lie * sv->chunk_size + 24 + 48 * 16);
	uint64_t w0 = atomic_load(&rec[0]);
	CHECK(!PT_REC_WIDE(w0) && PT_REC_LEN(w0) == sizeof(int));
	atomic_store(&rec[0], (w0 & 0xffffffffffffull) | (uint64_t)1000 << 48);
	pt_trid_unlock(t);
	int n = 0, lies = 0;
	for (;;) {
		struct posix_trace_event_info info;
		int v = -1, none;
		size_t len;
		unsigned char big[256];
		REQUIRE(posix_trace_trygetnext_event(trid, &info, big, sizeof big, &len, &none) == 0);
		memcpy(&v, big, sizeof v);
		if (none)
			break;
		if (info.posix_event_id == ev)
			CHECK_EQ(v, n++);
		if (info.posix_event_id == POSIX_TRACE_ERROR)
			lies++;
	}
	CHECK_EQ(lies, 1); /* reported once; the rest of that chunk is dropped */
	CHECK_EQ(n, 49);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	with_log();
	T_END();
}
