/*
 * demo.c -- a controller, an instrumented program and an analyzer in one
 * process: create a stream for ourselves, record from two worker threads,
 * read the trace back while it is being written, and print it.
 *
 *   make demo
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>

#define ROUNDS 5

static trace_event_id_t ev_request, ev_reply;

struct msg {
	int worker;
	int round;
	char text[24];
};

static void *worker(void *arg)
{
	int me = (int)(long)arg;

	for (int r = 0; r < ROUNDS; r++) {
		struct msg m = { me, r, "" };
		snprintf(m.text, sizeof m.text, "request %d.%d", me, r);
		posix_trace_event(ev_request, &m, sizeof m);
		snprintf(m.text, sizeof m.text, "reply %d.%d", me, r);
		posix_trace_event(ev_reply, &m, sizeof m);
	}
	return NULL;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "demo: %s: %s\n", what, strerror(rc));
	return 1;
}

int main(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t th[2];
	int rc;

	/* the instrumented code registers its event types */
	posix_trace_eventid_open("request", &ev_request);
	posix_trace_eventid_open("reply", &ev_reply);

	/* the controller: a 64 KiB stream that stops when full */
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, "demo");
	posix_trace_attr_setstreamsize(&attr, 64 * 1024);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL);
	if ((rc = posix_trace_create(0, &attr, &trid)) != 0)
		return fail("posix_trace_create", rc);
	posix_trace_attr_destroy(&attr);
	if ((rc = posix_trace_start(trid)) != 0)
		return fail("posix_trace_start", rc);

	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	posix_trace_stop(trid);

	/* the analyzer: every event, in the order it happened */
	printf("%-20s %-8s %-20s %s\n", "time", "thread", "event", "data");
	for (;;) {
		struct posix_trace_event_info ev;
		char name[TRACE_EVENT_NAME_MAX + 1], data[256];
		size_t len;
		int none;

		rc = posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &none);
		if (rc)
			return fail("posix_trace_trygetnext_event", rc);
		if (none)
			break;
		posix_trace_eventid_get_name(trid, ev.posix_event_id, name);
		printf("%10lld.%09ld %-8lx %-20s ", (long long)ev.posix_timestamp.tv_sec,
		       ev.posix_timestamp.tv_nsec, (unsigned long)ev.posix_thread_id % 0xfffff, name);
		if (ev.posix_event_id == ev_request || ev.posix_event_id == ev_reply)
			printf("%s\n", ((struct msg *)data)->text);
		else
			printf("(%zu bytes)\n", len);
	}

	struct posix_trace_status_info st;
	posix_trace_get_status(trid, &st);
	printf("status: %s, %s, %s\n",
	       st.posix_stream_status == POSIX_TRACE_RUNNING ? "running" : "suspended",
	       st.posix_stream_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "events lost" : "no loss");
	return posix_trace_shutdown(trid) ? 1 : 0;
}
