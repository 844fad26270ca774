/*
 * pool_spare.c -- after a burst of other processes, a traced program's own
 * threads go on taking the chunks they used before, not the burst's
 * (issue 54; ring/pool.c, the spare stack).
 *
 * A forking service under a controller: its helpers, each a process of
 * its own, take chunks beyond the base ones when many are in use at once
 * (the recorder held up on a loaded machine).  Before, the reader gave
 * those back onto the top of the free stack, and the service's workers
 * took them next: each one mapped a chunk more in the service, for good
 * (a soak's RssShmem grew by three chunks).  Now a chunk beyond the base
 * goes back onto the spare stack, taken only when the base chunks are all
 * in use.  (Each writer here is a thread, whose chunk is sealed as it
 * ends, so that the reader gives every chunk back as soon as it has read
 * it; a process's last chunk goes back when the reader next looks for
 * dead writers.)
 *
 * The traced process S (a child of this one, the controller, which reads
 * its 16 MiB stream, 24 base chunks of 256 KiB): 26 threads each fill
 * most of a chunk at once, twice, read in between (S maps every base
 * chunk, and has taken
 * enough chunks to have mapped its share: shm/segment.c, pt_slot_warm);
 * then 24 forked
 * children each fill one and wait, then 20 more (these take chunks beyond
 * the base); the first 24 end and are read, then the other 20.  Then 8
 * threads of S each fill one at once.  Checked: every event read, each
 * writer's in sequence; S's RssShmem grows by less than half a chunk in
 * that last round (before: by 8 chunks' worth, about 1.8 MB).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include <sys/wait.h>
#include "t.h"
#include "helpers.h"

#define PAYLOAD 248
#define EVENTS  900 /* of PAYLOAD bytes: most of a 256 KiB chunk */
#define WARM    26  /* S's first threads: more than the 24 base chunks (twice) */
#define WAVE_A  24
#define WAVE_B  20
#define LAST    8   /* S's threads after the burst */
/* writers' numbers: S's first threads 0.., wave A 100.., B 200.., last 300.. */
#define WHO_MAX 400

struct pl {
	int32_t who, seq;
	char fill[PAYLOAD - 8];
};

static trace_event_id_t ev;
static pthread_barrier_t held;
static int rel_a = -1, rel_b = -1; /* S's ends of the waves' release pipes */

static void fill(int who)
{
	struct pl p;
	memset(&p, 0x5a, sizeof p);
	p.who = who;
	for (p.seq = 0; p.seq < EVENTS; p.seq++)
		posix_trace_event(ev, &p, sizeof p);
}

static void *thread_fill(void *arg)
{
	fill((int)(intptr_t)arg);
	pthread_barrier_wait(&held); /* all hold their chunks at once */
	return NULL;
}

static void *thread_one(void *arg)
{
	fill((int)(intptr_t)arg);
	return NULL;
}

/* n threads of S, numbered from first, each filling a chunk, all at once */
static void threads(int first, int n)
{
	pthread_t th[WARM];
	REQUIRE(pthread_barrier_init(&held, NULL, (unsigned)n) == 0);
	for (int i = 0; i < n; i++)
		REQUIRE(pthread_create(&th[i], NULL, thread_fill, (void *)(intptr_t)(first + i)) == 0);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&held);
}

/* n children of S, numbered from first, each filling a chunk and then
 * holding it until *release is closed; returns once all have filled */
static void wave(int first, int n, pid_t *kids, int *release)
{
	int done[2], rel[2];
	REQUIRE(pipe(done) == 0 && pipe(rel) == 0);
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		REQUIRE(kids[i] >= 0);
		if (kids[i] == 0) {
			close(done[0]);
			close(rel[1]);
			if (rel_a >= 0)
				close(rel_a); /* (wave B: only S may release wave A) */
			pthread_t th; /* (a thread's chunk is sealed as it ends) */
			REQUIRE(pthread_create(&th, NULL, thread_one, (void *)(intptr_t)(first + i)) == 0);
			pthread_join(th, NULL);
			t_write_full(done[1], "w", 1);
			char c;
			(void)read(rel[0], &c, 1); /* (end of file: released) */
			exit(0);
		}
	}
	close(done[1]);
	close(rel[0]);
	for (int i = 0; i < n; i++) {
		char c;
		REQUIRE(t_read_full(done[0], &c, 1) == 0);
	}
	close(done[0]);
	*release = rel[1];
}

static void reap(const pid_t *kids, int n)
{
	for (int i = 0; i < n; i++) {
		int st;
		REQUIRE(waitpid(kids[i], &st, 0) == kids[i]);
		REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

static _Noreturn void traced_main(int cmd, int rep)
{
	pid_t a[WAVE_A], b[WAVE_B];
	char c;

	REQUIRE(posix_trace_eventid_open("spare-burst", &ev) == 0);
	t_write_full(rep, "r", 1);
	while (t_read_full(cmd, &c, 1) == 0) {
		switch (c) {
		case '1': threads(0, WARM); break;
		case '2': threads(WARM, WARM); break;
		case 'A': wave(100, WAVE_A, a, &rel_a); break;
		case 'B': wave(200, WAVE_B, b, &rel_b); break;
		case 'a': close(rel_a), reap(a, WAVE_A); break;
		case 'b': close(rel_b), reap(b, WAVE_B); break;
		case '3': threads(300, LAST); break;
		}
		t_write_full(rep, &c, 1);
		if (c == 'q')
			exit(0);
	}
	exit(1);
}

static int seen[WHO_MAX], bad;

/* Reads until every writer in [lo, lo + n) has all its events (10 s at most). */
static void drain(trace_id_t trid, int lo, int n)
{
	struct posix_trace_event_info info;
	struct pl p;
	size_t len;
	double t0 = t_now_s();
	for (;;) {
		int whole = 0;
		for (int i = lo; i < lo + n; i++)
			whole += seen[i] == EVENTS;
		if (whole == n || t_now_s() - t0 > 10)
			break;
		if (!t_next(trid, &info, &p, sizeof p, &len)) {
			usleep(1000);
			continue;
		}
		if (info.posix_event_id != ev)
			continue;
		if (len != sizeof p || p.who < 0 || p.who >= WHO_MAX || p.seq != seen[p.who])
			bad++;
		else
			seen[p.who]++;
	}
}

static void step(struct t_pipes *s, char c)
{
	char r;
	t_write_full(s->cmd, &c, 1);
	REQUIRE(t_read_full(s->rep, &r, 1) == 0 && r == c);
}

int main(void)
{
	T_BEGIN(120);
	struct t_pipes s;
	pid_t spid = t_fork_piped(&s);
	if (spid == 0)
		traced_main(s.cmd, s.rep);
	char r;
	REQUIRE(t_read_full(s.rep, &r, 1) == 0 && r == 'r');

	trace_attr_t attr;
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 16u << 20) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, PAYLOAD) == 0);
	trace_id_t trid = t_create_ok(spid, &attr);
	REQUIRE(posix_trace_trid_eventid_open(trid, "spare-burst", &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);

	char status[64];
	snprintf(status, sizeof status, "/proc/%d/status", (int)spid);
	step(&s, '1');
	drain(trid, 0, WARM);
	step(&s, '2');
	drain(trid, WARM, WARM);
	step(&s, 'A');
	step(&s, 'B');
	usleep(200000); /* (the reader's next look at the pool sees all in use) */
	step(&s, 'a');
	drain(trid, 100, WAVE_A);
	step(&s, 'b');
	drain(trid, 200, WAVE_B);
	usleep(20000); /* (the last chunks given back) */
	long before = t_proc_kb(status, "RssShmem");
	step(&s, '3');
	long after = t_proc_kb(status, "RssShmem");
	drain(trid, 300, LAST);
	printf("pool_spare: S's RssShmem %ld kB before its last threads, %ld kB after\n", before,
	       after);

	int whole = 0;
	for (int i = 0; i < WHO_MAX; i++)
		whole += seen[i] == EVENTS;
	CHECK_EQ(bad, 0);
	CHECK_EQ(whole, 2 * WARM + WAVE_A + WAVE_B + LAST);
	CHECK(before > 0);
	CHECK(after - before < 128);
	step(&s, 'q');
	int st;
	REQUIRE(waitpid(spid, &st, 0) == spid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	posix_trace_shutdown(trid);
	posix_trace_attr_destroy(&attr);
	T_END();
}
