/*
 * cli_golden.c -- `posixtrace show` against a golden output.
 *
 * examples/golden_app is recorded with `posixtrace record`: one thread, no
 * fork, fixed events with fixed payloads (text with and without its NUL,
 * escapes, a text longer than the 64 bytes shown, binary, no payload, a
 * payload cut at the stream's max-data-size, a loop, an event from a
 * constructor).  `posixtrace show` of the log is masked, then compared
 * line by line with tests/golden/show.txt; a difference is printed as a
 * unified diff (expected, then actual) and fails.
 *
 * What is masked -- what changes from run to run, machine to machine or
 * compiler to compiler -- and nothing else:
 *   TIME, DELTA   the two time columns: "s.nnnnnnnnn", "+s.nnnnnnnnn"
 *                 (the sign of the delta is kept)
 *   PID           the program's pid (it prints it) "app", any other
 *                 process's (the recorder, posixtrace itself) "rec"; after
 *                 the "/", the program's TID when it is its pid (its main
 *                 thread) "app"; the recorder's thread numbers are kept
 *   "+0x1a"       code offsets after a function or file name: "+0x?"
 *   "0x7f..."     a location that is a bare address: "0x?"
 *   ".constprop.0", ".isra.0", ".part.0", ".cold"
 *                 suffixes gcc gives to the copies of a function it makes
 *                 (golden_app is written not to need this)
 *   "@ ..."       the whole location of the recorder's own events
 *                 (posix_trace_start and _stop are recorded from
 *                 cli/cmd/record.c, whose lines change with it): "@ <posixtrace>"
 * Kept as they are: the event names and their order, the thread numbers
 * and names, the data, the column layout, and for the program's events the
 * function names and file:line (they come from examples/golden_app.c).
 *
 * To regenerate the golden file after a deliberate change (to the show
 * format or to golden_app.c):
 *     GOLDEN_UPDATE=1 build/tests/cli_golden
 * writes the masked output of this run to tests/golden/show.txt (found
 * from the build directory or this file's path; GOLDEN_DIR=DIR to choose).
 * The masked output of every run is also left in the scratch directory
 * with PT_KEEP=1.
 *
 * Skipped when the command was built without libdw (no file:line then).
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static const char *golden_app = PT_BUILD_DIR "/examples/golden_app";

/* ------------------------------------------------------------- lines */
struct lines { char **v; int n; };

static void split(struct lines *ls, const char *s)
{
	ls->v = NULL;
	ls->n = 0;
	for (const char *p = s; p && *p;) {
		size_t len = strcspn(p, "\n");
		ls->v = realloc(ls->v, (size_t)(ls->n + 1) * sizeof *ls->v);
		REQUIRE(ls->v != NULL);
		ls->v[ls->n] = strndup(p, len);
		REQUIRE(ls->v[ls->n] != NULL);
		ls->n++;
		p += len + (p[len] == '\n');
	}
}

static void lines_free(struct lines *ls)
{
	for (int i = 0; i < ls->n; i++)
		free(ls->v[i]);
	free(ls->v);
}

/* ----------------------------------------------------------- masking */
static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Append to out (cap bytes). */
static void app(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = strlen(out);
	if (n > cap - 1 - o)
		n = cap - 1 - o;
	memcpy(out + o, s, n);
	out[o + n] = 0;
}

/* A location "func+0x1a (file.c:42)": offsets, bare addresses and gcc's
 * clone suffixes masked. */
static void mask_location(char *out, size_t cap, const char *s)
{
	static const char *const clones[] = { ".constprop.", ".isra.", ".part.", ".cold" };
	out[0] = 0;
	while (*s) {
		if (s[0] == '0' && s[1] == 'x' && is_hex(s[2])) {
			app(out, cap, "0x?", 3);
			for (s += 2; is_hex(*s); s++)
				;
			continue;
		}
		int skipped = 0;
		for (size_t k = 0; k < sizeof clones / sizeof *clones && !skipped; k++) {
			size_t n = strlen(clones[k]);
			if (strncmp(s, clones[k], n) == 0) {
				for (s += n; *s >= '0' && *s <= '9'; s++)
					;
				skipped = 1;
			}
		}
		if (!skipped)
			app(out, cap, s++, 1);
	}
}

/* One line of `show`, masked (see the top of the file); -1 when it does
 * not have the columns of show. */
static int mask_line(char *out, size_t cap, const char *line, int app_pid)
{
	char t[32], d[32], who[32], tname[32], mt[32], md[32], mwho[32];
	int n = 0;

	if (sscanf(line, "%31s %31s %31s %31s%n", t, d, who, tname, &n) != 4 || !strchr(t, '.') ||
	    (d[0] != '+' && d[0] != '-'))
		return -1;
	const char *rest = line + n;
	/* the NAME column is %-15s then a space: skip its padding */
	for (int pad = (int)strlen(tname); pad < 15 && *rest == ' '; pad++)
		rest++;
	if (*rest == ' ')
		rest++;
	snprintf(mt, sizeof mt, "s.nnnnnnnnn");
	snprintf(md, sizeof md, "%cs.nnnnnnnnn", d[0]);
	int rec = 0;
	if (!strcmp(who, "-")) {
		snprintf(mwho, sizeof mwho, "-");
	} else {
		char *slash = strchr(who, '/');
		if (!slash)
			return -1;
		rec = atoi(who) != app_pid;
		/* the app's thread is its main thread: TID = pid */
		snprintf(mwho, sizeof mwho, "%s/%s", rec ? "rec" : "app",
		         !rec && atoi(slash + 1) == app_pid ? "app" : slash + 1);
	}
	snprintf(out, cap, "%12s %13s  %-13s %-15s ", mt, md, mwho, tname);
	/* the location: after the last "  @ " */
	const char *at = NULL;
	for (const char *p = rest; (p = strstr(p, "  @ ")) != NULL; p++)
		at = p;
	if (!at) {
		app(out, cap, rest, strlen(rest));
		return 0;
	}
	app(out, cap, rest, (size_t)(at - rest) + 4);
	if (rec) {
		app(out, cap, "<posixtrace>", 12);
	} else {
		char loc[512];
		mask_location(loc, sizeof loc, at + 4);
		app(out, cap, loc, strlen(loc));
	}
	return 0;
}

/* ------------------------------------------------------------- diff */
/* A unified diff of a (expected) and b (actual), 3 lines of context;
 * returns the number of differing lines. */
static int diff(const struct lines *a, const struct lines *b, const char *an, const char *bn)
{
	int n = a->n, m = b->n;
	int *L = calloc((size_t)(n + 1) * (size_t)(m + 1), sizeof *L);
	REQUIRE(L != NULL);
#define LCS(i, j) L[(size_t)(i) * (size_t)(m + 1) + (size_t)(j)]
	for (int i = n - 1; i >= 0; i--)
		for (int j = m - 1; j >= 0; j--)
			LCS(i, j) = !strcmp(a->v[i], b->v[j]) ? LCS(i + 1, j + 1) + 1
			          : LCS(i + 1, j) > LCS(i, j + 1) ? LCS(i + 1, j) : LCS(i, j + 1);
	/* the edit script: ' ' both, '-' only in a, '+' only in b */
	struct op { char k; int i, j; } *ops = malloc((size_t)(n + m + 1) * sizeof *ops);
	REQUIRE(ops != NULL);
	int nops = 0, changes = 0, i = 0, j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && !strcmp(a->v[i], b->v[j]))
			ops[nops++] = (struct op){ ' ', i++, j++ };
		else if (i < n && (j == m || LCS(i + 1, j) >= LCS(i, j + 1)))
			ops[nops++] = (struct op){ '-', i++, j };
		else
			ops[nops++] = (struct op){ '+', i, j++ };
	}
#undef LCS
	for (int k = 0; k < nops; k++)
		changes += ops[k].k != ' ';
	if (changes)
		fprintf(stderr, "--- %s\n+++ %s\n", an, bn);
	for (int k = 0; k < nops;) {
		if (ops[k].k == ' ') {
			k++;
			continue;
		}
		/* a hunk: from 3 before this change to 3 after the last change
		 * that is at most 6 unchanged lines further */
		int s = k - 3 < 0 ? 0 : k - 3, e = k;
		for (int q = k; q < nops; q++) {
			if (ops[q].k != ' ')
				e = q;
			else if (q - e > 6)
				break;
		}
		e = e + 3 >= nops ? nops - 1 : e + 3;
		int na = 0, nb = 0;
		for (int q = s; q <= e; q++) {
			na += ops[q].k != '+';
			nb += ops[q].k != '-';
		}
		fprintf(stderr, "@@ -%d,%d +%d,%d @@\n", ops[s].i + 1, na, ops[s].j + 1, nb);
		for (int q = s; q <= e; q++)
			fprintf(stderr, "%c%s\n", ops[q].k,
			        ops[q].k == '+' ? b->v[ops[q].j] : a->v[ops[q].i]);
		k = e + 1;
	}
	free(ops);
	free(L);
	return changes;
}

/* --------------------------------------------------- the golden file */
static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The directory tests/golden: $GOLDEN_DIR, else next to this source file
 * (its path as compiled, from the current directory or from the parent
 * of the build directory). */
static const char *golden_dir(void)
{
	static char buf[4096];
	const char *env = getenv("GOLDEN_DIR");
	if (env && *env)
		return env;
	const char *src = __FILE__, *slash = strrchr(src, '/');
	int dlen = slash ? (int)(slash - src) : 0;
	if (src[0] == '/') {
		snprintf(buf, sizeof buf, "%.*s/golden", dlen, src);
		return buf;
	}
	snprintf(buf, sizeof buf, "%s/../%.*s%sgolden", PT_BUILD_DIR, dlen, src, dlen ? "/" : "");
	if (is_dir(buf)) {
		char *real = realpath(buf, NULL);
		if (real && strlen(real) < sizeof buf)
			strcpy(buf, real);
		free(real);
		return buf;
	}
	snprintf(buf, sizeof buf, "%.*s%sgolden", dlen, src, dlen ? "/" : "");
	return buf;
}

int main(void)
{
	char *out = NULL, *err = NULL, *pout = NULL, masked[2048];
	struct cli_ev *ev;

	T_BEGIN(120);
	cli_setup();
	if (access(golden_app, X_OK) != 0)
		T_SKIP("examples/golden_app is not built (make examples)");
	if (!cli_has_libdw())
		T_SKIP("posixtrace was built without libdw: no file:line to compare (Debian: "
		       "libdw-dev)");

	/* record: the program prints its pid */
	const char *log = cli_path("golden.ptlog");
	int rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)golden_app),
	                 &pout, &err);
	CHECK_EQ(rc, 0);
	int app_pid = 0;
	const char *p = pout ? strstr(pout, "golden_app pid ") : NULL;
	if (p)
		app_pid = atoi(p + 15);
	if (rc || app_pid <= 0)
		fprintf(stderr, "record exited %d, printed:\n%s%s\n", rc, pout ? pout : "",
		        err ? err : "");
	REQUIRE(app_pid > 0);
	free(pout);
	free(err);
	int n = cli_read_log(log, &ev);

	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK(err && !err[0]);
	CHECK_EQ(cli_nlines(out), n);
	struct lines got = { NULL, 0 }, raw;
	split(&raw, out);
	for (int i = 0; i < raw.n; i++) {
		if (mask_line(masked, sizeof masked, raw.v[i], app_pid) != 0) {
			fprintf(stderr, "not a line of show: %s\n", raw.v[i]);
			CHECK(!"show printed a line that cannot be masked");
			snprintf(masked, sizeof masked, "%s", raw.v[i]);
		}
		got.v = realloc(got.v, (size_t)(got.n + 1) * sizeof *got.v);
		REQUIRE(got.v != NULL);
		got.v[got.n++] = strdup(masked);
	}
	lines_free(&raw);
	free(out);
	free(err);
	/* the masking itself: a line of each kind */
	CHECK(mask_line(masked, sizeof masked, " 0.000102345  +0.000002000  4242/4242     golden_app"
	                "      step      00000000  @ steps.constprop.0+0x5f (golden_app.c:79)",
	                4242) == 0 &&
	      !strcmp(masked, " s.nnnnnnnnn  +s.nnnnnnnnn  app/app       golden_app      step      "
	                      "00000000  @ steps+0x? (golden_app.c:79)"));
	CHECK(mask_line(masked, sizeof masked, " 0.000102345  +0.000002000  4242/4250     w-1      "
	                "       step      00000000  @ steps+0x5f (golden_app.c:79)", 4242) == 0 &&
	      !strcmp(masked, " s.nnnnnnnnn  +s.nnnnnnnnn  app/4250      w-1             step      "
	                      "00000000  @ steps+0x? (golden_app.c:79)"));
	CHECK(mask_line(masked, sizeof masked, "10.000000000  -0.100000000  17/1          -          "
	                "     posix_trace_stop  @ trace_target+0x4ef (record.c:253)", 4242) == 0 &&
	      !strcmp(masked, " s.nnnnnnnnn  -s.nnnnnnnnn  rec/1         -               "
	                      "posix_trace_stop  @ <posixtrace>"));
	CHECK(mask_line(masked, sizeof masked, " 0.5  +0.1  -             -               "
	                "posix_trace_overflow  @ 0x7f00dead", 1) == 0 &&
	      !strcmp(masked, " s.nnnnnnnnn  +s.nnnnnnnnn  -             -               "
	                      "posix_trace_overflow  @ 0x?"));
	CHECK(mask_line(masked, sizeof masked, "not a line", 1) == -1);

	/* what was seen, for GOLDEN_UPDATE and PT_KEEP */
	char golden[4200], actual[300];
	snprintf(golden, sizeof golden, "%s/show.txt", golden_dir());
	snprintf(actual, sizeof actual, "%s", cli_path("show.masked.txt"));
	const char *upd = getenv("GOLDEN_UPDATE");
	int update = upd && *upd && strcmp(upd, "0");
	for (int w = 0; w < 1 + update; w++) {
		const char *path = w ? golden : actual;
		FILE *f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
			CHECK(!"cannot write the masked output");
			continue;
		}
		for (int i = 0; i < got.n; i++)
			fprintf(f, "%s\n", got.v[i]);
		CHECK(fclose(f) == 0);
		if (w)
			printf("wrote %s (%d lines)\n", golden, got.n);
	}

	char *want_s = cli_slurp(golden);
	if (!want_s) {
		fprintf(stderr, "no golden file %s (%s); create it with GOLDEN_UPDATE=1 %s/tests/"
		        "cli_golden\n", golden, strerror(errno), PT_BUILD_DIR);
		CHECK(!"golden file missing");
	} else {
		struct lines want;
		split(&want, want_s);
		int changes = diff(&want, &got, golden, "posixtrace show, masked");
		if (changes)
			fprintf(stderr, "%d line(s) differ from the golden output.  If the change is "
			        "intended: GOLDEN_UPDATE=1 %s/tests/cli_golden\n", changes, PT_BUILD_DIR);
		CHECK_EQ(changes, 0);
		lines_free(&want);
		free(want_s);
	}
	lines_free(&got);
	free(ev);
	T_END();
}
