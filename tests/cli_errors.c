/*
 * cli_errors.c -- `posixtrace info` and `show` on logs that are not whole:
 * a log written here (posix_trace_create_withlog(0, ...), a few thousand
 * events in several blocks), then copies of it cut in the middle of a
 * block (no END block: "no final status", the events of the complete
 * blocks kept), cut before its first block ends (no event at all), and
 * with one and two blocks damaged (each a posix_trace_error line, counted
 * by info, noted by show).  Both still exit 0; the intact log gets no
 * note.  Then show's --pid of a process not in the log exits 1 naming it,
 * as --event does, and a directory without logs given as the log says so.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define NEV 5000
#define BLK_LEN_OFF 8     /* docs/log-format.md: a block's len */
#define MAXBLK 256

static const char *unfinished = "the log has no final status";

static void write_log(const char *path)
{
	trace_attr_t a;
	trace_id_t trid;
	trace_event_id_t id;
	unsigned char data[100];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	posix_trace_attr_setname(&a, "errors");
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 4 << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	REQUIRE(posix_trace_eventid_open("tick", &id) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (int i = 0; i < NEV; i++) {
		memset(data, 'a' + i % 26, sizeof data);
		posix_trace_event(id, data, sizeof data);
	}
	REQUIRE(posix_trace_shutdown(trid) == 0);
	posix_trace_attr_destroy(&a);
	close(fd);
}

/* The offsets and lengths of the log's blocks (it is whole: they follow
 * each other, 8-byte aligned, from offset 256). */
static int blocks(const char *log, long *off, long *len)
{
	char *s;
	int fd = open(log, O_RDONLY), n = 0;
	struct stat st;

	REQUIRE(fd >= 0 && fstat(fd, &st) == 0);
	REQUIRE((s = malloc((size_t)st.st_size)) != NULL);
	REQUIRE(read(fd, s, (size_t)st.st_size) == st.st_size);
	close(fd);
	for (long pos = 256; pos + 56 <= st.st_size && n < MAXBLK; n++) {
		uint32_t l;
		REQUIRE(memcmp(s + pos, "PTLB", 4) == 0);
		memcpy(&l, s + pos + BLK_LEN_OFF, 4);
		off[n] = pos;
		len[n] = l;
		pos += (l + 7) & ~7u;
	}
	free(s);
	return n;
}

/* A copy of src: its first `keep` bytes, with the byte at each of
 * flip[0..nflip) inverted. */
static void copy(const char *src, const char *dst, long keep, const long *flip, int nflip)
{
	char *s = cli_slurp(src);
	struct stat st;
	REQUIRE(s && stat(src, &st) == 0);
	if (keep < 0)
		keep = (long)st.st_size;
	for (int i = 0; i < nflip; i++)
		s[flip[i]] = (char)~s[flip[i]];
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0 && write(fd, s, (size_t)keep) == keep);
	close(fd);
	free(s);
}

static int count_lines(const char *s, const char *what)
{
	char line[1024];
	int n = 0;
	for (int i = 0; cli_line(s, i, line, sizeof line) == 0; i++)
		n += strstr(line, what) != NULL;
	return n;
}

/* info and show on log: both exit 0; info says whether it is finished
 * and how many stretches are damaged, show notes the same on stderr and
 * prints every event the log reads as. */
static void check(const char *log, int cut, int damaged)
{
	char *out = NULL, *err = NULL, want[128];
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);

	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_contains(out, unfinished), cut);
	snprintf(want, sizeof want, "damaged       %d stretch%s", damaged, damaged == 1 ? " " : "es");
	CHECK_EQ(cli_contains(out, want), damaged > 0);
	CHECK_EQ(cli_contains(out, "damaged "), damaged > 0);
	snprintf(want, sizeof want, "events        %d\n", n);
	CHECK(cli_contains(out, want));
	if (!cli_contains(out, want) || cli_contains(out, unfinished) != cut)
		fprintf(stderr, "%s: info says:\n%s%s", log, out ? out : "", err ? err : "");
	free(out);
	free(err);

	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), n);
	CHECK_EQ(count_lines(out, "posix_trace_error"), damaged);
	CHECK_EQ(count_lines(out, "error: Bad message"), damaged);
	CHECK_EQ(cli_contains(err, unfinished), cut);
	snprintf(want, sizeof want, "%d damaged stretch", damaged);
	CHECK_EQ(cli_contains(err, want), damaged > 0);
	if (!cut && !damaged)
		CHECK(err && !*err);
	else
		CHECK(cli_contains(err, log));
	free(out);
	free(err);
	free(ev);
}

int main(void)
{
	long off[MAXBLK], len[MAXBLK];
	char *out = NULL, *err = NULL;

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("whole.ptlog");
	write_log(log);
	int nb = blocks(log, off, len);
	REQUIRE(nb >= 6); /* events in several blocks, then END */
	struct cli_ev *ev;
	int whole = cli_read_log(log, &ev);
	CHECK(whole >= NEV);
	free(ev);

	check(log, 0, 0);

	/* the writer killed in the middle of a block: no END */
	const char *cut = cli_path("cut.ptlog");
	int k = nb / 2;
	copy(log, cut, off[k] + len[k] / 2, NULL, 0);
	int n = cli_read_log(cut, &ev);
	CHECK(n > 0 && n < whole);
	free(ev);
	check(cut, 1, 0);

	/* cut before the first block is complete: no event at all */
	const char *empty = cli_path("empty.ptlog");
	copy(log, empty, off[0] + 100, NULL, 0);
	check(empty, 1, 0);

	/* one damaged block, then two apart: finished, with errors */
	const char *bad1 = cli_path("bad1.ptlog"), *bad2 = cli_path("bad2.ptlog");
	long flip[2] = { off[1] + len[1] / 2, off[4] + len[4] / 2 };
	copy(log, bad1, -1, flip, 1);
	check(bad1, 0, 1);
	copy(log, bad2, -1, flip, 2);
	check(bad2, 0, 2);

	/* damaged and cut */
	const char *both = cli_path("both.ptlog");
	copy(log, both, off[k] + len[k] / 2, flip, 1);
	check(both, 1, 1);

	/* show --pid of a process that is not in the log: like --event */
	CHECK_EQ(cli_run(CLI("show", "--pid", "99999", (char *)log), &out, &err), 1);
	CHECK(out && !*out);
	CHECK(cli_contains(err, "99999") && cli_contains(err, log));
	free(out);
	free(err);
	char self[16];
	snprintf(self, sizeof self, "%d", (int)getpid());
	CHECK_EQ(cli_run(CLI("show", "--pid", self, (char *)log), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), whole);
	free(out);
	CHECK_EQ(cli_run(CLI("show", "-p", self, "-p", "99999", (char *)log), NULL, &err), 1);
	CHECK(cli_contains(err, "99999"));
	free(err);

	/* a directory without logs (one with logs is read as a set of parts:
	 * tests/cli_parts) */
	const char *nologs = cli_path("nologs");
	REQUIRE(mkdir(nologs, 0700) == 0);
	CHECK_EQ(cli_run(CLI("show", (char *)nologs), NULL, &err), 1);
	CHECK(cli_contains(err, nologs) && cli_contains(err, "no logs in this directory"));
	free(err);
	CHECK_EQ(cli_run(CLI("info", (char *)nologs), NULL, &err), 1);
	CHECK(cli_contains(err, "no logs in this directory"));
	free(err);
	T_END();
}
