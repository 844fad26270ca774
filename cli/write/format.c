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
#include "write.h"

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
	static const char hex[] = "0123456789abcdef";
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
	/* at most 5 bytes a step (an escape, or " xx"), then the tail: room
	 * is checked before each, and what does not fit is cut */
#define ROOM(k) (o + (k) < cap)
	if (text) {
		size_t shown = n < max ? n : max;
		if (ROOM(1))
			out[o++] = '"';
		for (size_t i = 0; i < shown && ROOM(2); i++) {
			unsigned char c = d[i];
			char e = c == '"' || c == '\\' ? (char)c : c == '\n' ? 'n' : c == '\t' ? 't'
			       : c == '\r' ? 'r' : 0;
			if (e) {
				out[o++] = '\\';
				out[o++] = e;
			} else {
				out[o++] = (char)c;
			}
		}
		if (ROOM(1))
			out[o++] = '"';
		if (n > max && ROOM(3))
			out[o++] = '.', out[o++] = '.', out[o++] = '.';
	} else {
		size_t shown = len < max ? len : max;
		for (size_t i = 0; i < shown && ROOM(3); i++) {
			if (i && i % 4 == 0)
				out[o++] = ' ';
			out[o++] = hex[d[i] >> 4];
			out[o++] = hex[d[i] & 15];
		}
		if (len > max && ROOM(4))
			out[o++] = ' ', out[o++] = '.', out[o++] = '.', out[o++] = '.';
	}
#undef ROOM
	out[o] = 0;
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
	const unsigned char *d = e->data;
	size_t len = e->len;
	unsigned id = e->id;
	char a[256], b[256];
	uint64_t n;
	int v;

	/* RESUME: the events its gap lost, when the trace says (0: the gap
	 * marks, in one thread's sequence, a loss an earlier gap counted) */
	if (id == POSIX_TRACE_RESUME && !len && (n = e->lost) != UINT64_MAX) {
		if (n)
			snprintf(out, cap, "%llu event%s lost in this gap", (unsigned long long)n,
			         n == 1 ? "" : "s");
		else
			snprintf(out, cap, "lost events counted with an earlier gap");
		return;
	}
	/* a no-loss wait: how long the thread was held for room */
	if (id == PT_EXT_NOLOSS_WAIT && tlog_wait_of(e, &n)) {
		fmt_duration(a, sizeof a, n);
		snprintf(out, cap, "waited %llu ns (%s) for room in the stream (--no-loss)",
		         (unsigned long long)n, a);
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
void json_thread(FILE *f, const struct tlog *l, uint32_t t, uint64_t ts)
{
	char who[48], name[40], j[100];
	int64_t tid;

	tlog_thread_id(l, t, ts, who, sizeof who, name, sizeof name, &tid);
	const struct tthread *th = t < l->nth ? &l->th[t] : NULL;
	fprintf(f, "\"pid\":%d,\"thread\":\"%s\",", th ? (int)th->pid : 0, who);
	if (tid > 0)
		fprintf(f, "\"tid\":%lld,", (long long)tid);
	else
		fputs("\"tid\":null,", f);
	if (tid > 0) {
		json_str(j, sizeof j, name);
		fprintf(f, "\"name\":%s,", j);
	} else {
		fputs("\"name\":null,", f);
	}
	fprintf(f, "\"pthread_t\":\"%#llx\"", (unsigned long long)(th ? th->tid : 0));
}

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

/* "s.nnnnnnnnn" (as fmt_rel) into out; its length */
static size_t rel_text(char *out, uint64_t ns)
{
	char tmp[24];
	size_t k = 0, o = 0;
	uint64_t sec = ns / 1000000000u;
	uint32_t frac = (uint32_t)(ns % 1000000000u);

	do
		tmp[k++] = (char)('0' + sec % 10);
	while (sec /= 10);
	while (k)
		out[o++] = tmp[--k];
	out[o++] = '.';
	for (int i = 8; i >= 0; i--, frac /= 10)
		out[o + (size_t)i] = (char)('0' + frac % 10);
	o += 9;
	out[o] = 0;
	return o;
}

static size_t signed_text(char *out, int64_t ns)
{
	out[0] = ns < 0 ? '-' : '+';
	return 1 + rel_text(out + 1, ns < 0 ? -(uint64_t)ns : (uint64_t)ns);
}

/* s padded with spaces to w (right-justified when right) at out+o */
static size_t pad(char *out, size_t o, const char *s, size_t n, int w, int right)
{
	size_t fill = (size_t)w > n ? (size_t)w - n : 0;
	if (right) {
		memset(out + o, ' ', fill);
		o += fill;
	}
	memcpy(out + o, s, n);
	o += n;
	if (!right) {
		memset(out + o, ' ', fill);
		o += fill;
	}
	return o;
}

/* v in decimal at out; its length */
static size_t dec_text(char *out, int64_t v)
{
	char tmp[24];
	size_t k = 0, o = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	if (v < 0)
		out[o++] = '-';
	do
		tmp[k++] = (char)('0' + u % 10);
	while (u /= 10);
	while (k)
		out[o++] = tmp[--k];
	return o;
}

/* The PID/T column ("PID/IDX", or "PID/TID" when the trace names the
 * thread) into who, and with ident the NAME column (one word: blanks as
 * '_', "-" for none) into name; their lengths in *wn and *nmn. */
static void who_text(const struct tlog *l, const struct tthread *th, uint64_t ts, int ident,
                     char *who, size_t *wn, char *name, size_t *nmn)
{
	const struct pt_ext_thread *t = NULL;
	size_t o;

	*nmn = 0;
	if (th->pid == 0 && th->tid == 0) {
		who[0] = '-';
		*wn = 1;
	} else {
		t = ident ? thrmap_find(l->thrs, th->pid, th->tid, ts) : NULL;
		o = dec_text(who, th->pid);
		who[o++] = '/';
		o += t ? dec_text(who + o, t->tid) : dec_text(who + o, th->idx);
		*wn = o;
	}
	if (!ident)
		return;
	if (!t || !t->name[0]) {
		name[0] = '-';
		*nmn = 1;
		return;
	}
	for (o = 0; o < PT_EXT_THREAD_NAME - 1 && t->name[o]; o++)
		name[o] = t->name[o] == ' ' || t->name[o] == '\t' ? '_' : t->name[o];
	*nmn = o;
}

void fmt_line(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
              int absolute, int name_w, struct symz *z)
{
	fmt_line_span(f, l, e, t0, prev, absolute, name_w, z, NULL);
}

/* sm (spans.c): the name indented by the span depth, and an end's span
 * duration after the data */
void fmt_line_span(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
                   int absolute, int name_w, struct symz *z, const struct span_mark *sm)
{
	char t[48], dt[40], who[48], tname[PT_EXT_THREAD_NAME], name[32], data[512], line[1600];
	const struct tthread *th = &l->th[e->thread];
	size_t tn, dn, wn, tnn, o;
	/* a trace that says who its threads were: PID/TID and NAME columns */
	int ident = thrmap_count(l->thrs) > 0;

	if (absolute) {
		fmt_abs(t, sizeof t, e->ts);
		tn = strlen(t);
	} else if (e->ts >= t0) {
		tn = rel_text(t, e->ts - t0);
	} else {
		tn = signed_text(t, (int64_t)(e->ts - t0));
	}
	dn = signed_text(dt, (int64_t)(e->ts - prev));
	who_text(l, th, e->ts, ident, who, &wn, tname, &tnn);
	fmt_event_data(data, sizeof data, l, e);
	const char *sym = z ? symz_lookup(z, th->pid, e->ts, e->addr) : "";
	char raw[32];
	if (!z && e->addr) {
		snprintf(raw, sizeof raw, "0x%llx", (unsigned long long)e->addr);
		sym = raw;
	}
	const char *nm = tlog_name(l, e->id, name, sizeof name);
	size_t nn = strlen(nm), symn = strlen(sym), datan = strlen(data);
	if (nn > 200)
		nn = 200;
	if (symn > 600)
		symn = 600;
	o = pad(line, 0, t, tn, 12, 1);
	line[o++] = ' ';
	o = pad(line, o, dt, dn, 13, 1);
	line[o++] = ' ';
	line[o++] = ' ';
	o = pad(line, o, who, wn, ident ? 13 : 9, 0);
	line[o++] = ' ';
	if (ident) {
		o = pad(line, o, tname, tnn, 15, 0);
		line[o++] = ' ';
	}
	if (sm) { /* two spaces a level, at most 20 */
		memset(line + o, ' ', 2 * (sm->depth < 20 ? sm->depth : 20));
		o += 2 * (sm->depth < 20 ? sm->depth : 20);
	}
	o = pad(line, o, nm, nn, datan || symn ? name_w : 0, 0);
	if (datan) {
		line[o++] = ' ';
		line[o++] = ' ';
		memcpy(line + o, data, datan);
		o += datan;
	}
	if (sm && (sm->kind == SPAN_END || sm->kind == SPAN_CUT)) {
		char d[40];
		if (sm->kind == SPAN_END)
			fmt_duration(d, sizeof d, sm->dur);
		o += (size_t)sprintf(line + o, "  [%s]", sm->kind == SPAN_END ? d : "incomplete");
	}
	if (symn) {
		memcpy(line + o, "  @ ", 4);
		memcpy(line + o + 4, sym, symn);
		o += 4 + symn;
	}
	line[o++] = '\n';
	fwrite(line, 1, o, f);
}
