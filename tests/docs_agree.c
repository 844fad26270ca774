/*
 * docs_agree.c -- the manual, --help, README and the code state the same
 * defaults, symbol names and versions (issue 39: posixtrace(1) said
 * --size defaults to 1M where --help and the code said 16M;
 * posix_trace_event(3) named __posix_trace_gate and 16 bytes of header
 * where the header tests __posix_trace_want and records have 8; README
 * said everything was POSIXTRACE_0.1).
 *
 *  - record --size: the two defaults `record --help` gives (flush policy,
 *    else) are the two posixtrace(1) gives, and the stream sizes `info`
 *    reports for logs recorded without --size, with and without
 *    --policy flush.  `live --help`'s default is the second one.
 *  - record --no-loss: the default bound in --help is posixtrace(1)'s.
 *  - posix_trace_event(3): every __posix_trace_* name it gives is exported
 *    by libposixtrace.so with the version it states next to it, or any
 *    version when it states none; the bytes of header it gives are the
 *    layout's (src/shm/layout.h: PT_REC_SHORT, PT_REC_HDR).
 *  - README: every "`SYMBOL` `POSIXTRACE_x.y`" it gives is exported with
 *    that version; every version node of src/libposixtrace.map is named
 *    in README, and each symbol of a node after the first is named there
 *    next to it (and README gives no other pair).
 *  - --all and --t0: a command takes each exactly when its own --help
 *    names it, and then its section of posixtrace(1) names it too.
 */
#include <dlfcn.h>
#include <regex.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../src/shm/layout.h"

static char src[1024];

static char *read_src(const char *rel)
{
	char p[2048];
	snprintf(p, sizeof p, "%s/%s", src, rel);
	char *s = cli_slurp(p);
	if (!s)
		fprintf(stderr, "cannot read %s\n", p);
	REQUIRE(s);
	return s;
}

/* "16M" -> bytes; 0 if not a size */
static unsigned long long size_of(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return 0;
	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

/* The first n sizes ("16M", "1M", "4096") in s after `after`, into out;
 * how many were found. */
static int sizes_after(const char *s, const char *after, unsigned long long *out, int n)
{
	const char *p = strstr(s, after);
	regex_t re;
	regmatch_t m;
	int k = 0;

	if (!p)
		return 0;
	p += strlen(after);
	REQUIRE(regcomp(&re, "[0-9]+[KMG]", REG_EXTENDED) == 0);
	while (k < n && regexec(&re, p, 1, &m, 0) == 0) {
		out[k++] = size_of(p + m.rm_so);
		p += m.rm_eo;
	}
	regfree(&re);
	return k;
}

/* info's "stream  N bytes" of a log recorded with these options */
static unsigned long long recorded_size(const char *policy)
{
	char *out = NULL;
	const char *log = cli_path(policy ? "sized-loop.ptlog" : "sized.ptlog");
	int rc = policy ? cli_run(CLI("record", "--force", "-o", (char *)log, "--policy",
	                              (char *)policy, "--", "true"), NULL, NULL)
	                : cli_run(CLI("record", "--force", "-o", (char *)log, "--", "true"), NULL,
	                          NULL);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	const char *p = out ? strstr(out, "\nstream ") : NULL;
	unsigned long long v = 0;
	CHECK(p && sscanf(p, "\nstream %llu bytes", &v) == 1);
	free(out);
	return v;
}

/* The text of the man page's paragraph for option opt (from its .TP tag
 * line to the next .TP), roff escapes of '-' undone. */
static char *man_option(const char *man, const char *opt)
{
	char *s = strdup(man), *w = s;
	for (const char *r = man; *r; r++)
		if (!(r[0] == '\\' && r[1] == '-'))
			*w++ = *r;
	*w = 0;
	char tag[64];
	snprintf(tag, sizeof tag, "\n.BI %s ", opt);
	char *p = strstr(s, tag);
	if (!p) {
		snprintf(tag, sizeof tag, "\n.BR %s ", opt);
		p = strstr(s, tag);
	}
	REQUIRE(p);
	char *end = strstr(p + 1, "\n.TP");
	if (end)
		*end = 0;
	memmove(s, p, strlen(p) + 1);
	return s;
}

/* The section of posixtrace(1) for command cmd (".SS cmd" to the next
 * ".SS" or ".SH"), roff escapes of '-' undone. */
static char *man_section(const char *man, const char *cmd)
{
	char *s = strdup(man), *w = s, tag[64];
	for (const char *r = man; *r; r++)
		if (!(r[0] == '\\' && r[1] == '-'))
			*w++ = *r;
	*w = 0;
	snprintf(tag, sizeof tag, "\n.SS %s\n", cmd);
	char *p = strstr(s, tag);
	REQUIRE(p);
	char *e1 = strstr(p + 1, "\n.SS "), *e2 = strstr(p + 1, "\n.SH ");
	char *end = e1 && (!e2 || e1 < e2) ? e1 : e2;
	if (end)
		*end = 0;
	memmove(s, p, strlen(p) + 1);
	return s;
}

/* --all and --t0 in each command's --help, what it takes, and its
 * section of the manual. */
static void front_options(const char *man1)
{
	static const char *const cmds[] = { "record", "attach", "live", "top", "show",
	                                    "info", "stats", "view", "export" };
	static const char *const opts[][3] = { { "--all", NULL }, { "--t0", "trace" } };
	int takes[2] = { 0, 0 };
	for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
		char *help = NULL, *sec = man_section(man1, cmds[c]);
		CHECK_EQ(cli_run(CLI((char *)cmds[c], "--help"), &help, NULL), 0);
		for (int o = 0; o < 2; o++) {
			char *const *argv = opts[o][1]
				? CLI((char *)cmds[c], (char *)opts[o][0], (char *)opts[o][1], "--help")
				: CLI((char *)cmds[c], (char *)opts[o][0], "--help");
			int rc = cli_run(argv, NULL, NULL);
			int said = cli_contains(help, opts[o][0]), taken = rc == 0;
			if (said != taken || (taken && !cli_contains(sec, opts[o][0])))
				fprintf(stderr, "%s %s: taken %d, in --help %d, in posixtrace(1) %d\n",
				        cmds[c], opts[o][0], taken, said, cli_contains(sec, opts[o][0]));
			CHECK_EQ(said, taken);
			CHECK(!taken || cli_contains(sec, opts[o][0]));
			takes[o] += taken;
		}
		free(help);
		free(sec);
	}
	CHECK_EQ(takes[0], 7); /* all but record and attach */
	CHECK_EQ(takes[1], 6); /* and not top */
}

int main(void)
{
	T_BEGIN(60);
	t_source_dir(src, sizeof src); /* here (tests/run.sh), else above the build */
	cli_setup();
	char *man1 = read_src("docs/posixtrace.1"), *ev3 = read_src("docs/man/man3/posix_trace_event.3");
	char *readme = read_src("README.md"), *map = read_src("src/libposixtrace.map");
	char *help = NULL, *lhelp = NULL;

	/* record --size */
	CHECK_EQ(cli_run(CLI("record", "--help"), &help, NULL), 0);
	CHECK_EQ(cli_run(CLI("live", "--help"), &lhelp, NULL), 0);
	unsigned long long h[2] = { 0, 0 }, m[2] = { 0, 0 }, l[1] = { 0 };
	char *msize = man_option(man1, "--size");
	CHECK_EQ(sizes_after(help, "--size", h, 2), 2);
	CHECK_EQ(sizes_after(msize, "--size", m, 2), 2);
	CHECK_EQ(sizes_after(lhelp, "--size", l, 1), 1);
	CHECK(strstr(help, "flush") && strstr(msize, "flush"));
	CHECK_EQ(h[0], m[0]);
	CHECK_EQ(h[1], m[1]);
	CHECK_EQ(l[0], h[1]);
	CHECK_EQ(recorded_size(NULL), h[0]);   /* default policy: flush */
	CHECK_EQ(recorded_size("loop"), h[1]);
	free(msize);

	/* record --no-loss: the default bound */
	char *mloss = man_option(man1, "--no-loss");
	const char *hl = strstr(help, "--no-loss"), *hd = hl ? strstr(hl, "(default ") : NULL;
	const char *md = strstr(mloss, "default ");
	unsigned hv = 0, mv = 0;
	CHECK(hd && sscanf(hd, "(default %u", &hv) == 1);
	CHECK(md && sscanf(md, "default %u", &mv) == 1);
	CHECK(hv > 0 && hv == mv);
	free(mloss);

	/* posix_trace_event(3): exported names and their versions */
	if (access(PT_BUILD_DIR "/libposixtrace.so", F_OK) != 0)
		T_SKIP("libposixtrace.so not built");
	/* built but not loadable (its static TLS beyond what dlopen() may
	 * take, say) is a failure, not a skip */
	void *so = dlopen(PT_BUILD_DIR "/libposixtrace.so", RTLD_NOW | RTLD_LOCAL);
	if (!so)
		fprintf(stderr, "dlopen: %s\n", dlerror());
	REQUIRE(so != NULL);
	regex_t re;
	regmatch_t g[3];
	REQUIRE(regcomp(&re, "(__posix_trace_[a-z_]+)", REG_EXTENDED) == 0);
	int names = 0;
	for (const char *p = ev3; regexec(&re, p, 2, g, 0) == 0; p += g[0].rm_eo) {
		char sym[64], ver[32] = "";
		snprintf(sym, sizeof sym, "%.*s", (int)(g[1].rm_eo - g[1].rm_so), p + g[1].rm_so);
		/* a version named right after it ("...,\nversion\n.BR POSIXTRACE_0.2") */
		const char *v = strstr(p + g[1].rm_eo, "POSIXTRACE_");
		const char *nextsym = strstr(p + g[1].rm_eo, "__posix_trace_");
		if (v && v - (p + g[1].rm_eo) < 40 && (!nextsym || v < nextsym))
			sscanf(v, "%31[A-Z_0-9.]", ver);
		void *a = ver[0] ? dlvsym(so, sym, ver) : dlsym(so, sym);
		if (!a)
			fprintf(stderr, "posix_trace_event(3) names %s%s%s: not exported so\n", sym,
			        ver[0] ? " " : "", ver);
		CHECK(a != NULL);
		names++;
	}
	regfree(&re);
	CHECK(names >= 2); /* __posix_trace_want, __posix_trace_gate */
	char bytes[64];
	snprintf(bytes, sizeof bytes, "%u\nbytes of header", (unsigned)PT_REC_SHORT);
	const char *hdr = strstr(ev3, bytes);
	if (!hdr) {
		snprintf(bytes, sizeof bytes, "%u bytes of header", (unsigned)PT_REC_SHORT);
		hdr = strstr(ev3, bytes);
	}
	CHECK(hdr != NULL);
	snprintf(bytes, sizeof bytes, "(%u for", (unsigned)PT_REC_HDR);
	CHECK(strstr(ev3, bytes) != NULL);

	/* README and the version script */
	REQUIRE(regcomp(&re, "`([A-Za-z_][A-Za-z0-9_]*)` `(POSIXTRACE_[0-9.]+)`", REG_EXTENDED) == 0);
	int pairs = 0;
	for (const char *p = readme; regexec(&re, p, 3, g, 0) == 0; p += g[0].rm_eo) {
		char sym[64], ver[32];
		snprintf(sym, sizeof sym, "%.*s", (int)(g[1].rm_eo - g[1].rm_so), p + g[1].rm_so);
		snprintf(ver, sizeof ver, "%.*s", (int)(g[2].rm_eo - g[2].rm_so), p + g[2].rm_so);
		if (!dlvsym(so, sym, ver))
			fprintf(stderr, "README: %s %s is not exported so\n", sym, ver);
		CHECK(dlvsym(so, sym, ver) != NULL);
		pairs++;
	}
	regfree(&re);
	/* each node of the map; the symbols of the later ones by name */
	int nodes = 0, later = 0; /* nodes; symbols of the nodes after the first */
	for (const char *p = map; (p = strstr(p, "POSIXTRACE_")) != NULL;) {
		char ver[32];
		if (sscanf(p, "%31[A-Z_0-9.] {", ver) != 1 || !strchr(p, '{') ||
		    strchr(p, '{') - p > (long)strlen(ver) + 2) {
			p++;
			continue;
		}
		char want[40];
		snprintf(want, sizeof want, "`%s`", ver);
		if (!strstr(readme, want))
			fprintf(stderr, "README does not name the version %s\n", ver);
		CHECK(strstr(readme, want) != NULL);
		const char *body = strchr(p, '{'), *end = strchr(body, '}');
		REQUIRE(end);
		if (nodes++ > 0) /* after the first: each symbol next to its version */
			for (const char *q = strstr(body, "global:"); q && q < end; later++) {
				char sym[64];
				q = strchr(q, '\n');
				if (!q || q >= end || sscanf(q, " %63[A-Za-z0-9_];", sym) != 1)
					break;
				q++;
				char pair[120];
				snprintf(pair, sizeof pair, "`%s` `%s`", sym, ver);
				if (!strstr(readme, pair))
					fprintf(stderr, "README does not give %s\n", pair);
				CHECK(strstr(readme, pair) != NULL);
			}
		p = end;
	}
	CHECK(nodes >= 3);
	CHECK_EQ(pairs, later); /* no pair but those */
	dlclose(so);
	front_options(man1);
	free(help);
	free(lhelp);
	free(man1);
	free(ev3);
	free(readme);
	free(map);
	T_END();
}
