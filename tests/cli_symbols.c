/*
 * cli_symbols.c -- the trace carries the map of loaded code, and the
 * posixtrace command names addresses from it alone (issue 16).
 *
 * Small programs are compiled here (cc, with the build's sanitizer flags,
 * against the library just built) and traced:
 *   - a program that lives about a millisecond, recorded again and again:
 *     every run names its event (PT_STRESS=1: 100 runs, else 15); the
 *     same program linked statically (without sanitizers);
 *   - a program that writes its own log through the API, read after it
 *     exited: function names and file:line, no FILE.maps anywhere;
 *   - a library dlopen()ed late, unloaded, and another loaded after it
 *     (most likely where the first one was): each event names its own
 *     library's function;
 *   - a program rebuilt after recording: the mismatch is said once and no
 *     name from the new file is printed; with the old file where debugging
 *     information is looked for by build-id, its names come back;
 *   - a forked child and the program it execs: named correctly;
 *   - a log without a map of its own, with FILE.maps beside it (as record
 *     wrote before): still named.
 * Built without libdw (LIBDW=0, or no libdw-dev), the command names code
 * by file and offset only ("short+0x11b4"): each event is then checked to
 * be shown at the right file, at an offset in the right function by the
 * file's symbol table (nm, when there is one), and no line is looked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../src/log/log.h"

/* whether the command names functions and lines (libdw), and nm */
static int dwarf;
static const char *nm;

/* a path in the scratch directory that stays (cli_path's rotate) */
static const char *path_of(const char *name)
{
	static char buf[64][256];
	static unsigned k;
	REQUIRE(k < 64);
	snprintf(buf[k], sizeof buf[k], "%s", cli_path(name));
	return buf[k++];
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
}

/* cc src -o out, linked with the shared library (extra: more flags) */
static int build(const char *src, const char *out, const char *extra)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
	         "%s -std=c11 -D_GNU_SOURCE -g -O0 %s -I'%s/../include' %s '%s' -o '%s' "
	         "-L'%s' -lposixtrace -Wl,-rpath,'%s' -lpthread -ldl",
	         PT_TEST_CC, PT_TEST_SANFLAGS, PT_BUILD_DIR, extra, src, out, PT_BUILD_DIR,
	         PT_BUILD_DIR);
	return system(cmd);
}

/* The line of show's output for the first event named `name`, or NULL. */
static char *line_of(const char *out, const char *name)
{
	static char buf[1024];
	char pat[80];
	snprintf(pat, sizeof pat, "  %s ", name);
	const char *p = out ? strstr(out, pat) : NULL;
	if (!p)
		return NULL;
	while (p > out && p[-1] != '\n')
		p--;
	size_t n = strcspn(p, "\n");
	snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), p);
	return buf;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* The function of file at offset off by its symbol table (`nm -n`: the
 * last code symbol at or before it), its offset into *start; "" if none. */
static const char *nm_fn(const char *file, unsigned long long off, unsigned long long *start)
{
	static char fn[256];
	char cmd[1200], l[512], name[256], type;
	unsigned long long a;
	snprintf(cmd, sizeof cmd, "'%s' -n --defined-only '%s' 2>/dev/null", nm, file);
	FILE *p = popen(cmd, "r");
	fn[0] = 0;
	while (p && fgets(l, sizeof l, p))
		if (sscanf(l, "%llx %c %255s", &a, &type, name) == 3 && (type == 't' || type == 'T') &&
		    a <= off) {
			snprintf(fn, sizeof fn, "%s", name);
			*start = a;
		}
	if (p)
		pclose(p);
	return fn;
}

/* Line l shows its event in function fn, at source line fl ("(short.c:4)",
 * or NULL: any): with libdw by name ("@ fn+0x..."), else as "@ obj+0xOFF"
 * (obj: the recorded file's name), OFF in fn by nm on file (where its
 * symbols are); at fn+into exactly unless into is -1. */
static int at_fn(const char *l, const char *fn, const char *fl, const char *obj, const char *file,
                 long into)
{
	char want[300];
	unsigned long long off, start = 0;
	if (!l)
		return 0;
	if (dwarf) {
		if (into >= 0)
			snprintf(want, sizeof want, "@ %s+0x%lx", fn, into);
		else
			snprintf(want, sizeof want, "@ %s+0x", fn);
		return strstr(l, want) && (!fl || strstr(l, fl));
	}
	snprintf(want, sizeof want, "@ %s+0x", obj);
	const char *at = strstr(l, want);
	if (!at || sscanf(at + strlen(want), "%llx", &off) != 1)
		return 0;
	if (!nm)
		return 1;
	return !strcmp(nm_fn(file, off, &start), fn) && (into < 0 || off - start == (unsigned long)into);
}

/* How many lines of out at_fn() holds for */
static int count_at(const char *out, const char *fn, const char *fl, const char *obj,
                    const char *file)
{
	char line[1024];
	int n = 0;
	for (const char *p = out ? out : ""; cli_next_line(&p, line, sizeof line) == 0;)
		n += at_fn(line, fn, fl, obj, file, -1);
	return n;
}

static const char short_c[] =
	"#include <trace.h>\n"
	"__attribute__((noinline)) void hit_once(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"x\", 1);\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\ttrace_event_id_t e;\n"
	"\tposix_trace_eventid_open(\"hit\", &e);\n"
	"\thit_once(e);\n"
	"\treturn 0;\n"
	"}\n";

static void short_lived(void)
{
	const char *src = path_of("short.c"), *bin = path_of("short");
	const char *log = path_of("short.ptlog");
	const char *stress = getenv("PT_STRESS");
	int runs = stress && *stress && strcmp(stress, "0") ? 100 : 15, named = 0;

	put_file(src, short_c);
	REQUIRE(build(src, bin, "") == 0);
	for (int i = 0; i < runs; i++) {
		char *out = NULL, *err = NULL;
		CHECK_EQ(cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)bin), NULL,
		                 &err), 0);
		free(err);
		CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
		char *l = line_of(out, "hit");
		int ok = at_fn(l, "hit_once", "(short.c:4)", "short", bin, -1);
		if (!ok)
			fprintf(stderr, "run %d: %s\n", i, l ? l : "(no hit event)");
		named += ok;
		free(out);
		free(err);
	}
	printf("short-lived program: named in %d of %d runs\n", named, runs);
	CHECK_EQ(named, runs);
}

/* The same program linked statically (not with a sanitizer: its runtime
 * cannot be): the library's table is the program itself. */
static void static_program(void)
{
	char cmd[2048];
	const char *src = path_of("short.c"), *bin = path_of("short-static");
	const char *log = path_of("static.ptlog");
	char *out = NULL, *err = NULL;

	if (PT_TEST_SANFLAGS[0])
		return;
	snprintf(cmd, sizeof cmd,
	         "%s -std=c11 -g -O0 -static -I'%s/../include' '%s' -o '%s' '%s/libposixtrace.a' "
	         "-lpthread 2>/dev/null", PT_TEST_CC, PT_BUILD_DIR, src, bin, PT_BUILD_DIR);
	if (system(cmd) != 0) {
		printf("static program: no static libc here, not tried\n");
		return;
	}
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)bin), NULL, &err), 0);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	char *l = line_of(out, "hit");
	CHECK(at_fn(l, "hit_once", "(short.c:4)", "short-static", bin, -1));
	free(out);
	free(err);
}

static const char selflog_c[] =
	"#include <fcntl.h>\n"
	"#include <unistd.h>\n"
	"#include <trace.h>\n"
	"__attribute__((noinline)) void self_event(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"mine\", 4);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\ttrace_attr_t a;\n"
	"\ttrace_id_t t;\n"
	"\ttrace_event_id_t e;\n"
	"\tint fd = open(argv[argc - 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);\n"
	"\tposix_trace_attr_init(&a);\n"
	"\tif (fd < 0 || posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))\n"
	"\t\treturn 1;\n"
	"\tposix_trace_eventid_open(\"self\", &e);\n"
	"\tself_event(e);\n"
	"\treturn posix_trace_shutdown(t) != 0;\n"
	"}\n";

static void self_logged(void)
{
	const char *src = path_of("selflog.c"), *bin = path_of("selflog");
	const char *log = path_of("self.ptlog");
	char *out = NULL, *err = NULL;

	put_file(src, selflog_c);
	REQUIRE(build(src, bin, "") == 0);
	char *const argv[] = { (char *)bin, (char *)log, NULL };
	REQUIRE(cli_run(argv, NULL, NULL) == 0);
	CHECK(access(path_of("self.ptlog.maps"), F_OK) != 0);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	char *l = line_of(out, "self");
	CHECK(at_fn(l, "self_event", "(selflog.c:6)", "selflog", bin, -1));
	/* the START from posix_trace_start() in main, too */
	l = line_of(out, "posix_trace_start");
	CHECK(at_fn(l, "main", "(selflog.c:15)", "selflog", bin, -1));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	CHECK(cli_contains(out, "\nloaded code (") && cli_contains(out, "/selflog\n"));
	free(out);
}

static const char late_c[] =
	"#include <trace.h>\n"
	"void late_fn(trace_event_id_t e);\n"
	"void late_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"late\", 4);\n"
	"}\n";
static const char late2_c[] =
	"#include <trace.h>\n"
	"void later_fn(trace_event_id_t e);\n"
	"void later_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"later\", 5);\n"
	"}\n";
static const char dl_c[] =
	"#include <dlfcn.h>\n"
	"#include <trace.h>\n"
	"__attribute__((noinline)) void main_event(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"main\", 4);\n"
	"}\n"
	"static int call(const char *lib, const char *fn, trace_event_id_t e)\n"
	"{\n"
	"\tvoid *h = dlopen(lib, RTLD_NOW);\n"
	"\tvoid (*f)(trace_event_id_t) = h ? (void (*)(trace_event_id_t))dlsym(h, fn) : 0;\n"
	"\tif (!f)\n"
	"\t\treturn 1;\n"
	"\tf(e);\n"
	"\tmain_event(e);\n"
	"\treturn dlclose(h);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\ttrace_event_id_t m, a, b;\n"
	"\tposix_trace_eventid_open(\"in_main\", &m);\n"
	"\tposix_trace_eventid_open(\"in_late\", &a);\n"
	"\tposix_trace_eventid_open(\"in_later\", &b);\n"
	"\tmain_event(m);\n"
	"\tif (argc < 3 || call(argv[1], \"late_fn\", a) || call(argv[2], \"later_fn\", b))\n"
	"\t\treturn 1;\n"
	"\treturn 0;\n"
	"}\n";

static void late_libraries(void)
{
	const char *so1 = path_of("liblate.so"), *so2 = path_of("liblater.so");
	const char *bin = path_of("dl"), *log = path_of("dl.ptlog");
	char *out = NULL, *err = NULL;

	put_file(path_of("late.c"), late_c);
	put_file(path_of("later.c"), late2_c);
	put_file(path_of("dl.c"), dl_c);
	REQUIRE(build(path_of("late.c"), so1, "-shared -fPIC") == 0);
	REQUIRE(build(path_of("later.c"), so2, "-shared -fPIC") == 0);
	REQUIRE(build(path_of("dl.c"), bin, "") == 0);
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)bin, (char *)so1,
	                     (char *)so2), NULL, &err), 0);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	char *l = line_of(out, "in_late");
	CHECK(at_fn(l, "late_fn", "(late.c:5)", "liblate.so", so1, -1));
	l = line_of(out, "in_later");
	CHECK(at_fn(l, "later_fn", "(later.c:5)", "liblater.so", so2, -1));
	CHECK_EQ(count_at(out, "main_event", NULL, "dl", bin), 3);
	CHECK(!cli_contains(out, "@ 0x"));
	if (!at_fn(l, "later_fn", NULL, "liblater.so", so2, -1))
		fprintf(stderr, "show:\n%s\n", out ? out : "");
	free(out);
	free(err);
	/* both libraries in the map, the first one unloaded */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	CHECK(cli_contains(out, "/liblate.so  (unloaded)\n"));
	CHECK(cli_contains(out, "/liblater.so"));
	free(out);
}

static const char rebuilt_c[] =
	"#include <trace.h>\n"
	"#ifndef VARIANT\n"
	"__attribute__((noinline)) void old_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"old\", 3);\n"
	"}\n"
	"#else\n"
	"static int pad[64];\n"
	"__attribute__((noinline)) void new_fn(trace_event_id_t e)\n"
	"{\n"
	"\tpad[1]++;\n"
	"\tposix_trace_event(e, pad, sizeof pad);\n"
	"}\n"
	"#define old_fn new_fn\n"
	"#endif\n"
	"int main(void)\n"
	"{\n"
	"\ttrace_event_id_t e;\n"
	"\tposix_trace_eventid_open(\"tick\", &e);\n"
	"\tfor (int i = 0; i < 3; i++)\n"
	"\t\told_fn(e);\n"
	"\treturn 0;\n"
	"}\n";

static void rebuilt(void)
{
	const char *src = path_of("rebuilt.c"), *bin = path_of("rebuilt");
	const char *log = path_of("rebuilt.ptlog");
	char *out = NULL, *err = NULL;

	put_file(src, rebuilt_c);
	REQUIRE(build(src, bin, "") == 0);
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)bin), NULL, &err), 0);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK_EQ(count_at(out, "old_fn", NULL, "rebuilt", bin), 3);
	CHECK(!cli_contains(err, "not the file that was traced"));
	free(out);
	free(err);
	/* the build-id the trace has for it, from info */
	char bid[80] = "", *info = NULL, want[300];
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	snprintf(want, sizeof want, "  %s\n", bin);
	const char *at = info ? strstr(info, "\nloaded code (") : NULL;
	at = at ? strstr(at, want) : NULL;
	while (at && at > info && at[-1] != '\n')
		at--;
	int pid = 0;
	unsigned long long bias = 0;
	CHECK(at && sscanf(at, " %d 0x%llx %79s", &pid, &bias, bid) == 3 && strlen(bid) == 40);
	free(info);
	/* the file it was goes where debugging information is looked for by
	 * build-id, and another is built in its place */
	const char *dbg = path_of("debug");
	char dir[400], file[500];
	snprintf(dir, sizeof dir, "%s/.build-id/%.2s", dbg, bid);
	snprintf(file, sizeof file, "%s/%s.debug", dir, bid + 2);
	REQUIRE(mkdir(dbg, 0755) == 0);
	snprintf(want, sizeof want, "%s/.build-id", dbg);
	REQUIRE(mkdir(want, 0755) == 0 && mkdir(dir, 0755) == 0);
	REQUIRE(rename(bin, file) == 0);
	REQUIRE(build(src, bin, "-DVARIANT=2") == 0);
	char env[500];
	snprintf(env, sizeof env, "POSIXTRACE_DEBUG_DIR=%s", dbg);
	CHECK_EQ(cli_run_env(CLI("show", (char *)log), &out, &err, (char *const[]){ env, NULL }), 0);
	CHECK_EQ(count_at(out, "old_fn", "(rebuilt.c:5)", "rebuilt", file), 3);
	CHECK(!cli_contains(out, " [file changed]"));
	CHECK(!cli_contains(err, "not the file that was traced"));
	free(out);
	free(err);
	/* without it: another build-id at the recorded path */
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK_EQ(count(err, "not the file that was traced"), 1);
	CHECK(cli_contains(err, bin));
	CHECK_EQ(count(out, "@ rebuilt+0x"), 3);
	CHECK_EQ(count(out, " [file changed]"), 3);
	CHECK(!cli_contains(out, "old_fn") && !cli_contains(out, "new_fn") &&
	      !cli_contains(out, "main+"));
	free(out);
	free(err);
	/* the exports say it once too, and name nothing from the new file */
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "-o", (char *)path_of("r.json"),
	                     (char *)log), NULL, &err), 0);
	CHECK_EQ(count(err, "not the file that was traced"), 1);
	free(err);
	out = cli_slurp(path_of("r.json"));
	CHECK(out && !cli_contains(out, "new_fn") && cli_contains(out, "rebuilt+0x"));
	free(out);
}

static const char fork_c[] =
	"#include <unistd.h>\n"
	"#include <sys/wait.h>\n"
	"#include <trace.h>\n"
	"__attribute__((noinline)) void parent_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"p\", 1);\n"
	"}\n"
	"__attribute__((noinline)) void child_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, \"c\", 1);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\ttrace_event_id_t p, c;\n"
	"\tint st;\n"
	"\tposix_trace_eventid_open(\"in_parent\", &p);\n"
	"\tposix_trace_eventid_open(\"in_child\", &c);\n"
	"\tparent_fn(p);\n"
	"\tpid_t k = fork();\n"
	"\tif (k == 0) {\n"
	"\t\tchild_fn(c);\n"
	"\t\texecl(argv[1], argv[1], (char *)0);\n"
	"\t\t_exit(127);\n"
	"\t}\n"
	"\treturn k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st);\n"
	"}\n";
static const char execd_c[] =
	"#include <trace.h>\n"
	"static int pad[256];\n"
	"__attribute__((noinline)) void execd_fn(trace_event_id_t e)\n"
	"{\n"
	"\tposix_trace_event(e, pad, 8);\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\ttrace_event_id_t e;\n"
	"\tposix_trace_eventid_open(\"in_execd\", &e);\n"
	"\texecd_fn(e);\n"
	"\treturn 0;\n"
	"}\n";

static void fork_exec(void)
{
	const char *bin = path_of("forker"), *bin2 = path_of("execd");
	const char *log = path_of("fork.ptlog");
	char *out = NULL, *err = NULL;

	put_file(path_of("forker.c"), fork_c);
	put_file(path_of("execd.c"), execd_c);
	REQUIRE(build(path_of("forker.c"), bin, "") == 0);
	REQUIRE(build(path_of("execd.c"), bin2, "") == 0);
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)bin, (char *)bin2), NULL,
	                 &err), 0);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	char *l = line_of(out, "in_parent");
	CHECK(at_fn(l, "parent_fn", "(forker.c:6)", "forker", bin, -1));
	l = line_of(out, "in_child");
	CHECK(at_fn(l, "child_fn", "(forker.c:10)", "forker", bin, -1));
	l = line_of(out, "in_execd");
	CHECK(at_fn(l, "execd_fn", "(execd.c:5)", "execd", bin2, -1));
	CHECK(!cli_contains(out, "@ 0x"));
	if (!at_fn(l, "execd_fn", NULL, "execd", bin2, -1))
		fprintf(stderr, "show:\n%s\n", out ? out : "");
	free(out);
	free(err);
}

/* A log without a map of its own (as written before the map existed),
 * with FILE.maps beside it as `record` used to write: still named (the
 * event's address is in this very function). */
static void old_log(void)
{
	const char *log = path_of("old.ptlog"), *maps = path_of("old.ptlog.maps");
	struct pt_logw w;
	struct pt_attr_img a;
	char exe[4096], line[4400];
	char *out = NULL, *err = NULL;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	REQUIRE(fd >= 0);
	memset(&a, 0, sizeof a);
	strcpy(a.name, "old");
	a.stream_size = 1 << 20, a.max_data = 64, a.res_nsec = 1;
	a.stream_policy = POSIX_TRACE_FLUSH, a.log_policy = POSIX_TRACE_APPEND, a.has_log = 1;
	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	REQUIRE(pt_logw_name(&w, 20, "old_event") == 0);
	REQUIRE(pt_logw_event(&w, 1700000000000000000ull, getpid(), 1,
	                      (uint64_t)(uintptr_t)old_log + 8, 20, 0, NULL, 0) == 0);
	REQUIRE(pt_logw_finish(&w, &(struct posix_trace_status_info){ 0 }) == 0);
	pt_logw_free(&w);
	close(fd);
	/* this program's file mappings, in FILE.maps' form */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	REQUIRE(n > 0);
	exe[n] = 0;
	FILE *in = fopen("/proc/self/maps", "r"), *mf = fopen(maps, "w");
	REQUIRE(in && mf);
	fprintf(mf, "# posixtrace maps 1\nS %d 0 %s\n", (int)getpid(), exe);
	while (fgets(line, sizeof line, in)) {
		unsigned long long lo, hi, off;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) == 3 && pos &&
		    !strncmp(line + pos, exe, (size_t)n) && line[pos + n] == '\n')
			fprintf(mf, "M %llx-%llx %llx - %s\n", lo, hi, off, exe);
	}
	fclose(in);
	REQUIRE(fclose(mf) == 0);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	char *l = line_of(out, "old_event");
	const char *obj = strrchr(exe, '/') + 1;
	CHECK(at_fn(l, "old_log", NULL, obj, exe, 8));
	if (!at_fn(l, "old_log", NULL, obj, exe, -1))
		fprintf(stderr, "show:\n%s%s\n", out ? out : "", err ? err : "");
	free(out);
	free(err);
}

int main(void)
{
	T_BEGIN(300);
	cli_setup();
	if (system(PT_TEST_CC " --version >/dev/null 2>&1") != 0)
		T_SKIP("no C compiler (" PT_TEST_CC ") to build the programs traced here");
	dwarf = cli_has_libdw();
	nm = dwarf ? NULL : cli_which("nm");
	if (!dwarf)
		printf("posixtrace was built without libdw: code is checked by file and offset%s\n",
		       nm ? ", in the function nm names" : " only (no nm)");
	short_lived();
	static_program();
	self_logged();
	late_libraries();
	rebuilt();
	fork_exec();
	old_log();
	T_END();
}
