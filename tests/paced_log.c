/*
 * paced_log.c -- a FLUSH stream with a log loses nothing when its
 * producers are paced below what the log's file system takes.
 *
 * Own process, a 16 MiB FLUSH stream (what `posixtrace record` uses by
 * default) with an APPEND log in a file in $TMPDIR (or /tmp), no no-loss
 * mode: 1, 2, 4 and 8 threads record 32-byte events in batches of 100,
 * each thread sleeping until its next batch is due.  In `make check` the
 * paced total is 200 K events/s for 0.1 s: 20 K events, about 1 MB, less
 * than the stream holds, so not one may be lost whatever the flusher's
 * speed or scheduling (the exact accounting is what is checked).  With
 * PACED_LOG_ROUNDS=N (make stress) each count of threads runs N rounds at
 * 1 M events/s in all for 1 s (about 50 MB/s of log, a twentieth or less
 * of a tmpfs's rate: the 16 MiB stream holds 300 ms of it): again nothing
 * may be lost.  Each run: the log holds exactly the events recorded, every
 * thread's in order, no OVERFLOW, and the stream counted no loss.
 * (The rounds are for the plain build: under ThreadSanitizer the flusher
 * is slower than 1 M events/s, and they lose events, as they should.)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "log_util.h"
#include "pace.h"

#define BATCH 100
#define MAXT 8

static trace_event_id_t id;

struct prod {
	int k;          /* thread number */
	double rate;    /* events/s of this thread */
	uint32_t n;     /* events to record */
};

static void *produce(void *arg)
{
	struct prod *p = arg;
	struct timespec t0;
	uint32_t buf[8] = { 0 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < p->n;) {
		pace_until(&t0, (double)i / p->rate);
		for (int b = 0; b < BATCH && i < p->n; b++, i++) {
			buf[0] = (uint32_t)p->k;
			buf[1] = i;
			posix_trace_event(id, buf, sizeof buf);
		}
	}
	return NULL;
}

static void one_run(int nt, double total_rate, double seconds)
{
	char path[256];
	const char *tmp = getenv("TMPDIR");
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t th[MAXT];
	struct prod p[MAXT];
	struct posix_trace_status_info si;

	snprintf(path, sizeof path, "%s/pt-paced-log-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
	posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
	posix_trace_attr_setstreamsize(&attr, 16u << 20);
	CHECK_RC(posix_trace_create_withlog(0, &attr, fd, &trid), 0);
	posix_trace_attr_destroy(&attr);
	CHECK_RC(posix_trace_start(trid), 0);
	uint32_t per = (uint32_t)(total_rate * seconds / nt);
	for (int k = 0; k < nt; k++) {
		p[k] = (struct prod){ k, total_rate / nt, per };
		REQUIRE(pthread_create(&th[k], NULL, produce, &p[k]) == 0);
	}
	for (int k = 0; k < nt; k++)
		pthread_join(th[k], NULL);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);

	/* the log: every event, each thread's in order, no OVERFLOW */
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	trace_id_t log;
	CHECK_RC(posix_trace_open(fd, &log), 0);
	uint32_t next[MAXT] = { 0 };
	uint64_t got = 0, overflow = 0, bad = 0;
	struct posix_trace_event_info ev;
	uint32_t buf[8];
	size_t len;
	int un, rc;
	while ((rc = posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un)) == 0 && !un) {
		if (ev.posix_event_id == POSIX_TRACE_OVERFLOW)
			overflow++;
		if (ev.posix_event_id != id)
			continue;
		got++;
		if (len != sizeof buf || buf[0] >= (uint32_t)nt || buf[1] != next[buf[0]])
			bad++;
		else
			next[buf[0]]++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(got, (uint64_t)per * nt);
	CHECK_EQ(bad, 0);
	CHECK_EQ(overflow, 0);
	posix_trace_close(log);
	close(fd);
	unlink(path);
}

int main(void)
{
	const char *r = getenv("PACED_LOG_ROUNDS");
	int rounds = r ? atoi(r) : 0;
	static const int threads[] = { 1, 2, 4, 8 };

	T_BEGIN(rounds ? 60 + 8 * rounds : 60);
	REQUIRE(posix_trace_eventid_open("paced", &id) == 0);
	for (int i = 0; i < 4; i++)
		one_run(threads[i], 200000, 0.1);
	for (int k = 0; k < rounds; k++)
		for (int i = 0; i < 4; i++)
			one_run(threads[i], 1000000, 1.0);
	T_END();
}
