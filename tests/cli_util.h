/*
 * cli_util.h -- helpers for the tests of the posixtrace command
 * (tests/cli_*.c): find the binaries, run one with its output in files,
 * a scratch directory, and the events of a log read with posix_trace_open()
 * to compare the command's output against.
 *
 * Include after <trace.h> and "t.h".
 */
#ifndef POSIXTRACE_CLI_UTIL_H
#define POSIXTRACE_CLI_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
/* the compiler and sanitizer flags the suite was built with (the
 * Makefile gives them), for tests that build programs to trace */
#ifndef PT_TEST_CC
#define PT_TEST_CC "cc"
#endif
#ifndef PT_TEST_SANFLAGS
#define PT_TEST_SANFLAGS ""
#endif

static const char *cli_bin = PT_BUILD_DIR "/posixtrace";
static const char *cli_app = PT_BUILD_DIR "/examples/app";
static char cli_dir[64];

static inline void cli_cleanup(void)
{
	char cmd[128];
	if (cli_dir[0] && !getenv("PT_KEEP")) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", cli_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", cli_dir);
	}
}

/* Skip unless the command (and the example app) were built; make a
 * scratch directory, removed at exit (kept with PT_KEEP=1). */
static inline void cli_setup(void)
{
	if (access(cli_bin, X_OK) != 0)
		T_SKIP("the posixtrace command is not built (make cli)");
	if (access(cli_app, X_OK) != 0)
		T_SKIP("examples/app is not built (make examples)");
	snprintf(cli_dir, sizeof cli_dir, "/tmp/pt-cli-XXXXXX");
	REQUIRE(mkdtemp(cli_dir) != NULL);
	atexit(cli_cleanup);
}

/* A path in the scratch directory (32 rotating static buffers). */
static inline const char *cli_path(const char *name)
{
	static char buf[32][256];
	static int k;
	char *b = buf[k++ % 32];
	snprintf(b, 256, "%s/%s", cli_dir, name);
	return b;
}

static inline char *cli_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	REQUIRE(s != NULL);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = 0;
	fclose(f);
	return s;
}

/* Run argv (NULL-terminated) with stdout and stderr into files; returns
 * the exit status, 128+N when killed by signal N.  *out / *err get the
 * output (free them) unless NULL. */
/* The same as user u (0: as this process is), from the scratch directory
 * (tests/sec_util.h makes unprivileged users). */
static inline int cli_run_as(uid_t u, char *const argv[], char **out, char **err,
                             char *const *env);

static inline int cli_run_env(char *const argv[], char **out, char **err, char *const *env)
{
	return cli_run_as(0, argv, out, err, env);
}

static inline int cli_run_as(uid_t u, char *const argv[], char **out, char **err,
                             char *const *env)
{
	static int seq;
	char of[300], ef[300];
	snprintf(of, sizeof of, "%s/out.%d", cli_dir, seq);
	snprintf(ef, sizeof ef, "%s/err.%d", cli_dir, seq++);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		if (u && (chdir(cli_dir) != 0 || setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 ||
		          setuid(u) != 0))
			_exit(125);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(126);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		REQUIRE(errno == EINTR);
	if (out)
		*out = cli_slurp(of);
	if (err)
		*err = cli_slurp(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int cli_run(char *const argv[], char **out, char **err)
{
	return cli_run_env(argv, out, err, NULL);
}

#define CLI(...) ((char *const[]){ (char *)cli_bin, __VA_ARGS__, NULL })

/* The command argv started, not waited for (a recorder to stop, signal
 * or wait for), its standard output into the file out and its error into
 * err: its pid.  The child exits 126 if it cannot open the files, 127 if
 * it cannot run the command. */
static inline pid_t cli_start(char *const argv[], const char *out, const char *err)
{
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		FILE *a = freopen(out, "w", stdout), *b = freopen(err, "w", stderr);
		if (!a || !b)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* How many logs (NAME.ptlog, snapshots or parts) directory dir holds. */
static inline int cli_count_logs(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' && strstr(e->d_name, ".ptlog") != NULL;
	if (d)
		closedir(d);
	return n;
}

static inline int cli_contains(const char *s, const char *what)
{
	return s && strstr(s, what) != NULL;
}

/* How many times what occurs in s, not overlapping. */
static inline int cli_count_str(const char *s, const char *what)
{
	/* by hand, not strstr in a loop: ASan's and TSan's strstr measure
	 * the whole rest of s at every call, which made this quadratic
	 * (30 000 matches in babeltrace2's 5 MB of text: 50 s) */
	size_t m = strlen(what);
	int n = 0;
	for (const char *p = s; p && *p; p++) {
		size_t k = 0;
		while (k < m && p[k] == what[k])
			k++;
		if (k == m && m) {
			n++;
			p += m - 1;
		}
	}
	return n;
}

/* 0 when this posixtrace was built without libmicrohttpd (no `view`). */
static inline int cli_has_view(void)
{
	char *e = NULL;
	int without = cli_run(CLI("view", (char *)cli_path("none")), NULL, &e) == 1 &&
	              cli_contains(e, "without libmicrohttpd");
	free(e);
	return !without;
}

/* Skips the test when this posixtrace was built without libmicrohttpd. */
static inline void cli_need_view(void)
{
	if (!cli_has_view())
		T_SKIP("posixtrace was built without libmicrohttpd (Debian: libmicrohttpd-dev)");
}

/* 1 when this posixtrace names functions and source lines ("worker+0x1c
 * (app.c:42)"; built with elfutils' libdw, as `--version` says), 0 when
 * it names code by file and offset only ("app+0x11f4": LIBDW=0, or
 * pkg-config found no libdw; Debian: libdw-dev). */
static inline int cli_has_libdw(void)
{
	static int known = -1;
	if (known < 0) {
		char *v = NULL;
		REQUIRE(cli_run(CLI("--version"), &v, NULL) == 0);
		known = cli_contains(v, "elfutils libdw");
		free(v);
	}
	return known;
}

/* Skips the test when this posixtrace was built without SQLite. */
static inline void cli_need_sqlite(void)
{
	char *err = NULL;
	if (cli_run(CLI("query", "/dev/null", "SELECT 1"), NULL, &err) == 1 &&
	    cli_contains(err, "without SQLite"))
		T_SKIP("this posixtrace was built without SQLite (libsqlite3-dev)");
	free(err);
}

/* `posixtrace query --csv LOG SQL`'s stdout (exit 0 checked), without its
 * header line and with CRLF as LF, for comparing; the caller frees it. */
static inline char *cli_query_csv(const char *log, const char *sql)
{
	char *out = NULL, *err = NULL;
	int rc = cli_run(CLI("query", "--csv", (char *)log, (char *)sql), &out, &err);
	if (rc != 0)
		fprintf(stderr, "query %s: exit %d: %s\n", sql, rc, err ? err : "");
	CHECK_EQ(rc, 0);
	free(err);
	char *body = out ? strstr(out, "\r\n") : NULL;
	char *r = strdup(body ? body + 2 : "");
	free(out);
	char *w = r;
	for (char *p = r; *p; p++)
		if (*p != '\r')
			*w++ = *p;
	*w = 0;
	return r;
}

/* An executable in PATH, or NULL. */
static inline const char *cli_which(const char *name)
{
	static char buf[4][512];
	static int k;
	const char *path = getenv("PATH");
	char *b = buf[k++ % 4];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(b, 512, "%.*s/%s", (int)n, p, name);
		if (access(b, X_OK) == 0)
			return b;
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* examples/app started in the background ("0 0": it runs until killed),
 * its output thrown away; for attach.  Returns its pid. */
static inline pid_t cli_spawn_app(void)
{
	fflush(NULL);
	pid_t app = fork();
	REQUIRE(app >= 0);
	if (app == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(cli_app, cli_app, "0", "0", (char *)NULL);
		_exit(126);
	}
	return app;
}

/* Record examples/app (exit status `code`) into log; 0 on success. */
static inline int cli_record_app(const char *log, const char *code)
{
	char *err = NULL;
	int rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)cli_app,
	                     (char *)code), NULL, &err);
	if (rc != atoi(code))
		fprintf(stderr, "record exited %d:\n%s\n", rc, err ? err : "");
	free(err);
	return rc == atoi(code) ? 0 : -1;
}

/* ------------------------------------------------ the log, read directly */
struct cli_ev {
	struct posix_trace_event_info info;
	char name[TRACE_EVENT_NAME_MAX + 1];
	size_t len;
	unsigned char data[256];
};

/* Every event of the log with posix_trace_open(); returns the count. */
static inline int cli_read_log(const char *path, struct cli_ev **out)
{
	int fd = open(path, O_RDONLY), n = 0, cap = 0;
	trace_id_t trid;
	struct cli_ev *ev = NULL;

	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &trid) == 0);
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			ev = realloc(ev, (size_t)cap * sizeof *ev);
			REQUIRE(ev != NULL);
		}
		int none = 0;
		struct cli_ev *e = &ev[n];
		REQUIRE(posix_trace_getnext_event(trid, &e->info, e->data, sizeof e->data, &e->len,
		                                  &none) == 0);
		if (none)
			break;
		if (posix_trace_eventid_get_name(trid, e->info.posix_event_id, e->name) != 0)
			snprintf(e->name, sizeof e->name, "event-%u", e->info.posix_event_id);
		n++;
	}
	posix_trace_close(trid);
	close(fd);
	*out = ev;
	return n;
}

/* Lines of text (each ending in '\n') sorted in place: a multiset to compare. */
static inline int cli_cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline void cli_sort_lines(char *s)
{
	size_t n = 0, len = strlen(s);
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	char **v = malloc((n + 1) * sizeof *v), *copy = strdup(s);
	REQUIRE(v && copy);
	n = 0;
	for (char *p = copy, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = 0;
		v[n++] = p;
	}
	qsort(v, n, sizeof *v, cli_cmp_line);
	s[0] = 0;
	for (size_t i = 0, o = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "%s\n", v[i]);
	free(v);
	free(copy);
}

/* examples/app's "reply" payloads as it sent them (worker:i32, round:i32,
 * status:i32, bytes:u32): "W R S B" lines, sorted (malloc'd). */
static inline char *cli_app_replies(const struct cli_ev *ev, int n)
{
	char *s = calloc((size_t)n + 1, 64);
	size_t o = 0;
	REQUIRE(s);
	for (int i = 0; i < n; i++) {
		int32_t v[4];
		if (strcmp(ev[i].name, "reply") || ev[i].len != sizeof v)
			continue;
		memcpy(v, ev[i].data, sizeof v);
		o += (size_t)sprintf(s + o, "%d %d %d %u\n", v[0], v[1], v[2], (uint32_t)v[3]);
	}
	cli_sort_lines(s);
	return s;
}

static inline int cli_count(const struct cli_ev *ev, int n, const char *name)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += strcmp(ev[i].name, name) == 0;
	return k;
}

/* The n-th line of s (0-based) into buf; -1 past the end. */
static inline int cli_line(const char *s, int n, char *buf, size_t cap)
{
	for (; n > 0 && s; n--) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	if (!s || !*s)
		return -1;
	size_t len = strcspn(s, "\n");
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return 0;
}

/* The Chrome export's payload ("b64":"..."): base64 at s, up to a '"' or
 * the end, decoded into out (cap bytes): the bytes, or -1 if it is not
 * base64 as RFC 4648 has it without the '=' padding (its alphabet, no
 * lone last character, the bits after the last byte 0). */
static inline long cli_unb64(const char *s, unsigned char *out, size_t cap)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t v = 0;
	int bits = 0;
	size_t k = 0, n = 0;
	for (; s[k] && s[k] != '"'; k++) {
		const char *c = strchr(abc, s[k]);
		if (!c)
			return -1;
		v = v << 6 | (uint32_t)(c - abc);
		if ((bits += 6) >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)(v >> bits);
			v &= (1u << bits) - 1;
		}
	}
	return k % 4 == 1 || v ? -1 : (long)n;
}

/* The line at *s into buf (cut to cap - 1 bytes) and *s moved past it: -1
 * at the end.  For walking a long output once (cli_line(s, n) starts from
 * the top each time). */
static inline int cli_next_line(const char **s, char *buf, size_t cap)
{
	if (!*s || !**s)
		return -1;
	size_t len = strcspn(*s, "\n"), cut = len < cap ? len : cap - 1;
	memcpy(buf, *s, cut);
	buf[cut] = 0;
	*s += len + ((*s)[len] == '\n');
	return 0;
}

static inline int cli_nlines(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* The numbers in s after each occurrence of key, added up. */
static inline unsigned long long cli_sum_after(const char *s, const char *key)
{
	unsigned long long sum = 0;
	for (const char *p = s; (p = strstr(p, key)) != NULL; p += strlen(key))
		sum += strtoull(p + strlen(key), NULL, 10);
	return sum;
}

/* The counts of `show -e posix_trace_resume` output added up: each line
 * says how many events its gap lost, or that they were counted with an
 * earlier gap (0); *lines: the lines read. */
static inline unsigned long long cli_gap_sum(const char *show_out, int *lines)
{
	unsigned long long sum = 0;
	char line[1024];

	*lines = 0;
	for (int i = 0; cli_line(show_out, i, line, sizeof line) == 0; i++, (*lines)++) {
		unsigned long long k = 0;
		char *p = strstr(line, "posix_trace_resume");
		CHECK(p && (sscanf(p, "posix_trace_resume %llu event", &k) == 1 ||
		            strstr(p, "counted with an earlier gap")));
		sum += k;
	}
	return sum;
}

#endif
