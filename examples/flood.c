/*
 * flood.c -- threads that record as fast as they can, to see how a trace
 * tells the events it lost:
 *
 *   posixtrace record --size 64K -- build/examples/flood [EVENTS [THREADS]]
 *
 * Each of THREADS threads (default 2) records EVENTS events (default
 * 200000) of type "flood"; each payload is the thread's number and the
 * event's sequence number in that thread (two 32-bit integers), so a
 * reader can tell which events are missing.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>

#define MAX_THREADS 64

static trace_event_id_t ev_flood;
static uint32_t events = 200000;

static void *flood(void *arg)
{
	uint32_t p[2] = { (uint32_t)(uintptr_t)arg, 0 };

	for (uint32_t i = 0; i < events; i++) {
		p[1] = i;
		posix_trace_event(ev_flood, p, sizeof p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = 2;
	pthread_t th[MAX_THREADS];

	if (argc > 1)
		events = (uint32_t)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		threads = (unsigned)strtoul(argv[2], NULL, 10);
	if (argc > 3 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: flood [EVENTS [THREADS (1-%d)]]\n", MAX_THREADS);
		return 2;
	}
	posix_trace_eventid_open("flood", &ev_flood);
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, flood, (void *)(uintptr_t)i) != 0) {
			perror("flood: pthread_create");
			return 1;
		}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
