/*
 * shutdown_reuse.c -- a process creates, starts and shuts down a stream of
 * its own again and again while three threads record all the time.  A
 * thread that records during the shutdown resyncs and detaches the view
 * before the shutdown unmaps it; the shutdown must still unmap it, or the
 * mapping keeps the slot's lock and after 8 rounds posix_trace_create(0)
 * fails with EAGAIN for good (found by fuzz/stream_fuzz).  Every round must
 * succeed and no stream segment may stay mapped afterwards.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <trace.h>
#include "t.h"

#ifdef __SANITIZE_THREAD__ /* gcc -fsanitize=thread */
#define ROUNDS 150
#else
#define ROUNDS 600
#endif

static atomic_int stop;
static trace_event_id_t ev;

static void *rec(void *a)
{
	(void)a;
	for (int i = 0; !atomic_load(&stop); i++)
		posix_trace_event(ev, &i, sizeof i);
	return NULL;
}

/* mappings of the control memfd: the control segment itself plus any
 * stream region still mapped */
static int ctl_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char l[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(l, sizeof l, f))
		n += strstr(l, "posixtrace-ctl") != NULL;
	fclose(f);
	return n;
}

int main(void)
{
	pthread_t th[3];
	trace_attr_t attr;
	trace_id_t trid;
	int before = ctl_maps(), failed = 0;

	T_BEGIN(120);
	CHECK_RC(posix_trace_eventid_open("reuse", &ev), 0);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	for (int i = 0; i < 3; i++)
		CHECK_RC(pthread_create(&th[i], NULL, rec, NULL), 0);
	for (int k = 0; k < ROUNDS && !failed; k++) {
		int rc = posix_trace_create(0, &attr, &trid);
		if (rc) {
			fprintf(stderr, "round %d: posix_trace_create: %s\n", k, strerror(rc));
			failed = 1;
			break;
		}
		failed |= posix_trace_start(trid) != 0;
		failed |= posix_trace_shutdown(trid) != 0;
	}
	CHECK_EQ(failed, 0);
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(ctl_maps(), before);
	posix_trace_attr_destroy(&attr);
	T_END();
}
