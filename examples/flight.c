/*
 * flight.c -- a flight recorder: the program traces itself into a stream
 * that keeps only its latest events (POSIX_TRACE_LOOP: the oldest are
 * overwritten, nothing is written while all is well), and writes them to
 * a log when asked with a signal:
 *
 *   build/examples/flight LOG [EVENTS]     then: kill -USR1 PID (dump)
 *                                                kill -TERM PID (dump, end)
 *   build/examples/readlog LOG              (read the dumps back)
 *
 * Two worker threads record "step" events (text: "worker W step N"), each
 * EVENTS of them and then wait (default 0: for ever, one step a
 * millisecond).  SIGUSR1 writes what the stream holds to LOG
 * (posix_trace_flush) and goes on; SIGTERM or SIGINT writes the rest and
 * ends (posix_trace_shutdown).  Each dump appends to LOG.
 *
 * Signals and tracing: posix_trace_flush() and posix_trace_shutdown() are
 * not async-signal-safe (they take locks, allocate, write files), so they
 * must never run in a signal handler.  Here no handler runs at all: every
 * thread blocks the signals (the mask is inherited from main, which sets
 * it before making any thread), and one thread takes them with sigwait()
 * and does the work in ordinary thread context.  posix_trace_event() alone
 * is async-signal-safe in this library, so a handler may record events.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#define WORKERS 2

static trace_event_id_t ev_step;
static unsigned long events;    /* per worker; 0: for ever */
static atomic_int done;         /* set by the signal thread: the workers stop */

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	char text[48];

	for (unsigned long n = 0; !done && (events == 0 || n < events); n++) {
		int len = snprintf(text, sizeof text, "worker %d step %lu", me, n);
		posix_trace_event(ev_step, text, (size_t)len);
		if (events == 0) {
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
		}
	}
	return NULL;
}

/* Wait until the flush asked for is written (posix_trace_flush only asks). */
static void wait_flushed(trace_id_t trid)
{
	struct posix_trace_status_info st;
	struct timespec ms = { 0, 1000000 };

	while (posix_trace_get_status(trid, &st) == 0 &&
	       st.posix_log_full_status != POSIX_TRACE_FULL &&
	       st.posix_stream_flush_status == POSIX_TRACE_FLUSHING)
		nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t th[WORKERS];
	sigset_t set;
	int fd, rc, sig = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: flight LOG [EVENTS]\n");
		return 2;
	}
	events = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;

	/* first of all, before any thread: these signals are taken by sigwait only */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "flight: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	posix_trace_eventid_open("step", &ev_step);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, "flight");
	posix_trace_attr_setstreamsize(&attr, 64 * 1024);          /* the latest ~1500 events */
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP); /* keep the newest */
	posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);  /* every dump kept */
	rc = posix_trace_create_withlog(0, &attr, fd, &trid);
	posix_trace_attr_destroy(&attr);
	if (rc == 0)
		rc = posix_trace_start(trid);
	if (rc) {
		fprintf(stderr, "flight: tracing: %s\n", strerror(rc));
		return 1;
	}

	for (long i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	if (events) { /* a fixed run: say when it is over, so a test knows */
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
		printf("flight: %d workers recorded %lu steps each\n", WORKERS, events);
	}
	printf("flight: pid %d; kill -USR1 to dump, kill -TERM to dump and end\n", (int)getpid());
	fflush(stdout);

	/* the signal thread: here, main itself */
	while (sig != SIGTERM && sig != SIGINT) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGUSR1) {
			if ((rc = posix_trace_flush(trid)) != 0)
				fprintf(stderr, "flight: posix_trace_flush: %s\n", strerror(rc));
			wait_flushed(trid);
			printf("flight: dumped to %s\n", argv[1]);
			fflush(stdout);
		}
	}
	done = 1;
	if (!events)
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
	rc = posix_trace_shutdown(trid); /* writes what the stream still holds */
	close(fd);
	printf("flight: %s; ended\n", rc ? strerror(rc) : "last dump written");
	return rc != 0;
}
