/*
 * export_chrome.c -- the log as Chrome Trace Event Format JSON (loads in
 * chrome://tracing and ui.perfetto.dev), written event by event as the
 * log is read.
 *
 * Every trace event is an instant event, thread scoped (the default
 * scope): {"name":..,"ph":"i","ts":..,"pid":..,"tid":..} with "ts" in
 * microseconds since the first event (its nanoseconds as fraction digits,
 * as many as they need: 12, 12.5, 12.345), "tid" the
 * thread's kernel TID (the thread's index in its process when the trace
 * does not say), "cat":"posix_trace" for system events,
 * "sf" the event's call site in "stackFrames" (its address as `show`
 * symbolizes it, listed once at the end of the file), and "args": the
 * data by field when its program described it (enrich.h: "id":3,...),
 * else as "text" when it reads as text, and always as "b64" (the bytes
 * are the payload, in base64: RFC 4648's alphabet, without the '='
 * padding; system events: decoded, as "text" only), and
 * "truncated":true when it was cut.  Metadata events name each process
 * (its program) and thread (its name, or "thread IDX (0xPTHREAD_ID)").
 * About 98 bytes an event of 8-byte payload, times on 200 ns steps
 * (tests/biglog.h).
 * Each complete span (spans.c) is a slice: a complete event ("ph":"X",
 * "cat":"span") on its thread, nested by time, or an async pair
 * ("b"/"e") for a keyed one, written when its end is read.
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

static void label(char *out, size_t cap, struct symz *z, int32_t pid, uint64_t ts)
{
	const char *exe = z && pid ? symz_exe(z, pid, ts) : NULL;
	const char *b = exe ? strrchr(exe, '/') : NULL;

	if (pid == 0)
		snprintf(out, cap, "reader (synthesized events)");
	else if (exe)
		snprintf(out, cap, "%s %d", b ? b + 1 : exe, (int)pid);
	else
		snprintf(out, cap, "pid %d", (int)pid);
}

/* The call sites met: (pid, address) -> frame id, and each one's text;
 * bounded by the code locations of the trace (at most FRAMES_MAX, then
 * addresses go inline in "args"). */
#define FRAMES_MAX (1u << 20)
struct frame { int32_t pid; uint32_t id; uint64_t addr; };
struct frames { struct frame *h; size_t cap, n; char **text; };

static uint64_t fkey(int32_t pid, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4full;
	return h ^ h >> 29;
}

/* The frame id of (pid, addr), made on first sight with text (the
 * address itself when text is "" or an address too); 0 if none can be
 * made. */
static uint32_t frame_of(struct frames *fr, int32_t pid, uint64_t addr, const char *text)
{
	char raw[40];
	if ((fr->n + 1) * 2 > fr->cap) {
		size_t ncap = fr->cap ? 2 * fr->cap : 1024;
		struct frame *n = calloc(ncap, sizeof *n);
		if (!n || fr->n >= FRAMES_MAX) {
			free(n);
			goto find;
		}
		for (size_t i = 0; i < fr->cap; i++)
			if (fr->h[i].id) {
				size_t j = fkey(fr->h[i].pid, fr->h[i].addr) & (ncap - 1);
				while (n[j].id)
					j = (j + 1) & (ncap - 1);
				n[j] = fr->h[i];
			}
		free(fr->h);
		fr->h = n;
		fr->cap = ncap;
		char **t = realloc(fr->text, (ncap / 2 + 1) * sizeof *t);
		if (!t)
			return 0;
		fr->text = t;
	}
find:
	if (!fr->cap)
		return 0;
	size_t j = fkey(pid, addr) & (fr->cap - 1);
	for (; fr->h[j].id; j = (j + 1) & (fr->cap - 1))
		if (fr->h[j].pid == pid && fr->h[j].addr == addr)
			return fr->h[j].id;
	if (!text[0] || !strncmp(text, "0x", 2)) {
		snprintf(raw, sizeof raw, "0x%llx", (unsigned long long)addr);
		text = raw;
	}
	if ((fr->n + 1) * 2 > fr->cap || !(fr->text[fr->n + 1] = strdup(text)))
		return 0;
	fr->h[j] = (struct frame){ pid, (uint32_t)++fr->n, addr };
	return (uint32_t)fr->n;
}

static char *put_u(char *o, uint64_t v)
{
	char t[24];
	int k = 0;
	do
		t[k++] = (char)('0' + v % 10);
	while (v /= 10);
	while (k)
		*o++ = t[--k];
	return o;
}

static char *put_s(char *o, const char *s)
{
	size_t n = strlen(s);
	memcpy(o, s, n);
	return o + n;
}

/* The n bytes at d in base64 (RFC 4648, section 4: its alphabet, and no
 * '=' after the last group), at o: past them. */
static char *put_b64(char *o, const unsigned char *d, size_t n)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; n - i >= 3; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		o[0] = b64[v >> 18];
		o[1] = b64[v >> 12 & 63];
		o[2] = b64[v >> 6 & 63];
		o[3] = b64[v & 63];
		o += 4;
	}
	if (n - i) { /* 1 byte: 2 characters, 2 bytes: 3 */
		uint32_t v = (uint32_t)d[i] << 16 | (n - i > 1 ? (uint32_t)d[i + 1] << 8 : 0);
		*o++ = b64[v >> 18];
		*o++ = b64[v >> 12 & 63];
		if (n - i > 1)
			*o++ = b64[v >> 6 & 63];
	}
	return o;
}

/* The tid of an event: its thread's kernel TID when the trace says, named
 * by a thread_name metadata event (its latest name) the first time; else
 * the thread's index in its process (named beforehand). */
static uint64_t thread_tid(FILE *f, const struct tlog *l, const struct tthread *th,
                           const struct tev *e, int32_t *named)
{
	const struct pt_ext_thread *t = thrmap_find(l->thrs, th->pid, th->tid, e->ts);
	if (!t || t->tid <= 0)
		return th->idx;
	if (named && named[e->thread] != t->tid) {
		char j[80], n[64];
		snprintf(n, sizeof n, "%s", thrmap_latest(l->thrs, t)->name);
		if (!n[0])
			snprintf(n, sizeof n, "%d", (int)t->tid);
		json_str(j, sizeof j, n);
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
		           "\"args\":{\"name\":%s}}", (int)tlog_thread_pid_key(l, th), (int)t->tid, j);
		named[e->thread] = t->tid;
	}
	return (uint64_t)t->tid;
}

/* A payload its program described: its fields as args (typed.c), at o;
 * 1 and *end past them, or 0 (none, or it does not fit). */
static int typed_args(char *o, size_t cap, const struct tlog *l, const struct tev *e, char **end)
{
	const char *desc = e->id >= POSIX_TRACE_UNNAMED_USEREVENT && l->types
	                   ? typemap_desc(l->types, l->th[e->thread].pid, e->id) : NULL;
	if (!desc || e->trunc == POSIX_TRACE_TRUNCATED_RECORD ||
	    typed_json_args(o, cap, desc, e->data, e->len) != 0)
		return 0;
	*end = o + strlen(o);
	return 1;
}

/* What one export holds as it goes. */
struct chrome {
	struct tlog *l;
	struct symz *z;
	FILE *f;
	uint64_t t0;
	struct frames fr;
	char *jname[PT_NIDS];        /* each type's name as JSON, made on first sight */
	int32_t *named;              /* the TID each thread was named as */
	char *line;                  /* an event's JSON, written at once */
};

/* The file's head: the trace's name and the log's figures in "otherData". */
static void chrome_head(const struct chrome *c)
{
	const struct tlog *l = c->l;
	char name[TRACE_NAME_MAX] = "", j[300];

	posix_trace_attr_getname(&l->attr, name);
	json_str(j, sizeof j, name);
	fprintf(c->f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace_name\":%s,", j);
	json_str(j, sizeof j, l->path);
	fprintf(c->f, "\"log\":%s,\"events\":%llu,\"lost\":%llu,\"lost_exact\":%s,\"gaps\":%llu},\n"
	              "\"traceEvents\":[\n", j, (unsigned long long)l->nev,
	        (unsigned long long)tlog_lost_total(l), l->lost_final ? "true" : "false",
	        (unsigned long long)l->overflows);
}

/* The metadata events: the process tree (a process sorts right after its
 * parent; its parent and command line are in process_name's args and in
 * its labels), then the names of the threads the trace does not
 * identify.  0, or 1 (said). */
static int chrome_processes(const struct chrome *c)
{
	const struct tlog *l = c->l;
	FILE *f = c->f;
	char buf[600], j[300];
	size_t *order;
	unsigned *depth;

	if (tlog_tree(l, &order, &depth))
		return 1;
	for (size_t k = 0; k < l->npr; k++) {
		size_t i = order[k];
		const struct pt_ext_proc *id = tlog_identity(l, &l->pr[i]);
		/* (a process given a pid another had before: a pid of its own
		 * for the viewer, births.c, its name the real one) */
		int key = (int)tlog_pid_key(l, i);
		label(buf, sizeof buf, c->z, l->pr[i].pid, l->pr[i].last);
		tlog_pid_key_note(l, i, buf + strlen(buf), sizeof buf - strlen(buf));
		json_str(j, sizeof j, buf);
		fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		           "\"args\":{\"name\":%s", k == 0 ? "" : ",\n", key, j);
		if (id) {
			static char jc[6 * PT_EXT_OBJ_PATH + 8];
			json_str(jc, sizeof jc, id->cmdline);
			fprintf(f, ",\"ppid\":%d,\"cmdline\":%s,\"cmdline_cut\":%s", (int)id->ppid, jc,
			        id->cut ? "true" : "false");
		}
		fputs("}}", f);
		if (id) {
			snprintf(buf, sizeof buf, "parent %d", (int)id->ppid);
			json_str(j, sizeof j, buf);
			fprintf(f, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
			           "\"args\":{\"labels\":%s}}", key, j);
		}
		fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		           "\"args\":{\"sort_index\":%zu}}", key, k);
	}
	free(order);
	free(depth);
	for (size_t i = 0; i < l->nth; i++) /* threads the trace does not identify */
		if (!thrmap_find(l->thrs, l->th[i].pid, l->th[i].tid, 0))
			fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
			           "\"args\":{\"name\":\"thread %u (0x%llx)\"}}",
			        (int)tlog_thread_pid_key(l, &l->th[i]), l->th[i].idx, l->th[i].idx,
			        (unsigned long long)l->th[i].tid);
	return 0;
}

/* rel nanoseconds as microseconds, the nanoseconds as fraction digits
 * without trailing zeros, at o: past them. */
static char *put_us(char *o, uint64_t rel)
{
	o = put_u(o, rel / 1000);
	if (rel % 1000) {
		unsigned ns = (unsigned)(rel % 1000);
		*o++ = '.';
		*o++ = (char)('0' + ns / 100);
		if (ns % 100) {
			*o++ = (char)('0' + ns / 10 % 10);
			if (ns % 10)
				*o++ = (char)('0' + ns % 10);
		}
	}
	return o;
}

/* An event's "args" at o (sf: its frame, 0 if none): the system event's
 * text; or the described fields, else the payload as text when it reads
 * as text; the payload in base64; truncated; the address with no frame.
 * Past them. */
static char *chrome_args(char *o, const struct tlog *l, const struct tev *e, int sys, uint32_t sf)
{
	char buf[600];
	int text = 0;

	memcpy(o, ",\"args\":{", 9);
	o += 9;
	char *a0 = o;
	fmt_data(buf, 2, e->data, e->len, e->len, &text);
	if (sys) {
		fmt_event_data(buf, sizeof buf, l, e);
		memcpy(o, "\"text\":", 7);
		o += 7;
		o += json_str(o, 2 * sizeof buf + 8, buf);
	} else if (typed_args(o, 2 * TRACE_DATA_MAX * 6, l, e, &o)) {
	} else if (text) {
		size_t n = e->len;
		while (n && !e->data[n - 1])
			n--;
		char *sdup = malloc(n + 1);
		if (sdup) {
			memcpy(sdup, e->data, n);
			sdup[n] = 0;
			memcpy(o, "\"text\":", 7);
			o += 7;
			o += json_str(o, 6 * n + 8, sdup);
			free(sdup);
		}
	}
	if (!sys && e->len) { /* text or not, the bytes are the payload */
		if (o > a0)
			*o++ = ',';
		memcpy(o, "\"b64\":\"", 7);
		o = put_b64(o + 7, e->data, e->len);
		*o++ = '"';
	}
	if (e->trunc == POSIX_TRACE_TRUNCATED_RECORD)
		o += sprintf(o, "%s\"truncated\":true", o > a0 ? "," : "");
	if (e->addr && !sf)
		o += sprintf(o, "%s\"addr\":\"0x%llx\"", o > a0 ? "," : "",
		             (unsigned long long)e->addr);
	*o++ = '}';
	return o;
}

/* One trace event as an instant event; 0, or -1 (out of memory). */
static int chrome_event(struct chrome *c, const struct tev *e)
{
	const struct tlog *l = c->l;
	const struct tthread *th = &l->th[e->thread];
	int sys = e->id < PT_SYS_IDS && e->id != POSIX_TRACE_UNNAMED_USEREVENT;
	char *o = c->line, tmp[32], j[300];

	if (!c->jname[e->id]) {
		json_str(j, sizeof j, tlog_name(l, e->id, tmp, sizeof tmp));
		if (!(c->jname[e->id] = strdup(j)))
			return -1;
	}
	o = put_s(o, ",\n{\"name\":");
	o = put_s(o, c->jname[e->id]);
	o = put_s(o, sys ? ",\"cat\":\"posix_trace\",\"ph\":\"i\",\"ts\":" : ",\"ph\":\"i\",\"ts\":");
	o = put_us(o, e->ts - c->t0);
	o = put_s(o, ",\"pid\":");
	int32_t key = tlog_thread_pid_key(l, th);
	if (key < 0)
		*o++ = '-';
	o = put_u(o, key < 0 ? -(uint64_t)(int64_t)key : (uint64_t)key);
	o = put_s(o, ",\"tid\":");
	o = put_u(o, thread_tid(c->f, l, th, e, c->named));
	uint32_t sf = 0;
	if (e->addr) {
		const char *sym = c->z ? symz_lookup(c->z, th->pid, e->ts, e->addr) : "";
		if ((sf = frame_of(&c->fr, key, e->addr, sym)) != 0) {
			o = put_s(o, ",\"sf\":");
			o = put_u(o, sf);
		}
	}
	if (e->len || e->trunc == POSIX_TRACE_TRUNCATED_RECORD || (e->addr && !sf))
		o = chrome_args(o, l, e, sys, sf);
	*o++ = '}';
	fwrite(c->line, 1, (size_t)(o - c->line), c->f);
	return 0;
}

/* The file's tail: the call sites met, as "stackFrames". */
static void chrome_frames(struct chrome *c)
{
	char buf[600];

	fputs("\n],\n\"stackFrames\":{", c->f);
	for (size_t i = 1; i <= c->fr.n; i++) {
		json_str(buf, sizeof buf, c->fr.text[i]);
		fprintf(c->f, "%s\n\"%zu\":{\"name\":%s}", i > 1 ? "," : "", i, buf);
		free(c->fr.text[i]);
	}
	fputs("}}\n", c->f);
}

int export_chrome(struct tlog *l, struct symz *z, struct spans *sp, FILE *f)
{
	struct chrome c = { .l = l, .z = z, .f = f, .t0 = l->first };
	struct progress p;
	struct tev e;
	int r;
	uint64_t nspans = 0;

	c.line = malloc(2 * TRACE_DATA_MAX * 6 + 4096);
	if (!c.line) {
		err_msg("out of memory");
		return 1;
	}
	chrome_head(&c);
	if (chrome_processes(&c)) {
		free(c.line);
		return 1;
	}
	c.named = calloc(l->nth + 1, sizeof *c.named);
	progress_begin(&p, "export chrome", l->nev);
	while ((r = tlog_next(l, &e)) > 0) {
		struct span_mark m;
		if (sp && spans_event(sp, l, &e, &m)) {
			r = -1;
			break;
		}
		if (sp && m.kind == SPAN_END)
			spans_chrome(f, sp, l, &m, e.thread, c.t0, ++nspans);
		if ((r = chrome_event(&c, &e)) < 0)
			break;
		if ((e.n & 1023) == 0)
			progress_update(&p, e.n);
	}
	chrome_frames(&c);
	progress_end(&p);
	for (unsigned i = 0; i < PT_NIDS; i++)
		free(c.jname[i]);
	free(c.fr.h);
	free(c.fr.text);
	free(c.line);
	free(c.named);
	return r < 0;
}
