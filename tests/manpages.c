/*
 * manpages.c -- the manual pages.  Every function include/trace.h declares
 * (found by reading the header, so a new function without a page fails)
 * has a page docs/man/man3/NAME.3, directly or through a one-line ".so
 * man3/OTHER.3"; the page it leads to names the function in NAME, shows
 * it with #include <trace.h> and -lposixtrace in SYNOPSIS, and has the
 * sections NAME, SYNOPSIS, DESCRIPTION, RETURN VALUE, ERRORS, NOTES and
 * SEE ALSO.  No page is left for a function the header no longer has, and
 * every posix_trace_*(3) page a page refers to exists.  Every page
 * (docs/man/man3, docs/man/man7, docs/man/man1, docs/posixtrace.1) renders with
 * `groff -man -Tutf8 -ww -z` with nothing on stderr.  The limits the
 * header defines (TRACE_*_MAX, TRACE_DATA_MAX) are the values posixtrace(7)
 * and docs/implementation-defined.md give.  Finally `make install
 * PREFIX=<tmpdir>` (this build directory) installs pages with which
 * `man -M <tmpdir>/share/man -w NAME` finds every function, posixtrace(1),
 * posixtrace-query(1) and posixtrace(7).
 *
 * Run from the source directory (tests/run.sh is; else the parent of
 * PT_BUILD_DIR is tried).  Skips when groff or man is missing (Debian:
 * groff-base, man-db).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "t.h"

#define MAXFN   200
#define NAMELEN 64

static char src[1024];   /* the source directory */
static char tmp[1024];   /* scratch: captured output, the install */
static char fns[MAXFN][NAMELEN];
static int nfns;

static void cleanup(void)
{
	char cmd[4200];
	if (tmp[0] && !getenv("PT_KEEP")) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
}

/* The whole of a file, NUL-terminated (NULL: cannot read it). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = (cap ? cap * 2 : 8192);
			buf = realloc(buf, cap);
			REQUIRE(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* Runs argv in directory dir (NULL: here) with a clean make environment;
 * its exit status (-1 if it did not exit), stdout and stderr in *out and
 * *err (malloc'd, "" when empty; NULL pointers: not kept). */
static int run(char *const argv[], const char *dir, char **out, char **err)
{
	char fo[4200], fe[4200];
	int st;
	pid_t pid;

	snprintf(fo, sizeof fo, "%s/out", tmp);
	snprintf(fe, sizeof fe, "%s/err", tmp);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int o = open(fo, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(fe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || (dir && chdir(dir) != 0))
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		/* not the jobserver of the make running the tests */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		unsetenv("MANPATH");
		execvp(argv[0], argv);
		_exit(127);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	if (out)
		*out = slurp(fo);
	if (err)
		*err = slurp(fe);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Is prog found in PATH? */
static int have(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4200];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
		if (n && access(buf, X_OK) == 0)
			return 1;
		p += n;
		if (*p == ':')
			p++;
	}
	return 0;
}

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static int known_fn(const char *name)
{
	for (int i = 0; i < nfns; i++)
		if (!strcmp(fns[i], name))
			return 1;
	return 0;
}

/* The functions of include/trace.h: on each line that starts a declaration
 * at the left margin (not a directive, a comment or a macro body), every
 * posix_trace_* (or posixtrace_*, an extension) identifier followed by "(". */
static void read_header(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/include/trace.h", src);
	char *h = slurp(path);
	REQUIRE(h);

	for (char *line = h; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		static const char *const pre[] = { "posix_trace_", "posixtrace_" }; /* (extensions) */
		for (size_t k = 0; k < 2 && *line >= 'a' && *line <= 'z'; k++) { /* "int ...", "void ..." */
			for (char *p = strstr(line, pre[k]); p; p = strstr(p + 1, pre[k])) {
				if (p > line && is_ident((unsigned char)p[-1]))
					continue;
				size_t n = 0;
				while (is_ident((unsigned char)p[n]))
					n++;
				const char *q = p + n;
				while (*q == ' ')
					q++;
				if (*q != '(' || n >= NAMELEN)
					continue;
				char name[NAMELEN];
				memcpy(name, p, n);
				name[n] = 0;
				if (!known_fn(name)) {
					REQUIRE(nfns < MAXFN);
					strcpy(fns[nfns++], name);
				}
			}
		}
		if (!end)
			break;
		line = end + 1;
	}
	free(h);
}

/* The text of section sec of page (from its .SH line to the next), or NULL. */
static char *section(const char *page, const char *sec)
{
	char want1[64], want2[64];
	snprintf(want1, sizeof want1, "\n.SH %s\n", sec);
	snprintf(want2, sizeof want2, "\n.SH \"%s\"\n", sec);
	const char *s = strstr(page, want1), *w = want1;
	if (!s) {
		s = strstr(page, want2);
		w = want2;
	}
	if (!s)
		return NULL;
	s += strlen(w);
	const char *e = strstr(s, "\n.SH ");
	size_t n = e ? (size_t)(e - s) : strlen(s);
	char *r = malloc(n + 1);
	REQUIRE(r);
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

/* name as a word of text (not part of a longer identifier) */
static int has_word(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
		if ((p == text || !is_ident((unsigned char)p[-1])) && !is_ident((unsigned char)p[n]))
			return 1;
	return 0;
}

/* docs/man/man3/NAME.3, following .so links; the page's text or NULL. */
static char *page_of(const char *name, char *target, size_t cap)
{
	char path[4200];
	char cur[NAMELEN + 16];

	snprintf(cur, sizeof cur, "man3/%s.3", name);
	for (int hops = 0; hops < 4; hops++) {
		snprintf(path, sizeof path, "%s/docs/man/%s", src, cur);
		char *text = slurp(path);
		if (!text)
			return NULL;
		if (strncmp(text, ".so ", 4) != 0) {
			snprintf(target, cap, "%s", cur);
			return text;
		}
		/* a link page is one line: ".so man3/OTHER.3" */
		size_t n = strcspn(text + 4, "\n");
		CHECK(text[4 + n] == 0 || text[4 + n + 1] == 0);
		CHECK(n < sizeof cur);
		snprintf(cur, sizeof cur, "%.*s", (int)n, text + 4);
		free(text);
	}
	return NULL;
}

static void check_page(const char *fn)
{
	static const char *const secs[] = { "NAME", "SYNOPSIS", "DESCRIPTION", "RETURN VALUE",
	                                    "ERRORS", "NOTES", "SEE ALSO" };
	char target[NAMELEN + 16];
	char *page = page_of(fn, target, sizeof target);

	if (!page) {
		t_checks++;
		t_failures++;
		fprintf(stderr, "%s: no page docs/man/man3/%s.3 (or it leads nowhere)\n", fn, fn);
		return;
	}
	for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
		char *s = section(page, secs[i]);
		CHECK(s != NULL);
		if (!s) {
			fprintf(stderr, "%s (%s): no %s section\n", fn, target, secs[i]);
			continue;
		}
		if (!strcmp(secs[i], "NAME")) {
			/* the names before "\-": what man -k and the .so pages rely on */
			char *dash = strstr(s, "\\-");
			if (dash)
				*dash = 0;
			CHECK(dash && has_word(s, fn));
			if (!dash || !has_word(s, fn))
				fprintf(stderr, "%s: not named in the NAME of %s\n", fn, target);
		}
		if (!strcmp(secs[i], "SYNOPSIS")) {
			char call[NAMELEN + 2];
			snprintf(call, sizeof call, "%s(", fn);
			CHECK(strstr(s, "#include <trace.h>") != NULL);
			CHECK(strstr(s, "\\-lposixtrace") != NULL);
			CHECK(strstr(s, call) != NULL);
			if (!strstr(s, call) || !strstr(s, "#include <trace.h>") ||
			    !strstr(s, "\\-lposixtrace"))
				fprintf(stderr, "%s: SYNOPSIS of %s lacks the prototype, the "
				        "#include or -lposixtrace\n", fn, target);
		}
		free(s);
	}
	free(page);
}

/* Every ".BR posix_trace_x (3)" (or posixtrace_x) of a page names a page that exists. */
static void check_refs(const char *path)
{
	char *text = slurp(path);
	REQUIRE(text);
	for (char *p = strstr(text, "\n.BR posix"); p; p = strstr(p + 1, "\n.BR posix")) {
		char name[NAMELEN];
		const char *q = p + 5;
		if (strncmp(q, "posix_trace_", 12) && strncmp(q, "posixtrace_", 11))
			continue; /* (posix_spawn) */
		size_t n = 0;
		while (is_ident((unsigned char)q[n]) && n < NAMELEN - 1)
			n++;
		if (strncmp(q + n, " (3)", 4) != 0)
			continue;
		memcpy(name, q, n);
		name[n] = 0;
		CHECK(known_fn(name));
		if (!known_fn(name))
			fprintf(stderr, "%s: refers to %s(3), which <trace.h> does not declare\n", path,
			        name);
	}
	free(text);
}

/* groff with every warning an error: exit 0 and nothing on stderr.  Run in
 * docs/man so that ".so man3/..." resolves as man does it. */
static void render(const char *dir, const char *file)
{
	char *err = NULL;
	char *argv[] = { "groff", "-man", "-Tutf8", "-ww", "-z", (char *)file, NULL };
	int rc = run(argv, dir, NULL, &err);

	CHECK_EQ(rc, 0);
	CHECK(err && !*err);
	if (rc != 0 || !err || *err)
		fprintf(stderr, "groff %s/%s: exit %d\n%s", dir, file, rc, err ? err : "");
	free(err);
}

static void render_all(void)
{
	static const char *const subs[] = { "man3", "man7", "man1" };
	char dir[2048], file[4096];
	int pages = 0;

	snprintf(dir, sizeof dir, "%s/docs/man", src);
	for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
		char sub[2100];
		snprintf(sub, sizeof sub, "%s/%s", dir, subs[k]);
		DIR *d = opendir(sub);
		REQUIRE(d);
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			size_t n = strlen(e->d_name);
			if (n < 3 || e->d_name[n - 2] != '.' || e->d_name[0] == '.')
				continue;
			snprintf(file, sizeof file, "%s/%s", subs[k], e->d_name);
			render(dir, file);
			snprintf(file, sizeof file, "%s/%s/%s", dir, subs[k], e->d_name);
			check_refs(file);
			pages++;
			if (k == 0) { /* man3: only pages of functions there are */
				char fn[NAMELEN];
				CHECK(n - 2 < NAMELEN && !strcmp(e->d_name + n - 2, ".3"));
				snprintf(fn, sizeof fn, "%.*s", (int)(n - 2), e->d_name);
				CHECK(known_fn(fn));
				if (!known_fn(fn))
					fprintf(stderr, "man3/%s: <trace.h> declares no %s\n", e->d_name, fn);
			}
		}
		closedir(d);
	}
	CHECK(pages > nfns); /* man3 has one per function, man7 one more */
	snprintf(dir, sizeof dir, "%s/docs", src);
	render(dir, "posixtrace.1");
}

/* The value of "#define NAME value" in text, or -1. */
static long define_of(const char *text, const char *name)
{
	char want[80];
	snprintf(want, sizeof want, "#define %s ", name);
	const char *p = strstr(text, want);
	return p ? strtol(p + strlen(want), NULL, 10) : -1;
}

/* The header's limits appear with the same values in posixtrace(7)
 * (".BR NAME \" VALUE\"") and in docs/implementation-defined.md
 * ("| `NAME` | VALUE |"): the pages and the reference agree. */
static void check_limits(void)
{
	static const char *const limits[] = { "TRACE_EVENT_NAME_MAX", "TRACE_NAME_MAX",
	                                      "TRACE_SYS_MAX", "TRACE_USER_EVENT_MAX",
	                                      "TRACE_DATA_MAX" };
	char path[4200], want[128];

	snprintf(path, sizeof path, "%s/include/trace.h", src);
	char *h = slurp(path);
	snprintf(path, sizeof path, "%s/docs/man/man7/posixtrace.7", src);
	char *p7 = slurp(path);
	snprintf(path, sizeof path, "%s/docs/implementation-defined.md", src);
	char *md = slurp(path);
	REQUIRE(h && p7 && md);
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		long v = define_of(h, limits[i]);
		CHECK(v > 0);
		snprintf(want, sizeof want, "\n.BR %s \" %ld\"\n", limits[i], v);
		CHECK(strstr(p7, want) != NULL);
		if (!strstr(p7, want))
			fprintf(stderr, "posixtrace.7 does not give %s as %ld\n", limits[i], v);
		snprintf(want, sizeof want, "| `%s` | %ld |", limits[i], v);
		CHECK(strstr(md, want) != NULL);
		if (!strstr(md, want))
			fprintf(stderr, "implementation-defined.md does not give %s as %ld\n",
			        limits[i], v);
	}
	free(h);
	free(p7);
	free(md);
}

/* make install into a scratch prefix, then man -w for every name. */
static void check_install(void)
{
	char prefix[2048], mandir[4096], pre[4200], bld[4200], *out = NULL, *err = NULL;
	int rc;

	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	snprintf(mandir, sizeof mandir, "%s/share/man", prefix);
	snprintf(pre, sizeof pre, "PREFIX=%s", prefix);
	snprintf(bld, sizeof bld, "BUILD=%s", PT_BUILD_DIR);
	{
		char *argv[] = { "make", "-s", "install", pre, bld, NULL };
		rc = run(argv, src, &out, &err);
	}
	CHECK_EQ(rc, 0);
	if (rc != 0)
		fprintf(stderr, "make install: exit %d\n%s%s", rc, out ? out : "", err ? err : "");
	free(out);
	free(err);
	if (rc != 0)
		return;
	for (int i = 0; i < nfns + 3; i++) {
		char *sec = i < nfns ? "3" : i == nfns || i == nfns + 2 ? "1" : "7";
		char *name = i < nfns ? fns[i] : i == nfns + 2 ? "posixtrace-query" : "posixtrace";
		char *argv[] = { "man", "-M", mandir, "-w", sec, name, NULL };
		rc = run(argv, NULL, &out, NULL);
		CHECK_EQ(rc, 0);
		CHECK(out && !strncmp(out, mandir, strlen(mandir)));
		if (rc != 0 || !out || strncmp(out, mandir, strlen(mandir)))
			fprintf(stderr, "man -M %s -w %s %s: exit %d: %s\n", mandir, sec, name, rc,
			        out ? out : "");
		free(out);
	}
}

int main(void)
{
	T_BEGIN(120);

	t_source_dir(src, sizeof src); /* here (tests/run.sh), else above the build */
	if (!have("groff"))
		T_SKIP("groff is missing (Debian: apt-get install groff-base)");
	snprintf(tmp, sizeof tmp, "/tmp/pt-man-XXXXXX");
	REQUIRE(mkdtemp(tmp) != NULL);
	atexit(cleanup);

	read_header();
	REQUIRE(nfns > 0);
	CHECK(known_fn("posix_trace_getnext_event")); /* the parser works */
	CHECK(known_fn("posix_trace_event"));
	CHECK(!known_fn("posix_trace_gate"));
	for (int i = 0; i < nfns; i++)
		check_page(fns[i]);
	render_all();
	check_limits();
	if (!have("man") || !have("make")) {
		if (t_failures)
			T_END();
		T_SKIP("man is missing (Debian: apt-get install man-db): install not checked");
	}
	check_install();
	T_END();
}
