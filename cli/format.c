/*
 * format.c -- how an event is written as text: the payload (quoted text,
 * else hex, at most 64 bytes then "..."), the system events' data decoded,
 * JSON strings, and the one-line form `show` and `live` print:
 *
 *   TIME         DELTA         PID/T    EVENT     DATA            @ ADDRESS
 *   0.000012345  +0.000001000  4242/1   request   "GET /index"    @ main+0x2c (app.c:51)
 *
 * PID/T is the process id and the thread's index in that process (1 for
 * its first thread seen in the log, 2 for the next, ...).  A trace that
 * says who its threads were (threads.c) has PID/TID and a NAME column
 * instead, one word ("-" for none; blanks shown as '_'); a thread it does
 * not name (the recorder's own) keeps PID/index there:
 *
 *   TIME         DELTA         PID/TID       NAME      EVENT    DATA
 *   0.003142083  +0.001102862  28569/28572   worker-0  reply    worker=0 round=0 ...
 *
 * A payload whose program described it is shown field by field (typed.c).
 */
#include <string.h>
#include "cli.h"
#include "typed.h"

static int printable(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
}

/* Plausibly text: printable characters, then nothing, or one NUL (a C
 * string with its NUL), or NULs fewer than the characters (a string in a
 * fixed buffer).  So a small integer -- one or two printable bytes, then
 * zeros -- is not text: 9 as 8 bytes was shown as "\t". */
int fmt_is_text(const unsigned char *d, size_t len)
{
	size_t n = len;

	while (n > 0 && d[n - 1] == 0)
		n--;
	if (n == 0 || (len - n > 1 && len - n >= n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!printable(d[i]))
			return 0;
	return 1;
}

void fmt_data(char *out, size_t cap, const unsigned char *d, size_t len, size_t max,
              int *is_text)
{
	size_t n = len, o = 0;

	while (n > 0 && d[n - 1] == 0) /* C strings with their NUL */
		n--;
	int text = fmt_is_text(d, len);
	if (is_text)
		*is_text = text;
	if (cap == 0)
		return;
	out[0] = 0;
	if (len == 0)
		return;
#define PUT(...) do { int k_ = snprintf(out + o, cap - o, __VA_ARGS__); \
	o = k_ < 0 ? o : o + (size_t)k_ >= cap ? cap - 1 : o + (size_t)k_; } while (0)
	if (text) {
		size_t shown = n < max ? n : max;
		PUT("\"");
		for (size_t i = 0; i < shown; i++) {
			unsigned char c = d[i];
			if (c == '"' || c == '\\')
				PUT("\\%c", c);
			else if (c == '\n')
				PUT("\\n");
			else if (c == '\t')
				PUT("\\t");
			else if (c == '\r')
				PUT("\\r");
			else
				PUT("%c", c);
		}
		PUT("\"%s", n > max ? "..." : "");
	} else {
		size_t shown = len < max ? len : max;
		for (size_t i = 0; i < shown; i++)
			PUT("%s%02x", i && i % 4 == 0 ? " " : "", d[i]);
		PUT("%s", len > max ? " ..." : "");
	}
#undef PUT
}

/* The types a set holds, as "a, b, c" (at most a few). */
static void set_names(char *out, size_t cap, const struct tlog *l, const unsigned char *bytes)
{
	trace_event_set_t set;
	size_t o = 0;
	int n = 0;
	char tmp[32];

	memcpy(&set, bytes, sizeof set);
	out[0] = 0;
	for (unsigned id = 0; id < PT_NIDS; id++) {
		int member = 0;
		if (posix_trace_eventset_ismember(id, &set, &member) != 0 || !member)
			continue;
		if (n++ == 4) {
			snprintf(out + o, cap - o, ", ...");
			return;
		}
		int k = snprintf(out + o, cap - o, "%s%s", o ? ", " : "", tlog_name(l, id, tmp, sizeof tmp));
		if (k < 0 || (size_t)k >= cap - o)
			return;
		o += (size_t)k;
	}
	if (!n)
		snprintf(out, cap, "none");
}

void fmt_event_data(char *out, size_t cap, const struct tlog *l, const struct tev *e)
{
	const size_t set = sizeof(trace_event_set_t);
	const unsigned char *d = l->data + e->data;
	size_t len = e->len;
	unsigned id = e->id;
	char a[256], b[256];
	uint64_t n;
	int v;

	/* RESUME: the events its gap lost, when the trace says (0: the gap
	 * marks, in one thread's sequence, a loss an earlier gap counted) */
	if (id == POSIX_TRACE_RESUME && !len &&
	    (n = tlog_gap_lost(l, (size_t)(e - l->ev))) != UINT64_MAX) {
		if (n)
			snprintf(out, cap, "%llu event%s lost in this gap", (unsigned long long)n,
			         n == 1 ? "" : "s");
		else
			snprintf(out, cap, "lost events counted with an earlier gap");
		return;
	}
	/* START carries the filter (the types left out), FILTER the old and new */
	if (id == POSIX_TRACE_START && len == set) {
		set_names(a, sizeof a, l, d);
		snprintf(out, cap, "filter: %s", a);
		return;
	}
	if (id == POSIX_TRACE_FILTER && len == 2 * set) {
		set_names(a, sizeof a, l, d);
		set_names(b, sizeof b, l, d + set);
		snprintf(out, cap, "filter: %s -> %s", a, b);
		return;
	}
	if ((id == POSIX_TRACE_STOP || id == POSIX_TRACE_ERROR) && len == sizeof v) {
		memcpy(&v, d, sizeof v);
		if (id == POSIX_TRACE_STOP)
			snprintf(out, cap, "%s", v == 1 ? "stream full (stopped by itself)" : "");
		else
			snprintf(out, cap, "error: %s", strerror(v));
		return;
	}
	/* a payload its program described: by field (typed.c), else raw
	 * with a note */
	const char *desc = id >= POSIX_TRACE_UNNAMED_USEREVENT
	                   ? typemap_desc(l->types, l->th[e->thread].pid, id) : NULL;
	if (desc && e->trunc != POSIX_TRACE_TRUNCATED_RECORD && typed_decode(out, cap, desc, d, len) == 0)
		return;
	fmt_data(out, cap, d, len, 64, NULL);
	if (desc) {
		size_t o = strlen(out);
		snprintf(out + o, cap - o, "%s", o ? " " : "");
		o = strlen(out);
		typed_misfit(out + o, cap - o, desc, d, len, e->trunc == POSIX_TRACE_TRUNCATED_RECORD);
	}
	if (e->trunc == POSIX_TRACE_TRUNCATED_RECORD) {
		size_t o = strlen(out);
		snprintf(out + o, cap - o, " [truncated]");
	}
}

/* "s" as a JSON string, quotes included; returns the length written. */
size_t json_str(char *out, size_t cap, const char *s)
{
	size_t o = 0;

	if (cap < 3)
		return 0;
	out[o++] = '"';
	for (; *s && o + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	out[o] = 0;
	return o;
}

static void fmt_signed(char *buf, size_t cap, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	buf[0] = ns < 0 ? '-' : '+';
	fmt_rel(buf + 1, cap - 1, a);
}

void fmt_line(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
              int absolute, int name_w, struct symz *z)
{
	char t[48], dt[40], who[48], name[32], data[512];
	const struct tthread *th = &l->th[e->thread];

	if (absolute)
		fmt_abs(t, sizeof t, e->ts);
	else if (e->ts >= t0)
		fmt_rel(t, sizeof t, e->ts - t0);
	else
		fmt_signed(t, sizeof t, (int64_t)(e->ts - t0));
	fmt_signed(dt, sizeof dt, (int64_t)(e->ts - prev));
	if (th->pid == 0 && th->tid == 0)
		snprintf(who, sizeof who, "-");
	else
		snprintf(who, sizeof who, "%d/%u", (int)th->pid, th->idx);
	/* a trace that says who its threads were: PID/TID and NAME columns */
	int ident = thrmap_count(l->thrs) > 0;
	char tname[PT_EXT_THREAD_NAME + 1] = "";
	if (ident && (th->pid || th->tid))
		thrmap_columns(l->thrs, who, sizeof who, tname, sizeof tname, th->pid, th->tid, e->ts,
		               th->idx);
	else if (ident)
		snprintf(tname, sizeof tname, "-");
	fmt_event_data(data, sizeof data, l, e);
	const char *sym = z ? symz_lookup(z, th->pid, e->ts, e->addr) : "";
	if (!z && e->addr) {
		static char raw[32];
		snprintf(raw, sizeof raw, "0x%llx", (unsigned long long)e->addr);
		sym = raw;
	}
	if (ident)
		fprintf(f, "%12s %13s  %-13s %-15s %-*s", t, dt, who, tname,
		        data[0] || sym[0] ? name_w : 0, tlog_name(l, e->id, name, sizeof name));
	else
		fprintf(f, "%12s %13s  %-9s %-*s", t, dt, who, data[0] || sym[0] ? name_w : 0,
		        tlog_name(l, e->id, name, sizeof name));
	if (data[0])
		fprintf(f, "  %s", data);
	if (sym[0])
		fprintf(f, "  @ %s", sym);
	fputc('\n', f);
}
