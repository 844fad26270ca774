/*
 * loop_exact.c -- a flight recorder counts exactly (issue 46): in a log
 * written from a LOOP stream, and in a LOOP stream read at the end, the
 * events of the traced threads read plus the losses told add up to the
 * events they recorded, exactly, every time.
 *
 * The witness is each thread's own sequence number: its events come in
 * its order, none twice.  20 flight-recorder logs (LOOP stream of 1 MiB,
 * APPEND log, 3 threads flooding, flushed 3 times, then shut down) and 20
 * LOOP streams without a log, 4 threads, stopped and read to the end with
 * trygetnext.  Each run also holds the controller's START exactly once,
 * before every event of the threads (a pair telling losses whose reports
 * were overwritten may come before it, stamped as it), and a flight
 * recorder each of its flushes' pairs whole.
 *
 * Before the fix the stream's START (the controller's, in a chunk of its
 * own sealed at once) was overwritten by the traced threads' events and
 * counted among the losses: read + told was recorded + 1 in nearly every
 * run, and a flush's FLUSH_START could be overwritten before the flusher
 * read it (+3).
 */
#include <pthread.h>
#include <stdlib.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"
#include "flood_threads.h"

#define RUNS 20

struct tally { uint64_t read, bad, starts, stops, fstart, fstop, first_start; };

static void note(struct tally *c, const struct posix_trace_event_info *e, const struct pl *p,
                 size_t len, uint32_t *next)
{
	if (e->posix_event_id == POSIX_TRACE_START) {
		c->starts++;
		c->first_start += c->read == 0; /* before every thread's event */
	}
	c->stops += e->posix_event_id == POSIX_TRACE_STOP;
	c->fstart += e->posix_event_id == POSIX_TRACE_FLUSH_START;
	c->fstop += e->posix_event_id == POSIX_TRACE_FLUSH_STOP;
	if (e->posix_event_id != uid)
		return;
	c->read++;
	c->bad += !flood_witness(e, p, len, next);
}

static void verdict(const char *what, int run, trace_id_t t, const struct tally *c)
{
	struct pt_ext_losses l;
	uint64_t all = (uint64_t)nthr * per;

	CHECK_RC(pt_ext_losses(t, &l), 0);
	CHECK(l.total_ok);
	uint64_t told = l.at_resume + l.wrap_at_resume;
	if (c->read + told != all || c->bad || c->starts != 1 || !c->first_start)
		fprintf(stderr, "%s %d: %llu read + %llu told lost = %llu of %llu recorded; "
		        "%llu out of order; %llu START (before the threads: %llu)\n", what, run,
		        (unsigned long long)c->read, (unsigned long long)told,
		        (unsigned long long)(c->read + told), (unsigned long long)all,
		        (unsigned long long)c->bad, (unsigned long long)c->starts,
		        (unsigned long long)c->first_start);
	CHECK_EQ(c->read + told, all);
	CHECK_EQ(told, l.total);
	CHECK(told > 0); /* (it did wrap) */
	CHECK_EQ(c->bad, 0);
	CHECK_EQ(c->starts, 1);
	CHECK_EQ(c->first_start, 1);
	CHECK_EQ(c->stops, 1);
}

/* a LOOP stream with an APPEND log, flushed 3 times while 3 threads flood */
static void flight_log(int run)
{
	char path[] = "/tmp/pt-loop-exact-XXXXXX";
	int fd = mkstemp(path);
	trace_id_t t;

	REQUIRE(fd >= 0);
	unlink(path);
	flood_record(fd, 1, 3, 300000);

	struct tally c = { 0 };
	uint32_t next[MAXT] = { 0 };
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &t) == 0);
	for (;;) {
		struct posix_trace_event_info e;
		struct pl p;
		size_t len = 0;
		if (t_get(t, &e, &p, sizeof p, &len))
			break;
		note(&c, &e, &p, len, next);
	}
	verdict("flight-recorder log", run, t, &c);
	CHECK(c.fstart >= 1);
	CHECK_EQ(c.fstart, c.fstop);
	CHECK_RC(posix_trace_close(t), 0);
	close(fd);
}

/* a LOOP stream without a log, 4 threads, read once they are done */
static void loop_stream(int run)
{
	trace_attr_t at;
	trace_id_t t;
	pthread_t th[MAXT];

	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 256u << 10) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&at, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_create(0, &at, &t) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(t) == 0);
	start_flood(th, 4, 100000);
	join_flood(th);
	CHECK_RC(posix_trace_stop(t), 0);

	struct tally c = { 0 };
	uint32_t next[MAXT] = { 0 };
	for (;;) {
		struct posix_trace_event_info e;
		struct pl p;
		size_t len = 0;
		if (t_try(t, &e, &p, sizeof p, &len))
			break;
		note(&c, &e, &p, len, next);
	}
	verdict("LOOP stream", run, t, &c);
	CHECK_RC(posix_trace_shutdown(t), 0);
}

int main(void)
{
	T_BEGIN(240);
	REQUIRE(posix_trace_eventid_open("loop_exact.ev", &uid) == 0);
	for (int run = 0; run < RUNS; run++) {
		flight_log(run);
		loop_stream(run);
	}
	if (!t_failures)
		printf("%d flight-recorder logs and %d LOOP streams: read + lost = recorded, exactly\n",
	       RUNS, RUNS);
	T_END();
}
