/*
 * rotate_util.h -- for the tests of `record --rotate` (cli_rotate.c,
 * cli_rotate_keep.c): the program they record, and the parts read back
 * against its witness; ru_list() (the parts of a directory, in order)
 * also for cli_rotate_types.c and cli_relayd_rotate.c.
 *
 * The program (ru_program(), run as the test binary with --program):
 * NTHR threads named w0, w1, ... each record events "rseq" whose payload
 * (described "thr:u32,seq:u32") is the thread's number and its own
 * sequence number from 0.  With NEV > 0 each records NEV of them, as fast
 * as it can; with NEV 0 they record (PACE_US apart per 64 events, if not
 * 0) until the part DIR/NAME-STOP.ptlog exists.  With REMOVE > 0, once
 * DIR/NAME-REMOVE.ptlog exists, thread 0 removes it (the part being
 * written) and the one before it.  At the end it prints each thread's
 * count, "thr T count C", the witness.
 *
 * ru_read(): the parts DIR/NAME-N.ptlog in order of N, each opened alone
 * with posix_trace_open(); every rseq event checked against the witness:
 * in each thread, seq exactly one more than the one before (from 0, or,
 * from part `resync` on, from whatever comes first), so every event is
 * there exactly once and in order, across the parts.  With lossy set,
 * seq need only grow (the gaps are the losses each part tells, which the
 * caller adds up: pt_ext_losses() of each part read to its end).
 */
#ifndef POSIXTRACE_ROTATE_UTIL_H
#define POSIXTRACE_ROTATE_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include "../src/ext.h"
#include "helpers.h"

#define RU_MAXTHR 8
#define RU_MAXPARTS 4096

static struct {
	const char *dir, *name;
	unsigned nthr, stop, remove;
	uint64_t nev, pace_us;
	trace_event_id_t ev;
	_Atomic int done;
	uint64_t count[RU_MAXTHR];
} ru;

static int ru_part_exists(unsigned n)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s-%u.ptlog", ru.dir, ru.name, n);
	return stat(p, &st) == 0;
}

static void *ru_thread(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	char tn[16];
	uint32_t p[2] = { me, 0 };
	int removed = 0;

	snprintf(tn, sizeof tn, "w%u", me);
	pthread_setname_np(pthread_self(), tn);
	for (uint64_t i = 0; ru.nev ? i < ru.nev : !atomic_load(&ru.done); i++) {
		p[1] = (uint32_t)i;
		posix_trace_event(ru.ev, p, sizeof p);
		ru.count[me]++;
		if (!ru.nev && i % 64 == 63) {
			if (ru.pace_us)
				usleep((useconds_t)ru.pace_us);
			if (ru_part_exists(ru.stop))
				atomic_store(&ru.done, 1);
			if (me == 0 && ru.remove && !removed && ru_part_exists(ru.remove)) {
				char a[4096], b[4096];
				snprintf(a, sizeof a, "%s/%s-%u.ptlog", ru.dir, ru.name, ru.remove - 1);
				snprintf(b, sizeof b, "%s/%s-%u.ptlog", ru.dir, ru.name, ru.remove);
				if (unlink(a) != 0 || unlink(b) != 0)
					fprintf(stderr, "cannot remove the parts: %s\n", strerror(errno));
				removed = 1;
			}
		}
	}
	return NULL;
}

/* argv after --program: DIR NAME NTHR NEV STOP PACE_US REMOVE */
static inline int ru_program(char **a)
{
	pthread_t th[RU_MAXTHR];

	ru.dir = a[0], ru.name = a[1];
	ru.nthr = (unsigned)atoi(a[2]);
	ru.nev = strtoull(a[3], NULL, 10);
	ru.stop = (unsigned)atoi(a[4]);
	ru.pace_us = strtoull(a[5], NULL, 10);
	ru.remove = (unsigned)atoi(a[6]);
	if (ru.nthr < 1 || ru.nthr > RU_MAXTHR)
		return 2;
	posix_trace_eventid_open("rseq", &ru.ev);
	posixtrace_eventid_describe(ru.ev, "thr:u32,seq:u32");
	for (unsigned i = 0; i < ru.nthr; i++)
		pthread_create(&th[i], NULL, ru_thread, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < ru.nthr; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < ru.nthr; i++)
		printf("thr %u count %llu\n", i, (unsigned long long)ru.count[i]);
	struct rusage u; /* (for a measure by hand: its CPU time, user + system) */
	if (getrusage(RUSAGE_SELF, &u) == 0)
		printf("cpu %.3f s\n", (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 +
		                        (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6);
	return 0;
}

/* The program's witness from its output: counts per thread; how many. */
static inline unsigned ru_witness(const char *out, uint64_t *count)
{
	unsigned n = 0, t;
	unsigned long long c;
	for (const char *p = out; p && (p = strstr(p, "thr ")); p++)
		if (sscanf(p, "thr %u count %llu", &t, &c) == 2 && t < RU_MAXTHR) {
			count[t] = c;
			n = t + 1 > n ? t + 1 : n;
		}
	return n;
}

struct ru_part {
	unsigned n;
	long long size;
	uint64_t events, all; /* rseq events; every event */
	uint64_t first, last; /* smallest and largest rseq timestamp */
	int named;            /* the part names rseq */
	unsigned threads;     /* bit t: thread t has events in it */
	uint64_t lost, told;  /* losses: the part's total (END), and what its RESUMEs told */
	int lost_ok;
};

static int ru_cmp(const void *a, const void *b)
{
	unsigned x = ((const struct ru_part *)a)->n, y = ((const struct ru_part *)b)->n;
	return x < y ? -1 : x > y;
}

/* The parts NAME-N.ptlog in dir, sorted by N; how many. */
static inline unsigned ru_list(const char *dir, const char *name, struct ru_part *p)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned np = 0;
	size_t k = strlen(name);

	REQUIRE(d);
	while ((e = readdir(d)) && np < RU_MAXPARTS) {
		char *end;
		if (strncmp(e->d_name, name, k) || e->d_name[k] != '-')
			continue;
		unsigned long n = strtoul(e->d_name + k + 1, &end, 10);
		if (strcmp(end, ".ptlog") || !n)
			continue;
		struct stat st;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		memset(&p[np], 0, sizeof p[np]);
		p[np].n = (unsigned)n;
		p[np].size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
		np++;
	}
	closedir(d);
	qsort(p, np, sizeof *p, ru_cmp);
	return np;
}

/* Reads the parts p[0 .. np) of dir (ru_list) against the witness: next[t]
 * is the seq expected next in thread t (UINT64_MAX: any, then on from
 * it); from part number `resync` on, every thread starts again so.
 * Returns the number of events out of place (0: every one exactly once,
 * in order). */
static int ru_lossy;
static inline uint64_t ru_read(const char *dir, const char *name, struct ru_part *p,
                               unsigned np, uint64_t *next, unsigned nthr, unsigned resync)
{
	uint64_t bad = 0;

	for (unsigned i = 0; i < np; i++) {
		char path[4096];
		trace_id_t log;
		trace_event_id_t id = 0;
		snprintf(path, sizeof path, "%s/%s-%u.ptlog", dir, name, p[i].n);
		int fd = open(path, O_RDONLY);
		REQUIRE(fd >= 0);
		int rc = posix_trace_open(fd, &log);
		CHECK_RC(rc, 0);
		if (rc) {
			fprintf(stderr, "%s: cannot open it alone\n", path);
			close(fd);
			bad++;
			continue;
		}
		/* the type by its name, from the part's own list of types */
		p[i].named = t_type_named(log, "rseq", &id);
		if (resync && p[i].n == resync)
			for (unsigned t = 0; t < nthr; t++)
				next[t] = UINT64_MAX;
		p[i].first = UINT64_MAX;
		for (;;) {
			struct posix_trace_event_info ev;
			uint32_t d[2];
			size_t len = 0;
			int unav = 0;
			rc = posix_trace_getnext_event(log, &ev, d, sizeof d, &len, &unav);
			if (rc || unav)
				break;
			p[i].all++;
			if (!p[i].named || ev.posix_event_id != id)
				continue;
			uint64_t ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
			              (uint64_t)ev.posix_timestamp.tv_nsec;
			p[i].events++;
			if (ts < p[i].first)
				p[i].first = ts;
			if (ts > p[i].last)
				p[i].last = ts;
			if (len != sizeof d || d[0] >= nthr) {
				bad++;
				continue;
			}
			p[i].threads |= 1u << d[0];
			if (next[d[0]] != UINT64_MAX &&
			    (ru_lossy ? d[1] < next[d[0]] : d[1] != next[d[0]])) {
				if (bad++ < 5)
					fprintf(stderr, "%s: thread %u: seq %u, expected %llu\n", path, d[0],
					        d[1], (unsigned long long)next[d[0]]);
			}
			next[d[0]] = (uint64_t)d[1] + 1;
		}
		struct pt_ext_losses l;
		if (pt_ext_losses(log, &l) == 0) {
			p[i].lost = l.total, p[i].told = l.at_resume;
			p[i].lost_ok = l.total_ok && !l.implausible;
		}
		posix_trace_close(log);
		close(fd);
	}
	return bad;
}

#endif
