/*
 * cli_rotate_lost.c -- `record --rotate T --keep N`: events lost in parts
 * that --keep removed still count: in the total record prints and in its
 * exit status (3: events were lost that no policy asked to lose).
 *
 * The program is this test again ("app DIR SIDE"): a flood of 200 000
 * events of 64 bytes into a 64 KiB stream (--size 64K, policy flush),
 * with the recorder (its parent) stopped meanwhile (SIGSTOP, then
 * SIGCONT), so that all but what the stream holds are lost however fast
 * the log's writer would have been (it took them all, once, under
 * ThreadSanitizer, where the program records slowly), then one event a millisecond,
 * none lost, until three parts more than the flood's exist, so that
 * --keep 3 has removed every part the flood wrote.  The program keeps a
 * hard link to each part (in SIDE) as soon as it sees it: a part is cut
 * every 200 ms and removed three cuts later, so each is seen long before.
 * The witness: the losses each part tells (its summary, read from the
 * links), which add up to the total record prints; the parts removed
 * told some of them.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../src/ext.h"

#define MAXPART 200

static char pname[64];

/* the highest part number in dir; each part hard-linked into side */
static unsigned link_parts(const char *dir, const char *side)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned hi = 0;
	size_t k = strlen(pname);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, pname, k) || e->d_name[k] != '-')
			continue;
		unsigned n = (unsigned)strtoul(e->d_name + k + 1, NULL, 10);
		char from[600], to[600];
		snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
		snprintf(to, sizeof to, "%s/%s", side, e->d_name);
		if (link(from, to) == 0 || errno == EEXIST)
			hi = n > hi ? n : hi;
	}
	if (d)
		closedir(d);
	return hi;
}

static int app(const char *dir, const char *side)
{
	trace_event_id_t id;
	unsigned char pay[64] = { 0 };
	alarm(60);
	posix_trace_eventid_open("flood", &id);
	char comm[64] = "", path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)getppid());
	FILE *f = fopen(path, "r");
	int got = f && fgets(comm, sizeof comm, f);
	if (f)
		fclose(f);
	if (!got || strncmp(comm, "posixtrace", 10)) {
		fprintf(stderr, "app: the parent (%d) is not the recorder: %s", (int)getppid(), comm);
		return 1;
	}
	REQUIRE(kill(getppid(), SIGSTOP) == 0);
	for (uint32_t i = 0; i < 200000; i++) {
		memcpy(pay, &i, sizeof i);
		posix_trace_event(id, pay, sizeof pay);
	}
	REQUIRE(kill(getppid(), SIGCONT) == 0);
	unsigned flood = link_parts(dir, side);
	for (uint32_t i = 0; link_parts(dir, side) < flood + 3 + 1; i++) {
		memcpy(pay, &i, sizeof i);
		posix_trace_event(id, pay, sizeof pay);
		usleep(1000);
	}
	return 0;
}

/* the losses part path tells: the stream's, the log's */
static uint64_t part_lost(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct pt_ext_summary *s = NULL;
	REQUIRE(fd >= 0);
	REQUIRE(pt_ext_log_summary(fd, &s) == 0);
	close(fd);
	uint64_t n = s->losses.total + s->losses.log_overwritten + s->losses.log_dropped;
	pt_ext_summary_free(s);
	return n;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	snprintf(pname, sizeof pname, "%s", base);
	if (argc == 4 && !strcmp(argv[1], "app"))
		return app(argv[2], argv[3]);
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("parts"), *side = cli_path("side");
	REQUIRE(mkdir(side, 0700) == 0);
	char *err = NULL;
	int rc = cli_run(CLI("record", "--size", "64K", "--rotate", "200ms", "--keep", "3", "-o",
	                     (char *)dir, "--", argv[0], "app", (char *)dir, (char *)side), NULL,
	                 &err);
	CHECK_EQ(rc, 3);

	/* every part, from the links: which are left, what each told lost */
	uint64_t all = 0, removed = 0;
	unsigned nparts = 0, left = 0;
	for (unsigned n = 1; n <= MAXPART; n++) {
		char p[600], q[600];
		snprintf(p, sizeof p, "%s/%s-%u.ptlog", side, pname, n);
		snprintf(q, sizeof q, "%s/%s-%u.ptlog", dir, pname, n);
		if (access(p, R_OK) != 0)
			break;
		nparts++;
		uint64_t l = part_lost(p);
		all += l;
		if (access(q, F_OK) == 0)
			left++;
		else
			removed += l;
	}
	CHECK(nparts >= 4);
	CHECK_EQ(left, 3);
	CHECK(removed > 0); /* (the flood lost events, in parts removed since) */
	/* record's total: every part's, the removed ones' too */
	char want[160];
	snprintf(want, sizeof want, "EVENTS LOST: %llu events lost (%llu of them told in parts "
	         "removed since)", (unsigned long long)all, (unsigned long long)removed);
	CHECK(cli_contains(err, want));
	if (rc != 3 || !cli_contains(err, want))
		fprintf(stderr, "wanted \"%s\"; record said:\n%s\n", want, err ? err : "");
	free(err);
	T_END();
}
