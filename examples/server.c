/*
 * server.c -- a small server-like program instrumented with spans, by
 * the naming convention of posixtrace(1), SPANS:
 *
 *   queue/async-begin, queue/async-end  a request waiting in the queue:
 *                                       begun by the acceptor, ended by the
 *                                       worker that takes it (keyed by the
 *                                       request number, the payload's first
 *                                       8 bytes)
 *   request/begin, request/end          a worker handling a request
 *   parse/begin, parse/end              nested in request
 *   db/begin, db/end                    nested in request (1 in 10 slow)
 *
 *   posixtrace record -o server.ptlog -- build/examples/server [REQUESTS]
 *   posixtrace stats server.ptlog
 *   posixtrace top -- build/examples/server 0
 *
 * REQUESTS (default 300); 0: until killed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <trace.h>

#define WORKERS 3
#define QCAP 64

static trace_event_id_t q_begin, q_end, req_begin, req_end, parse_begin, parse_end, db_begin,
	db_end;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint64_t queue[QCAP];
static unsigned qhead, qn;
static int done;

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!qn && !done)
			pthread_cond_wait(&cv, &mu);
		if (!qn) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		uint64_t id = queue[qhead];
		qhead = (qhead + 1) % QCAP;
		qn--;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		posix_trace_event(q_end, &id, sizeof id);
		posix_trace_event(req_begin, &id, sizeof id);
		posix_trace_event(parse_begin, NULL, 0);
		pause_us(100 + (long)(id % 5) * 20);
		posix_trace_event(parse_end, NULL, 0);
		posix_trace_event(db_begin, NULL, 0);
		pause_us(id % 10 == 7 ? 5000 : 500);
		posix_trace_event(db_end, NULL, 0);
		posix_trace_event(req_end, &id, sizeof id);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 300;
	pthread_t th[WORKERS];

	posix_trace_eventid_open("queue/async-begin", &q_begin);
	posix_trace_eventid_open("queue/async-end", &q_end);
	posix_trace_eventid_open("request/begin", &req_begin);
	posix_trace_eventid_open("request/end", &req_end);
	posix_trace_eventid_open("parse/begin", &parse_begin);
	posix_trace_eventid_open("parse/end", &parse_end);
	posix_trace_eventid_open("db/begin", &db_begin);
	posix_trace_eventid_open("db/end", &db_end);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (uint64_t id = 1; n <= 0 || (long)id <= n; id++) {
		pause_us(300);  /* a request arrives */
		pthread_mutex_lock(&mu);
		while (qn == QCAP)
			pthread_cond_wait(&cv, &mu);
		posix_trace_event(q_begin, &id, sizeof id);
		queue[(qhead + qn++) % QCAP] = id;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
