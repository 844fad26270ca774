/*
 * cli_rotate_chunk.c -- CHUNK blocks of threads busy at once, with and
 * without a rotation.  The flusher writes a busy thread's sealed chunk as
 * one CHUNK block even when other threads' records fall inside its time
 * (the reader's sliding-window merge reads such blocks in order); while
 * the log is cut into parts too, but a cut then waits until no record
 * older than the part's latest is left to write (else consecutive parts
 * would overlap in time; tests/log_rotate_chunks checks that exactly).
 *
 * examples/flood, 4 threads of 2 000 000 events each, as fast as they
 * can, recorded with --no-loss (so that the count is exact):
 *   - into one log: `stats` exits 0, no note on stderr, 8 000 000 flood
 *     events; the CHUNK blocks' share of them printed (most, since the
 *     flusher falls behind 4 busy threads; not required: a busy machine
 *     may run the threads one after another, or the flusher keep up);
 *   - with --rotate 1M into a directory: `stats DIR` exits 0, 8 000 000
 *     flood events, no loss; the parts that overlap the one before in time
 *     and the parts' CHUNK blocks counted and printed, not required: a
 *     late event (its thread preempted between its timestamp and its
 *     publication) may be written after a cut whatever the flusher does,
 *     as cli_rotate says (23 of 127 parts once, with two busy loops
 *     beside, before CHUNK blocks of busy threads); with such blocks
 *     allowed while rotating and a cut at once, 48 to 71 of 122 parts
 *     overlapped on a quiet machine; with the cut waiting, 0 to 4 (late
 *     events), and 33 to 42% of the events in CHUNK blocks, as many as
 *     before (40%): a part this small keeps a quarter of its room for the
 *     records older than a chunk's end (with parts of 100 MiB, 94%).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "chunk_blocks.h"

#define EVENTS  "2000000"
#define THREADS "4"

/* `stats` of path: exit 0, the count of flood events in its table; its
 * stderr in *err. */
static unsigned long long stats_flood(const char *path, char **err)
{
	char *out = NULL, line[1024];
	unsigned long long n = 0;

	CHECK_EQ(cli_run(CLI("stats", (char *)path), &out, err), 0);
	for (const char *s = out ? out : ""; cli_next_line(&s, line, sizeof line) == 0;)
		if (!strncmp(line, "flood ", 6)) {
			n = strtoull(line + 6, NULL, 10);
			break;
		}
	if (n != 8000000ull)
		fprintf(stderr, "stats said:\n%s\n", out ? out : "");
	CHECK(!cli_contains(out ? out : "", "posix_trace_overflow"));
	free(out);
	return n;
}

int main(void)
{
	const char *flood = PT_BUILD_DIR "/examples/flood";
	char *err = NULL;
	struct blocks b = { 0 };

	T_BEGIN(240);
	cli_setup();
	if (access(flood, X_OK) != 0)
		T_SKIP("build/examples/flood is not built (make examples)");

	/* one log */
	const char *log = cli_path("flood.ptlog");
	int rc = cli_run(CLI("record", "--no-loss", "--force", "-o", (char *)log, "--",
	                     (char *)flood, EVENTS, THREADS), NULL, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err), err = NULL;
	CHECK_EQ(stats_flood(log, &err), 8000000ull);
	CHECK(!err || !err[0]);
	free(err), err = NULL;
	CHECK(chunk_blocks(log, &b));
	printf("one log: %llu events in %llu CHUNK blocks, %llu records in other blocks\n",
	       (unsigned long long)b.chunk_rec, (unsigned long long)b.n_chunk,
	       (unsigned long long)b.other_rec);
	unlink(log);

	/* cut into parts */
	{
		const char *dir = cli_path("parts");
		rc = cli_run(CLI("record", "--no-loss", "--rotate", "1M", "-o", (char *)dir, "--",
		                 (char *)flood, EVENTS, THREADS), NULL, &err);
		CHECK_EQ(rc, 0);
		if (rc)
			fprintf(stderr, "record said:\n%s\n", err ? err : "");
		free(err), err = NULL;
		int parts = cli_count_logs(dir);
		CHECK(parts > 10);
		CHECK_EQ(stats_flood(dir, &err), 8000000ull);
		int overlaps = err ? cli_count_str(err, "overlap in time") : 0;
		printf("%d parts, %d of them overlapping the one before in time\n", parts, overlaps);
		free(err), err = NULL;
		memset(&b, 0, sizeof b);
		DIR *d = opendir(dir);
		REQUIRE(d != NULL);
		for (struct dirent *e; (e = readdir(d)) != NULL;) {
			size_t n = strlen(e->d_name);
			if (n > 6 && !strcmp(e->d_name + n - 6, ".ptlog")) {
				char p[600];
				snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
				CHECK(chunk_blocks(p, &b));
			}
		}
		closedir(d);
		printf("%d parts: %llu events in %llu CHUNK blocks, %llu records in other blocks\n",
		       parts, (unsigned long long)b.chunk_rec, (unsigned long long)b.n_chunk,
		       (unsigned long long)b.other_rec);
		char cmd[700];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	T_END();
}
