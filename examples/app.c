/*
 * app.c -- an instrumented program for `posixtrace record` (make demo):
 * an event from a constructor, named worker threads with text and binary
 * events (the binary ones described by field), a forked child with events
 * of its own, and a clock tick.
 *
 *   posixtrace record -- build/examples/app [EXIT-STATUS [ROUNDS]]
 *
 * ROUNDS (default 1) is how many times the workers run; 0: until killed
 * (for `posixtrace attach` and `posixtrace live PID`).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#define WORKERS 3
#define ROUNDS 20

static trace_event_id_t ev_start, ev_request, ev_reply, ev_tick, ev_child;

struct reply { int worker, round, status; unsigned bytes; };

static void pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* Recorded before main(): `record` traces the program from its first event. */
__attribute__((constructor)) static void app_init(void)
{
	static const char msg[] = "constructor";
	posix_trace_eventid_open("app_start", &ev_start);
	posix_trace_event(ev_start, msg, sizeof msg - 1);
	posix_trace_eventid_open("request", &ev_request);
	posix_trace_eventid_open("reply", &ev_reply);
	posix_trace_eventid_open("tick", &ev_tick);
	posix_trace_eventid_open("child_step", &ev_child);
	/* what the binary payloads hold (an extension: `show` prints them
	 * field by field) */
	posixtrace_eventid_describe(ev_reply, "worker:i32, round:i32, status:i32, bytes:u32");
	posixtrace_eventid_describe(ev_tick, "tick:i32");
}

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	char url[32];

	snprintf(url, sizeof url, "worker-%d", me); /* traces name the thread */
	pthread_setname_np(pthread_self(), url);

	for (int r = 0; r < ROUNDS; r++) {
		int n = snprintf(url, sizeof url, "GET /item/%d/%d", me, r);
		posix_trace_event(ev_request, url, (size_t)n);
		pause_ms(1 + (me + r) % 3);
		struct reply rep = { me, r, r % 7 ? 200 : 404, (unsigned)(100 * r + me) };
		posix_trace_event(ev_reply, &rep, sizeof rep);
	}
	return NULL;
}

static void child(void)
{
	for (int i = 0; i < 5; i++) {
		char msg[32];
		int n = snprintf(msg, sizeof msg, "child step %d", i);
		posix_trace_event(ev_child, msg, (size_t)n);
		pause_ms(3);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	pthread_t th[WORKERS];
	int status;

	int rounds = argc > 2 ? atoi(argv[2]) : 1;
	pid_t pid = fork();          /* traced too: the stream is inherited */
	if (pid == 0)
		child();
	for (int round = 0; rounds <= 0 || round < rounds; round++) {
		for (long i = 0; i < WORKERS; i++)
			pthread_create(&th[i], NULL, worker, (void *)i);
		for (int t = 0; t < 10; t++) {
			posix_trace_event(ev_tick, &t, sizeof t);
			pause_ms(4);
		}
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	return argc > 1 ? atoi(argv[1]) : 0;
}
