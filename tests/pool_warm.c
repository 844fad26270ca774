/*
 * pool_warm.c -- a process that goes on recording maps its share of the
 * stream early, so that its resident size is flat from then on (issue
 * 54; shm/segment.c, pt_slot_warm): from its 8th chunk of a stream on,
 * each chunk it takes maps one more piece of the base chunks (the first
 * 24 of a 16 MiB stream's, 6 MiB) and of the map of loaded code (1 MiB,
 * 256 KiB at a time); a process that records a few events and ends
 * never does.
 *
 * A stream of this process (16 MiB, 256 KiB chunks), read by this
 * thread.  A forked child records 10 events: its RssShmem stays under a
 * chunk.  Then threads of this process each record one event (a chunk
 * each) one after another, read as they go, so that the chunks taken are
 * the same one or two: 7 of them leave RssShmem under 4 chunks; no later
 * one adds more than a chunk and a little; after the 40th the base
 * chunks and the map are mapped.  Skips where the kernel has no
 * MADV_POPULATE_WRITE (before Linux 5.14).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "t.h"
#include "helpers.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define CHUNK_KB 256
#define BASE     24

static trace_event_id_t ev;

static long shm_kb(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	return t_proc_kb(p, "RssShmem");
}

static void *one(void *arg)
{
	int v = (int)(intptr_t)arg;
	posix_trace_event(ev, &v, sizeof v);
	return NULL;
}

static void drain(trace_id_t trid)
{
	struct posix_trace_event_info info;
	int v;
	size_t len;
	while (t_next(trid, &info, &v, sizeof v, &len))
		;
}

int main(void)
{
	T_BEGIN(60);
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED || madvise(probe, 4096, MADV_POPULATE_WRITE) != 0) {
		printf("SKIP: this kernel has no MADV_POPULATE_WRITE (Linux 5.14)\n");
		return 77;
	}
	munmap(probe, 4096);
	REQUIRE(posix_trace_eventid_open("warm", &ev) == 0);
	trace_id_t trid = t_own_started(1, 16u << 20);

	/* a helper: a few events, and it ends */
	int pfd[2], cfd[2];
	REQUIRE(pipe(pfd) == 0 && pipe(cfd) == 0);
	pid_t kid = fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		close(cfd[1]);
		for (int v = 0; v < 10; v++)
			posix_trace_event(ev, &v, sizeof v);
		t_write_full(pfd[1], "k", 1);
		char c;
		(void)read(cfd[0], &c, 1);
		_exit(0);
	}
	close(cfd[0]);
	char c;
	REQUIRE(t_read_full(pfd[0], &c, 1) == 0);
	long kid_kb = shm_kb(kid);
	close(cfd[1]);
	int st;
	REQUIRE(waitpid(kid, &st, 0) == kid);

	/* this process: chunk after chunk, each from the 8th on maps a piece */
	enum { N = 40 };
	long kb[N + 1], step = 0;
	kb[0] = shm_kb(getpid());
	for (int i = 1; i <= N; i++) {
		pthread_t th;
		REQUIRE(pthread_create(&th, NULL, one, (void *)(intptr_t)i) == 0);
		pthread_join(th, NULL);
		drain(trid);
		kb[i] = shm_kb(getpid());
		if (i > 1 && kb[i] - kb[i - 1] > step)
			step = kb[i] - kb[i - 1];
	}
	printf("pool_warm: the helper's RssShmem %ld kB; this process's %ld kB at first, %ld kB "
	       "after 7 chunks, %ld kB after %d (at most %ld kB more at one chunk)\n", kid_kb, kb[0],
	       kb[7], kb[N], N, step);
	CHECK(kid_kb >= 0 && kid_kb < CHUNK_KB);
	CHECK(kb[7] - kb[0] < 4 * CHUNK_KB);
	CHECK(step <= CHUNK_KB + 64);
	CHECK(kb[N] - kb[7] >= BASE * CHUNK_KB - 4 * CHUNK_KB + 1024);
	posix_trace_shutdown(trid);
	T_END();
}
