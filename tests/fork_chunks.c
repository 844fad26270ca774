/*
 * fork_chunks.c -- a program that forks short-lived children, one after
 * another, loses none of their events however many there are (issue 54):
 * each child leaves its open chunk behind when it exits, and the chunk
 * must go back to the stream once its events are read.  Before, the
 * stream ran out of chunks after 321 children (its chunk count) and every
 * later child's events were lost.
 *
 * `posixtrace record` of this program ("fork N K"): N children, one at a
 * time, each recording K events (its number, the event's number and its
 * pid as payload) and then ending three ways in turn: exit(), _exit(),
 * SIGKILL; and the middle one, like a daemon, closes every descriptor it
 * did not open (the library's liveness lock goes with them), records half
 * its events, sleeps while the others run, and records the rest: none of
 * its events may be lost or damaged.  On the default stream (flush, 16 MiB: 321 chunks of 256 KiB):
 * no overflow in the log and every child's K events.  As a flight
 * recorder read only at the end (loop, 16 MiB): the latest children's
 * events whole (their open chunks are sealed for them once they are gone,
 * so they can be stolen in turn; before, the first 321 children's were
 * kept and every later one's lost), the events said lost exactly those of
 * the ones before.  In both: each child's events in order, from the pid
 * it wrote, no other event of that type, each shown with its call site
 * (its file:line; built without libdw, the command names code by file
 * and offset only: "fork_chunks+0x...", never a raw address)
 * (the map of loaded code did not fill with the children's maps: each
 * child writes one entry, its parent's map, not the whole map again); and the
 * memory the stream's file holds stays what it was after the first 20
 * children: their chunks are reused, not new ones touched.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "t.h"
#include "cli_util.h"

#define CHILDREN 1000
#define EVENTS   10

struct payload {
	int32_t child, n, pid;
};

/* Bytes allocated to this process's control memfd, where the stream
 * `record` made for it lives; -1 if not found. */
static long long ctl_bytes(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long long got = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char p[300], l[256];
		snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(p, l, sizeof l - 1);
		struct stat st;
		if (n <= 0)
			continue;
		l[n] = 0;
		if (strncmp(l, "/memfd:posixtrace-ctl", 21) == 0 && stat(p, &st) == 0 &&
		    (long long)st.st_blocks * 512 > got)
			got = (long long)st.st_blocks * 512;
	}
	closedir(d);
	return got;
}

static int forker(int n, int k, const char *out)
{
	trace_event_id_t ev;
	long long early = -1;
	pid_t closer = -1;

	if (posix_trace_eventid_open("fork-ev", &ev) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 3;
		if (p == 0 && i == n / 2) {
			/* a daemon that closes every descriptor it did not open (and
			 * with them the library's), then records on while the others
			 * come and go: its open chunk is not taken for a dead one */
			struct payload d = { i, 0, (int32_t)getpid() };
			for (int fd = 3; fd < 4096; fd++)
				close(fd);
			for (d.n = 0; d.n < k / 2; d.n++)
				posix_trace_event(ev, &d, sizeof d);
			nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
			for (; d.n < k; d.n++)
				posix_trace_event(ev, &d, sizeof d);
			_exit(0);
		}
		if (p == 0) {
			struct payload d = { i, 0, (int32_t)getpid() };
			for (d.n = 0; d.n < k; d.n++)
				posix_trace_event(ev, &d, sizeof d);
			if (i % 3 == 0)
				exit(0);
			if (i % 3 == 1)
				_exit(0);
			raise(SIGKILL);
			_exit(1);
		}
		int st;
		if (i == n / 2)
			closer = p; /* (waited for at the end) */
		else if (waitpid(p, &st, 0) != p)
			return 4;
		if (i == 19)
			early = ctl_bytes();
	}
	if (closer > 0 && waitpid(closer, NULL, 0) != closer)
		return 4;
	FILE *f = fopen(out, "w");
	if (!f)
		return 5;
	fprintf(f, "%lld %lld\n", early, ctl_bytes());
	fclose(f);
	return 0;
}

static char self_exe[4096];

static void one(const char *policy)
{
	char log[64], sizes[64], num[16];
	char *out = NULL, *err = NULL;

	snprintf(log, sizeof log, "%s.ptlog", policy);
	snprintf(sizes, sizeof sizes, "%s.sizes", policy);
	snprintf(num, sizeof num, "%d", CHILDREN);
	char *logp = strdup(cli_path(log)), *sizesp = strdup(cli_path(sizes));
	char *pol = strdup(policy);
	int rc = cli_run(CLI("record", "-o", logp, "--policy", pol, "--size", "16M", "--", self_exe, "fork",
	                     num, "10", sizesp),
	                 &out, &err);
	free(logp), free(sizesp), free(pol);
	CHECK_EQ(rc, 0);
	if (rc != 0)
		fprintf(stderr, "%s: %s%s\n", policy, out ? out : "", err ? err : "");
	int loop = strcmp(policy, "loop") == 0;
	unsigned long long said_lost = 0;
	const char *el = err ? strstr(err, "EVENTS LOST: ") : NULL;
	if (el)
		said_lost = strtoull(el + 13, NULL, 10);
	CHECK(loop || cli_contains(err, "no events lost"));

	struct cli_ev *ev;
	int nev = cli_read_log(cli_path(log), &ev);
	static int got[CHILDREN];
	static pid_t pid_of[CHILDREN];
	int other = 0, overflow = 0, bad = 0, starts = 0;
	memset(got, 0, sizeof got);
	for (int i = 0; i < nev; i++) {
		if (strcmp(ev[i].name, "posix_trace_overflow") == 0)
			overflow++;
		starts += strcmp(ev[i].name, "posix_trace_start") == 0;
		if (strcmp(ev[i].name, "fork-ev") != 0)
			continue;
		struct payload d;
		if (ev[i].len != sizeof d) {
			bad++;
			continue;
		}
		memcpy(&d, ev[i].data, sizeof d);
		if (d.child < 0 || d.child >= CHILDREN) {
			other++;
			continue;
		}
		if (got[d.child] == 0)
			pid_of[d.child] = ev[i].info.posix_pid;
		if (d.n != got[d.child] || d.pid != ev[i].info.posix_pid || pid_of[d.child] != d.pid)
			bad++;
		got[d.child]++;
	}
	/* (the closer, alive through it all, keeps its chunk in a LOOP) */
	int short_ = 0, first_kept = CHILDREN, closer = CHILDREN / 2;
	for (int i = 0; i < CHILDREN; i++)
		if (got[i] && first_kept == CHILDREN && i != closer)
			first_kept = i;
	for (int i = 0; i < CHILDREN; i++)
		short_ += loop && i != closer ? got[i] != (i < first_kept ? 0 : EVENTS)
		                              : got[i] != EVENTS;
	if (loop) {
		/* a flight recorder keeps the latest children whole, as many as
		 * it has chunks for (321, less the program's and the trace's);
		 * before, the first 321, and nothing after them */
		CHECK(CHILDREN - first_kept >= 256);
		/* (and the trace's START, the oldest event, if it went too) */
		CHECK_EQ(said_lost, (unsigned long long)(first_kept - (closer < first_kept)) * EVENTS +
		                    !starts);
	} else {
		CHECK_EQ(overflow, 0);
	}
	CHECK_EQ(other, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(short_, 0);
	if (short_)
		fprintf(stderr, "%s: %d of %d children without their %d events\n", policy, short_,
		        CHILDREN, EVENTS);

	/* every event named by its call site: the map of loaded code held
	 * every child's (before, it filled after about 120 children) */
	char *sout = NULL, *serr = NULL;
	char *logq = strdup(cli_path(log));
	CHECK_EQ(cli_run(CLI("show", "-e", "fork-ev", logq), &sout, &serr), 0);
	free(logq);
	int lines = 0, named = 0;
	char line[512];
	/* (file+offset only: the program's file, not a raw address) */
	const char *site = cli_has_libdw() ? "(fork_chunks.c:" : "@ fork_chunks+0x";
	for (const char *p = sout ? sout : ""; cli_next_line(&p, line, sizeof line) == 0;) {
		lines += strstr(line, "fork-ev") != NULL;
		named += strstr(line, "fork-ev") && strstr(line, site);
	}
	CHECK_EQ(lines, loop ? (CHILDREN - first_kept + (closer < first_kept)) * EVENTS
	                     : CHILDREN * EVENTS);
	/* (a flight recorder's map is taken only at the end: its ring fills
	 * as the area did before, so only flush is checked here) */
	CHECK(loop || named == lines);
	CHECK(loop || !cli_contains(serr, "map of loaded code"));
	if (!loop && cli_contains(serr, "map of loaded code"))
		fprintf(stderr, "%s", serr);
	free(sout);
	free(serr);

	/* each child's map: its parent's, in one entry, not the whole map
	 * again (issue 54 item 2): info counts the forked processes */
	if (!loop) {
		char *iout = NULL;
		char *logi = strdup(cli_path(log));
		char want[128];
		CHECK_EQ(cli_run(CLI("info", logi), &iout, NULL), 0);
		free(logi);
		snprintf(want, sizeof want, "(and %d more forked processes, each with its parent's map)",
		         CHILDREN - 8);
		CHECK(iout && cli_contains(iout, want));
		if (iout && !cli_contains(iout, want))
			fprintf(stderr, "%s: no \"%s\" in info\n", policy, want);
		free(iout);
	}

	long long early = -1, late = -1;
	char *s = cli_slurp(cli_path(sizes));
	REQUIRE(s && sscanf(s, "%lld %lld", &early, &late) == 2);
	CHECK(early > 0);
	/* (a child touches one page of its chunk: 64 pages is room for a
	 * reader that is behind by as many children; and the map of loaded
	 * code's ring, 2048 entries of 512 bytes, is touched whole once) */
	if (!loop && !(late <= early + 2048 * 512 + 64 * 4096)) {
		fprintf(stderr, "%s: the stream's file grew from %lld to %lld bytes\n", policy, early,
		        late);
		CHECK(!"the stream's memory grew with the children");
	}
	free(s);
	free(ev);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "fork") == 0)
		return forker(atoi(argv[2]), atoi(argv[3]), argv[4]);
	T_BEGIN(120);
	cli_setup();
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	REQUIRE(n > 0);
	self_exe[n] = 0;
	one("flush");
	one("loop");
	T_END();
}
