/*
 * cli_export.c -- `posixtrace export` of a recorded examples/app log:
 * chrome (the JSON is well-formed -- a small validator here, and read by
 * python3's json: one instant event per trace event, each with the log
 * event's exact time and name, its call site in stackFrames -- and process
 * and thread names), ctf (the
 * directory and its metadata, with a call-site number unless --raw-addresses),
 * html (one file, no external resource, an SVG marker with a title per
 * event, the script and the tables).  An existing output is not
 * replaced without --force; bad formats exit 2.
 * Reading the CTF trace back with babeltrace2: cli_ctf.c; rendering the
 * page in chromium: cli_html.c.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"

/* ------------------------------------------------ a minimal JSON checker */
static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return p + 1;
}

static const char *number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *container(const char *p, int depth, char close, int obj)
{
	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (!(p = string(ws(p))) || *(p = ws(p)) != ':')
				return NULL;
			p++;
		}
		if (!(p = value(p, depth + 1)))
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	switch (*p) {
	case '{': return container(p, depth, '}', 1);
	case '[': return container(p, depth, ']', 0);
	case '"': return string(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return number(p);
	}
}

static int json_ok(const char *s)
{
	const char *e = s ? value(s, 0) : NULL;
	return e && *ws(e) == 0;
}

/* The Chrome export read by a real JSON parser (python3's, numbers kept
 * exact): every instant event's time in ns since the first event, its
 * name, and that its call site is in stackFrames, one line each, after a
 * line with the counts of instant and metadata events; compared with the
 * log (ev, n) event for event.  0 and a note when python3 is missing. */
static const char py_chrome[] =
	"import base64, json, sys, decimal\n"
	"d = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)\n"
	"ev = d['traceEvents']; sf = d['stackFrames']\n"
	"i = [e for e in ev if e['ph'] == 'i']\n"
	"print(len(i), sum(e['ph'] == 'M' for e in ev))\n"
	"for e in i:\n"
	"    assert 'sf' not in e or str(e['sf']) in sf\n"
	"    b = e.get('args', {}).get('b64')\n"
	"    if b is not None:\n" /* unpadded: padded again, and decoded strictly */
	"        assert '=' not in b\n"
	"        b = base64.b64decode(b + '=' * (-len(b) % 4), validate=True).hex()\n"
	"    print(int(decimal.Decimal(e['ts']) * 1000), e['name'], b or '-')\n";

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void chrome_parsed(const char *json, const struct cli_ev *ev, int n)
{
	const char *py = cli_which("python3");
	char *out = NULL, *err = NULL;

	if (!py) {
		fprintf(stderr, "note: python3 is not installed: the Chrome JSON is not read by a "
		                "real parser (Debian: python3)\n");
		return;
	}
	int rc = cli_run((char *const[]){ (char *)py, "-c", (char *)py_chrome, (char *)json, NULL },
	                 &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "python3 on %s: %s\n", json, err ? err : "");
	int inst = -1, meta = -1;
	CHECK(out && sscanf(out, "%d %d", &inst, &meta) == 2);
	CHECK_EQ(inst, n);
	CHECK(meta >= 2); /* a process_name, a thread_name at least */
	/* "NS NAME PAYLOAD" lines, sorted, against the log's (the payload's
	 * bytes in hex, - for none: a system event's, decoded as text) */
	uint64_t t0 = UINT64_MAX;
	for (int k = 0; k < n; k++) {
		uint64_t t = (uint64_t)ev[k].info.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)ev[k].info.posix_timestamp.tv_nsec;
		t0 = t < t0 ? t : t0;
	}
	char **want = calloc((size_t)n + 1, sizeof *want), **got = calloc((size_t)n + 1, sizeof *got);
	REQUIRE(want && got);
	for (int k = 0; k < n; k++) {
		uint64_t t = (uint64_t)ev[k].info.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)ev[k].info.posix_timestamp.tv_nsec;
		trace_event_id_t id = ev[k].info.posix_event_id;
		int sys = id < PT_SYS_IDS && id != POSIX_TRACE_UNNAMED_USEREVENT;
		want[k] = malloc(100 + 2 * sizeof ev[k].data);
		REQUIRE(want[k] && ev[k].len <= sizeof ev[k].data);
		int o = snprintf(want[k], 100, "%llu %s %s", (unsigned long long)(t - t0), ev[k].name,
		                 sys || !ev[k].len ? "-" : "");
		for (size_t b = 0; !sys && b < ev[k].len; b++)
			o += snprintf(want[k] + o, 3, "%02x", ev[k].data[b]);
	}
	int ng = 0;
	for (char *p = out ? strchr(out, '\n') : NULL; p && p[1] && ng < n; ng++) {
		char *e = strchr(++p, '\n');
		if (e)
			*e = 0;
		got[ng] = p;
		p = e;
	}
	CHECK_EQ(ng, n);
	qsort(want, (size_t)n, sizeof *want, cmp_line);
	qsort(got, (size_t)ng, sizeof *got, cmp_line);
	int same = 0;
	for (int k = 0; k < n && k < ng; k++) {
		same += !strcmp(want[k], got[k]);
		if (strcmp(want[k], got[k]) && k - same < 3)
			fprintf(stderr, "Chrome event \"%s\", the log has \"%s\"\n", got[k], want[k]);
	}
	CHECK_EQ(same, n);
	for (int k = 0; k < n; k++)
		free(want[k]);
	free(want);
	free(got);
	free(out);
	free(err);
}

static int occurrences(const char *s, const char *what)
{
	int n = 0;
	for (; s && (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

static void test_ctf(const char *log)
{
	const char *dir = cli_path("app.ctf");
	char *err = NULL;

	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", (char *)log, "-o", (char *)dir), NULL, &err), 0);
	free(err);
	char meta[300];
	snprintf(meta, sizeof meta, "%s/metadata", dir);
	char *m = cli_slurp(meta);
	CHECK(m && strncmp(m, "/* CTF 1.8 */", 13) == 0 && cli_contains(m, "freq = 1000000000;"));
	/* the call site's number, its label (address and location) listed
	 * once in the metadata; the raw address with --raw-addresses */
	CHECK(cli_contains(m, "_t site;\n\t\tuint16_t payload_len;\n"));
	CHECK(cli_contains(m, "typealias enum : uint16_t {\n\t\"0x"));
	free(m);
	const char *raw = cli_path("raw.ctf");
	CHECK_EQ(cli_run(CLI("export", "-f", "ctf", "--raw-addresses", (char *)log, "-o",
	                     (char *)raw), NULL, NULL), 0);
	snprintf(meta, sizeof meta, "%s/metadata", raw);
	m = cli_slurp(meta);
	CHECK(cli_contains(m, "\t\tuint64_hex_t addr;\n\t\tuint16_t payload_len;\n"));
	CHECK(m && !cli_contains(m, "site"));
	free(m);
	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", (char *)log, "-o", (char *)dir), NULL, &err), 1);
	CHECK(cli_contains(err, dir) && cli_contains(err, "--force"));
	free(err);
	CHECK_EQ(cli_run(CLI("export", "-f", "ctf", "--force", (char *)log, "-o", (char *)dir),
	                 NULL, NULL), 0);

}

static void test_html(const char *log, int n)
{
	const char *html = cli_path("app.html");
	char *err = NULL;

	CHECK_EQ(cli_run(CLI("export", "--format", "html", (char *)log, "-o", (char *)html), NULL, &err), 0);
	free(err);
	char *s = cli_slurp(html);
	REQUIRE(s != NULL);
	CHECK(strncmp(s, "<!DOCTYPE html>", 15) == 0);
	CHECK(cli_contains(s, "<svg id=\"plot\""));
	CHECK_EQ(occurrences(s, "<line class=\"t"), n);
	CHECK_EQ(occurrences(s, "<title>"), n + 1);
	CHECK(cli_contains(s, "<script>") && cli_contains(s, "</html>"));
	CHECK(cli_contains(s, "<table>"));
	CHECK(!cli_contains(s, "src=") && !cli_contains(s, "href=") && !cli_contains(s, "@import") &&
	      !cli_contains(s, "url("));
	CHECK_EQ(occurrences(s, "http"), occurrences(s, "'http://www.w3.org/2000/svg'"));
	/* each worker's lane: "PROGRAM PID/TID worker-K", the name it set, a
	 * TID of its own (not its process's) */
	for (int k = 0; k < 3; k++) {
		char want[40];
		snprintf(want, sizeof want, " worker-%d</text>", k);
		const char *at = strstr(s, want), *b = at;
		int pid = 0, tid = 0;
		while (b && b > s && b[-1] != '>')
			b--;
		CHECK(at && b && sscanf(b, "%*s %d/%d worker-", &pid, &tid) == 2 && pid > 0 && tid > 0 &&
		      tid != pid);
	}
	free(s);

}

int main(void)
{
	char *out = NULL, *err = NULL;
	struct cli_ev *ev;

	T_BEGIN(240);
	cli_setup();
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);

	/* chrome */
	const char *json = cli_path("app.json");
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", (char *)log, "-o", (char *)json), NULL, &err), 0);
	free(err);
	char *j = cli_slurp(json);
	CHECK(json_ok(j));
	CHECK(!json_ok("{\"a\":[1,2,}") && !json_ok("{\"a\":\"x\\q\"}") && json_ok("[1.5e3,\"\\u00e9\"]"));
	CHECK_EQ(occurrences(j, "\"ph\":\"i\""), n);
	chrome_parsed(json, ev, n);
	CHECK(cli_contains(j, "\"traceEvents\":["));
	CHECK(cli_contains(j, "\"name\":\"process_name\""));
	CHECK(cli_contains(j, "\"name\":\"thread_name\""));
	CHECK(cli_contains(j, "\"text\":\"GET /item/0/0\""));
	CHECK(cli_contains(j, "\"name\":\"app_start\",\"ph\":\"i\""));
	CHECK(cli_contains(j, "\"name\":\"posix_trace_start\",\"cat\":\"posix_trace\",\"ph\":\"i\""));
	CHECK(cli_contains(j, "\"stackFrames\":{"));
	CHECK_EQ(occurrences(j, "\"name\":\"request\""), cli_count(ev, n, "request"));
	/* a described payload: its fields as args, each the value the app sent */
	char *want = cli_app_replies(ev, n), *got = calloc((size_t)n + 1, 64), line[4096];
	REQUIRE(got);
	for (int i = 0, o = 0; cli_line(j, i, line, sizeof line) == 0; i++) {
		const char *a = strstr(line, "\"name\":\"reply\"") ? strstr(line, "\"args\":{") : NULL;
		int w, r, st;
		unsigned b;
		if (a && sscanf(a, "\"args\":{\"worker\":%d,\"round\":%d,\"status\":%d,\"bytes\":%u,", &w,
		                &r, &st, &b) == 4)
			o += sprintf(got + o, "%d %d %d %u\n", w, r, st, b);
	}
	cli_sort_lines(got);
	CHECK(want[0] && !strcmp(got, want));
	if (strcmp(got, want))
		fprintf(stderr, "Chrome reply args:\n%s\nthe app sent:\n%s", got, want);
	free(want);
	free(got);
	free(j);
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", (char *)log, "-o", (char *)json), NULL, &err), 1);
	CHECK(cli_contains(err, json));
	free(err);
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "--force", (char *)log, "-o", (char *)json),
	                 NULL, NULL), 0);

	test_ctf(log);
	test_html(log, n);

	/* errors */
	CHECK_EQ(cli_run(CLI("export", "--format", "pdf", (char *)log), NULL, &err), 2);
	CHECK(cli_contains(err, "pdf"));
	free(err);
	CHECK_EQ(cli_run(CLI("export", (char *)log), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", "/nonexistent/z.ptlog", "-o", (char *)json),
	                 NULL, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/z.ptlog"));
	free(err);
	CHECK_EQ(cli_run(CLI("export", "--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "usage: posixtrace export"));
	free(out);
	free(ev);
	T_END();
}
