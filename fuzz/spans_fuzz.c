/*
 * spans_fuzz.c -- libFuzzer target for the span engine (cli/enrich/spans.c):
 * the input is a sequence of events as a trace could hold them in any
 * order (a log is a trust boundary: a hostile or damaged one can hold
 * ends without begins, keys reused, gaps anywhere, timestamps going back).
 *
 * Input: the first byte picks --span options; then records of 4 bytes
 * and a payload: type (low 4 bits: one of 16 types, 6 of them span types
 * by the convention, 2 by --span, the gaps' OVERFLOW and RESUME, the
 * others plain), thread (0..63), a timestamp step (signed: the clock may
 * go back) and a payload length (0..15, its first byte the key).
 *
 * Checked: no crash, leak or undefined behaviour; every begin and end
 * event belongs to one span, complete or incomplete (2 complete +
 * incomplete <= begins + ends <= 2 (complete + incomplete)); a duration
 * is never negative (the histogram's min <= max); the depth of an event
 * is at most the begins of its thread; a keyed span's lane is free when
 * it begins (or, replacing a span of the same key, that span's), and its
 * paired end frees it (the Perfetto export's tracks rely on it).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../cli/enrich/enrich.h"

/* what spans.c needs from the rest of the command */
const char *prog_cmd = "spans_fuzz";
void err_msg(const char *fmt, ...) { (void)fmt; }
int usage_error(const char *fmt, ...) { (void)fmt; return EXIT_USAGE; }
const char *posixtrace_eventid_system_name(trace_event_id_t id)
{
	return id == POSIX_TRACE_OVERFLOW ? "posix_trace_overflow"
	     : id == POSIX_TRACE_RESUME ? "posix_trace_resume" : NULL;
}
const char *tlog_name(const struct tlog *l, unsigned id, char *buf, size_t cap)
{
	const char *sys = posixtrace_eventid_system_name((trace_event_id_t)id);
	snprintf(buf, cap, "event-%u", id);
	return id < PT_NIDS && l->names[id] ? l->names[id] : sys ? sys : buf;
}

/* every payload described as "k:u16, s:string" (spans keyed by a field:
 * --span ...,key=k or key=s; a payload that does not fit has no key) */
size_t typemap_count(const struct typemap *m) { (void)m; return 0; }
const struct pt_ext_type *typemap_at(const struct typemap *m, size_t i)
{
	(void)m, (void)i;
	return NULL;
}
const char *typemap_desc(const struct typemap *m, int32_t pid, unsigned id)
{
	(void)m, (void)pid, (void)id;
	return "k:u16, s:string";
}
int pt_typemap_set(unsigned id, const char *desc)
{
	(void)id, (void)desc;
	return 0;
}

const struct pt_ext_thread *thrmap_find(const struct thrmap *m, int32_t pid, uint64_t thread,
                                        uint64_t ts)
{
	(void)m, (void)pid, (void)thread, (void)ts;
	return NULL; /* (no thread identities) */
}

static const char *const type_names[16] = {
	"a/begin", "a/end", "b/begin", "b/end", "k/async-begin", "k/async-end",
	"in", "out", NULL /* OVERFLOW */, NULL /* RESUME */, "plain", "x/begin",
	"y/end", "other", "more", "last",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tlog l;
	static struct tthread th[64];
	struct span_args sa = { .n = 0 };
	struct spans *s;
	uint64_t begins = 0, ends = 0, depth_max[64] = { 0 };
	static uint8_t lane_open[32][2048]; /* per definition */

	if (size < 1)
		return 0;
	memset(&l, 0, sizeof l);
	for (unsigned i = 0; i < 16; i++)
		if (type_names[i])
			l.names[17 + i] = (char *)type_names[i];
	l.th = th;
	l.nth = 64;
	if (data[0] & 1)
		span_arg(&sa, "in,out");
	if (data[0] & 2)
		span_arg(&sa, "in,out,io,key");
	if (data[0] & 4)
		span_arg(&sa, "a/begin,out"); /* refused with the one above: a type in two spans */
	if (data[0] & 8)
		span_arg(&sa, (data[0] & 16) ? "other,more,om,key=k" : "other,more,om,key=s");
	if (spans_make(&sa, &s))
		return 0;
	memset(lane_open, 0, sizeof lane_open);
	uint64_t ts = 1000000;
	for (size_t o = 1; o + 4 <= size;) {
		unsigned t = data[o] & 15, thread = data[o + 1] & 63, len = data[o + 3] & 15;
		int8_t step = (int8_t)data[o + 2];
		o += 4;
		if (o + len > size)
			len = (unsigned)(size - o);
		struct tev e = { 0 };
		ts += (uint64_t)(int64_t)step * 1000;
		e.ts = ts;
		e.id = (uint16_t)(t == 8 ? POSIX_TRACE_OVERFLOW : t == 9 ? POSIX_TRACE_RESUME : 17 + t);
		e.thread = thread;
		e.data = data + o;
		e.len = len;
		o += len;
		struct span_mark m;
		if (spans_event(s, &l, &e, &m))
			abort();
		begins += m.kind == SPAN_BEGIN;
		ends += m.kind == SPAN_END || m.kind == SPAN_CUT;
		depth_max[thread] += m.kind == SPAN_BEGIN;
		if (m.kind != SPAN_BEGIN && m.depth > depth_max[thread])
			abort();
		if (m.kind != SPAN_NONE && spans_stat(s, m.def)->keyed &&
		    (m.kind == SPAN_BEGIN || m.paired)) {
			if (m.def >= 32 || m.lane >= 2048)
				abort(); /* (fewer definitions, and open spans, than that) */
			uint8_t *o = &lane_open[m.def][m.lane];
			if (m.kind == SPAN_BEGIN ? *o != m.replaced : !*o)
				abort();
			*o = m.kind == SPAN_BEGIN;
		}
	}
	spans_end(s);
	uint64_t complete = 0, incomplete = 0;
	for (size_t i = 0; i < spans_count(s); i++) {
		const struct span_stat *x = spans_stat(s, i);
		complete += x->h.n;
		incomplete += x->incomplete;
		if (x->h.n && x->h.min > x->h.max)
			abort();
	}
	if (2 * complete + incomplete > begins + ends || begins + ends > 2 * (complete + incomplete))
		abort();
	spans_free(s);
	return 0;
}
