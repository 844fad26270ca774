/*
 * cli_rotate_keep.c -- `record`/`attach --rotate`: parts cut by time,
 * the oldest removed beyond --keep and --keep-size, a part removed by
 * hand while recording.  The program is this test (rotate_util.h), which
 * records paced events until a given part exists, so that what is
 * checked never depends on the machine's speed.
 *
 *  - --rotate 150ms, one thread: it records until part 4 exists; every
 *    event exactly once across the parts, in order, as many as it
 *    recorded; each part's first event is no earlier than the last of
 *    the part before (one thread: no late event).
 *  - --rotate 64K --keep 3: until part 9 exists; exactly the three
 *    newest parts remain, K-2, K-1 and K, K >= 9; they read without a
 *    hole in the witness from their first event on.
 *  - --rotate 64K --keep-size 200K: until part 9 exists; the finished
 *    parts kept (all but the newest) take at most 200K (parts of 64K to
 *    128K: one to three of them), and the parts kept run on without a
 *    hole in their numbers and in the witness.
 *  - a part removed by hand: at part 4 the program removes part 3 (being
 *    written) and part 2; recording goes on to part 8, exits 0; parts 1
 *    and 5 to 8 (at least) are there, each opens alone and names the
 *    program's type, each but the last holds some of its events (the
 *    last may hold only the trace's closing ones), and from part 5 on the
 *    witness has no hole to the last event.
 *  - attach --rotate: the parts are named after the process (comm).
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "rotate_util.h"

static struct ru_part parts[RU_MAXPARTS];
static char self[4096];
static const char *pname;

/* record the program (1 thread, paced 200 us a 64 events) with the extra
 * options into dir until part stop exists (removing part `remove` and
 * the one before); the program's count of events; record's exit status
 * in *code. */
static uint64_t record(const char *dir, const char *stop, const char *remove, int *code,
                       const char *o1, const char *o2, const char *o3, const char *o4)
{
	char *out = NULL, *err = NULL;
	uint64_t count[RU_MAXTHR] = { 0 };
	char *argv[] = { (char *)cli_bin, "record", "--no-loss", "-o", (char *)dir, (char *)o1,
	                 (char *)o2, (char *)o3, (char *)o4, "--", self, "--program", (char *)dir,
	                 (char *)pname, "1", "0", (char *)stop, "200", (char *)remove, NULL };
	if (!o3) { /* two options only */
		memmove(&argv[7], &argv[9], 11 * sizeof *argv);
	}
	*code = cli_run(argv, &out, &err);
	if (*code)
		fprintf(stderr, "record: %s\n", err ? err : "");
	CHECK(ru_witness(out, count) == 1);
	free(out);
	free(err);
	return count[0];
}

int main(int argc, char **argv)
{
	int code;

	if (argc == 9 && !strcmp(argv[1], "--program"))
		return ru_program(argv + 2);
	T_BEGIN(120);
	cli_setup();
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	pname = strrchr(self, '/') + 1;

	/* ---- by time */
	const char *d1 = cli_path("bytime");
	uint64_t n = record(d1, "4", "0", &code, "--rotate", "150ms", NULL, NULL);
	CHECK_EQ(code, 0);
	uint64_t next[RU_MAXTHR] = { 0 };
	unsigned np = ru_list(d1, pname, parts);
	CHECK(np >= 4);
	CHECK_EQ(ru_read(d1, pname, parts, np, next, 1, 0), 0);
	CHECK_EQ(next[0], n);
	for (unsigned i = 0; i < np; i++) {
		CHECK_EQ(parts[i].n, i + 1);
		CHECK(parts[i].named);
		if (i)
			CHECK(parts[i].first >= parts[i - 1].last);
	}

	/* ---- --keep 3 */
	const char *d2 = cli_path("keep");
	n = record(d2, "9", "0", &code, "--rotate", "64K", "--keep", "3");
	CHECK_EQ(code, 0);
	np = ru_list(d2, pname, parts);
	CHECK_EQ(np, 3);
	CHECK(np == 3 && parts[2].n >= 9 && parts[0].n == parts[2].n - 2 &&
	      parts[1].n == parts[2].n - 1);
	memset(next, 0xff, sizeof next); /* (from the first event kept on) */
	CHECK_EQ(ru_read(d2, pname, parts, np, next, 1, 0), 0);
	CHECK_EQ(next[0], n);

	/* ---- --keep-size 200K */
	const char *d3 = cli_path("keepsize");
	n = record(d3, "9", "0", &code, "--rotate", "64K", "--keep-size", "200K");
	CHECK_EQ(code, 0);
	np = ru_list(d3, pname, parts);
	long long kept = 0;
	for (unsigned i = 0; i + 1 < np; i++)
		kept += parts[i].size;
	CHECK(np >= 2 && kept <= 200 << 10);
	/* (parts of 64K and a little: three finished ones fit in 200K, four not) */
	CHECK(np >= 2 && np <= 4);
	CHECK(np >= 2 && parts[np - 1].n >= 9);
	for (unsigned i = 1; i < np; i++)
		CHECK_EQ(parts[i].n, parts[i - 1].n + 1);
	memset(next, 0xff, sizeof next);
	CHECK_EQ(ru_read(d3, pname, parts, np, next, 1, 0), 0);
	CHECK_EQ(next[0], n);

	/* ---- a part removed by hand while recording */
	const char *d4 = cli_path("byhand");
	n = record(d4, "8", "3", &code, "--rotate", "64K", NULL, NULL);
	CHECK_EQ(code, 0);
	np = ru_list(d4, pname, parts);
	CHECK(np >= 5 && parts[0].n == 1 && parts[1].n == 4);
	for (unsigned i = 2; i < np; i++)
		CHECK_EQ(parts[i].n, parts[i - 1].n + 1);
	CHECK(parts[np - 1].n >= 8);
	memset(next, 0, sizeof next);
	/* part 1 from 0, then from part 4's first event on without a hole
	 * (part 4 was begun after the removal: it may start anywhere) */
	CHECK_EQ(ru_read(d4, pname, parts, np, next, 1, 4), 0);
	CHECK_EQ(next[0], n);
	/* each part names the program's type and holds its events; the last
	 * may hold only the trace's closing events: the program stops when it
	 * sees part 8, and a cut waits until everything before it is written,
	 * so a part begun while it slept can find nothing of it left (seen
	 * under ThreadSanitizer: the last part, 3 events in all) */
	for (unsigned i = 0; i < np; i++) {
		int ok = parts[i].named && (i + 1 < np ? parts[i].events : parts[i].all) > 0;
		if (!ok)
			fprintf(stderr, "part %u (%u of %u): named %d, %llu events, %llu in all\n",
			        parts[i].n, i + 1, np, parts[i].named,
			        (unsigned long long)parts[i].events, (unsigned long long)parts[i].all);
		CHECK(ok);
	}

	/* ---- attach --rotate: NAME is the process's */
	pid_t app = cli_spawn_app();
	usleep(200000);
	const char *d5 = cli_path("attached");
	char *err = NULL;
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)app);
	CHECK_EQ(cli_run(CLI("attach", "--rotate", "1s", "-d", "0.3", "-o", (char *)d5,
	                     pid), NULL, &err), 0);
	CHECK(cli_contains(err, "app-1.ptlog"));
	np = ru_list(d5, "app", parts);
	CHECK_EQ(np, 1);
	free(err);
	kill(app, SIGKILL);
	waitpid(app, NULL, 0);
	T_END();
}
