/*
 * spans.c -- begin/end pairs of events, their durations, as a trace is
 * read one event at a time (docs/design.md, "Spans"; posixtrace(1),
 * SPANS).
 *
 * A definition pairs a begin type and an end type: by convention
 * NAME/begin with NAME/end (same thread) and NAME/async-begin with
 * NAME/async-end (keyed), or as --span BEGIN,END[,NAME][,key[=FIELD]]
 * says.  A type named by --span is that span's alone: a built-in span
 * that would have paired it with its partner does not exist, its partner
 * is a plain event, and spans_check() says so (never a silent takeover
 * that turns the partner's every event into an incomplete span).
 *
 * Same-thread spans: a stack of open spans per thread.  An end pairs with
 * the last begun open span of its definition on its thread (spans of one
 * definition nest, last begun first ended; spans of different definitions
 * may overlap); spans above it stay open.  Keyed spans: a table of open
 * spans by (definition, key), the key being the value of a described
 * field (key=FIELD: a number's value, a string's 64-bit FNV-1a hash), else
 * the first 8 bytes of the payload (zero-padded when shorter); they may
 * end on any thread of any process.  A begin or end without that field
 * (not described so, or not fitting its description) is incomplete.  A second begin with a key already open makes the first
 * incomplete (which end is whose cannot be told).
 *
 * Truth first: a duration is reported only for a begin and an end seen
 * with no lost-event gap between them.  At a gap (POSIX_TRACE_OVERFLOW,
 * POSIX_TRACE_RESUME, or a POSIX_TRACE_ERROR: a damaged stretch) every
 * open span is marked cut: it still takes its end (so nesting stays
 * right) but counts as incomplete.  An end with no open begin, a span
 * whose end is stamped before its begin, and every span still open when
 * the trace ends (its thread or process ended, or was killed, with it
 * open) count as incomplete.  Each incomplete span counts once.
 *
 * Memory: the open spans, a histogram and the 10 slowest per definition,
 * and per definition a counter per thread (its share of the thread's
 * time); never the events.
 */
#include <stdlib.h>
#include <string.h>
#include "enrich.h"

const char spans_help[] =
"      --span BEGIN,END[,NAME][,key[=FIELD]]\n"
"                   pair event types BEGIN and END as a span (besides the\n"
"                   NAME/begin, NAME/end convention, which gives up a type\n"
"                   --span names, with a note); ',key=FIELD': matched across\n"
"                   threads and processes by the value of the described\n"
"                   payload field FIELD; ',key': by the first 8 payload bytes\n";

enum { R_UNKNOWN, R_NONE, R_BEGIN, R_END };

struct open { uint64_t start; uint32_t def; uint32_t cut; };
struct tstack { struct open *o; uint32_t n, cap; int32_t ktid; };
struct kslot { uint64_t key, start, flow; uint32_t def, thread, lane; uint8_t used, cut; };
/* the lanes of a keyed definition: bit i of w set while lane i holds an
 * open span; end[i]: the latest end time of a span in lane i */
struct lanes { uint64_t *w, *end; size_t n; };

struct spans {
	struct span_stat *d;         /* SPAN_MAX of them, nd in use */
	size_t nd, nopt;             /* the first nopt from --span */
	uint8_t role[PT_NIDS];
	uint16_t rdef[PT_NIDS];
	struct tstack *ts;           /* per thread (tlog's index) */
	size_t nts;
	struct kslot *k;             /* open keyed spans */
	size_t kcap, kn;
	struct lanes *ln;            /* per definition (SPAN_MAX), keyed ones */
	uint64_t flows;              /* keyed spans begun: their flow numbers */
};

struct spans *spans_new(void)
{
	struct spans *s = calloc(1, sizeof *s);

	if (s && (!(s->d = calloc(SPAN_MAX, sizeof *s->d)) ||
	          !(s->ln = calloc(SPAN_MAX, sizeof *s->ln)))) {
		free(s->d);
		free(s);
		return NULL;
	}
	return s;
}

static void copy_name(char *dst, const char *src, size_t n)
{
	n = n > TRACE_EVENT_NAME_MAX ? TRACE_EVENT_NAME_MAX : n;
	memcpy(dst, src, n);
	dst[n] = 0;
}

int spans_option(struct spans *s, const char *arg)
{
	const char *part[5];
	size_t len[5], n = 0;
	const char *p = arg;

	for (;;) {
		const char *c = strchr(p, ',');
		if (n == 5)
			return usage_error("--span: '%s' has too many parts (BEGIN,END[,NAME][,key])", arg);
		part[n] = p;
		len[n] = c ? (size_t)(c - p) : strlen(p);
		n++;
		if (!c)
			break;
		p = c + 1;
	}
	int keyed = n >= 3 && len[n - 1] >= 3 && !memcmp(part[n - 1], "key", 3) &&
	            (len[n - 1] == 3 || part[n - 1][3] == '=');
	size_t named = n - (size_t)keyed;
	if (named < 2 || named > 3)
		return usage_error("--span: '%s' is not BEGIN,END[,NAME][,key[=FIELD]]", arg);
	const char *kf = keyed && len[n - 1] > 3 ? part[n - 1] + 4 : NULL;
	size_t kfl = kf ? len[n - 1] - 4 : 0;
	if (kf && (!kfl || kfl >= WHERE_FIELD_MAX))
		return usage_error("--span: '%s': key=FIELD needs a field name (at most %d characters)",
		                   arg, WHERE_FIELD_MAX - 1);
	for (size_t i = 0; i < named; i++)
		if (!len[i] || len[i] > TRACE_EVENT_NAME_MAX)
			return usage_error("--span: '%s': %s", arg,
			                   len[i] ? "a name is longer than an event type's"
			                          : "an empty name");
	if (len[0] == len[1] && !memcmp(part[0], part[1], len[0]))
		return usage_error("--span: '%s': the begin and end types must differ", arg);
	if (s->nd == SPAN_MAX)
		return usage_error("--span: more than %d spans", SPAN_MAX);
	struct span_stat *d = &s->d[s->nd];
	copy_name(d->begin, part[0], len[0]);
	copy_name(d->end, part[1], len[1]);
	for (size_t i = 0; i < s->nd; i++)
		if (!strcmp(s->d[i].begin, d->begin) || !strcmp(s->d[i].end, d->end) ||
		    !strcmp(s->d[i].begin, d->end) || !strcmp(s->d[i].end, d->begin))
			return usage_error("--span: '%s': a type may be in one span only", arg);
	if (named == 3) {
		copy_name(d->name, part[2], len[2]);
	} else {
		char nm[2 * TRACE_EVENT_NAME_MAX + 3];
		snprintf(nm, sizeof nm, "%s..%s", d->begin, d->end);
		copy_name(d->name, nm, strlen(nm));
	}
	d->keyed = keyed;
	if (kf) {
		memcpy(d->keyfield, kf, kfl);
		d->keyfield[kfl] = 0;
	}
	s->nd++;
	s->nopt = s->nd;
	return 0;
}

int span_arg(struct span_args *a, const char *arg)
{
	if (a->n == SPAN_MAX)
		return usage_error("--span: more than %d spans", SPAN_MAX);
	a->v[a->n++] = arg;
	return 0;
}

int spans_make(const struct span_args *a, struct spans **out)
{
	struct spans *s = spans_new();

	*out = NULL;
	if (!s) {
		err_msg("out of memory");
		return 1;
	}
	for (int i = 0; i < a->n; i++)
		if (spans_option(s, a->v[i])) {
			spans_free(s);
			return EXIT_USAGE;
		}
	*out = s;
	return 0;
}

static int type_known(const struct tlog *l, const char *name)
{
	char tmp[32];

	for (unsigned i = 0; i < PT_NIDS; i++)
		if ((l->names[i] || l->count[i] || posixtrace_eventid_system_name(i)) &&
		    !strcmp(tlog_name(l, i, tmp, sizeof tmp), name))
			return 1;
	return 0;
}

static int has_suffix(const char *s, size_t n, const char *suf, size_t *prefix);
static const char *const conv_suf[4] = { "/begin", "/end", "/async-begin", "/async-end" };

/* The --span definition that names type name, or -1. */
static int claimed(const struct spans *s, const char *name)
{
	for (size_t i = 0; i < s->nopt; i++)
		if (!strcmp(name, s->d[i].begin) || !strcmp(name, s->d[i].end))
			return (int)i;
	return -1;
}

/* For a type of the built-in convention, its partner ("job/end" for
 * "job/begin") into buf: 1, else 0. */
static int partner(const char *name, char *buf, size_t cap)
{
	size_t n = strlen(name), pre = 0;
	for (int k = 0; k < 4; k++)
		if (has_suffix(name, n, conv_suf[k], &pre)) {
			snprintf(buf, cap, "%.*s%s", (int)pre, name, conv_suf[k ^ 1]);
			return 1;
		}
	return 0;
}

/* Whether some description of type id (any process's) has field f. */
static int described_with(const struct tlog *l, unsigned id, const char *f, char *fields,
                          size_t cap)
{
	int found = 0;
	size_t o = 0;
	if (cap)
		fields[0] = 0;
	for (size_t i = 0; i < typemap_count(l->types); i++) {
		const struct pt_ext_type *t = typemap_at(l->types, i);
		struct pt_ext_field fl[PT_EXT_FIELDS_MAX];
		size_t nf = 0;
		if (t->id != id || pt_ext_type_parse(t->desc, fl, PT_EXT_FIELDS_MAX, &nf, NULL))
			continue;
		for (size_t k = 0; k < nf; k++) {
			found |= !strcmp(fl[k].name, f);
			if (o + strlen(fl[k].name) + 3 < cap && !strstr(fields, fl[k].name))
				o += (size_t)snprintf(fields + o, cap - o, "%s%s", o ? ", " : "", fl[k].name);
		}
	}
	return found;
}

int spans_check(const struct spans *s, const struct tlog *l)
{
	char tmp[32], other[TRACE_EVENT_NAME_MAX + 16], fields[200];

	for (size_t i = 0; i < s->nopt; i++)
		for (int k = 0; k < 2; k++) {
			const char *t = k ? s->d[i].end : s->d[i].begin;
			if (!type_known(l, t)) {
				err_msg("%s: --span: no event type '%s' in this log (see 'posixtrace info "
				        "%s')", l->path, t, l->path);
				return 1;
			}
			/* key=FIELD: each end must be described with it */
			if (s->d[i].keyfield[0]) {
				unsigned id = 0;
				for (unsigned j = 0; j < PT_NIDS; j++)
					if ((l->names[j] || l->count[j]) &&
					    !strcmp(tlog_name(l, j, tmp, sizeof tmp), t))
						id = j;
				if (!described_with(l, id, s->d[i].keyfield, fields, sizeof fields)) {
					err_msg("%s: --span: type '%s' has no field '%s' (%s%s)", l->path, t,
					        s->d[i].keyfield, fields[0] ? "its fields: " : "",
					        fields[0] ? fields : "its payloads are not described: see "
					                             "posixtrace_eventid_describe(3)");
					return 1;
				}
			}
			/* a type of the built-in convention: --span takes it, and its
			 * partner becomes a plain event; say so */
			if (partner(t, other, sizeof other) && claimed(s, other) < 0 &&
			    type_known(l, other))
				err_msg("note: --span %s,%s takes '%s' from the built-in span of '%s' and '%s': "
				        "'%s' is a plain event", s->d[i].begin, s->d[i].end, t, t, other,
				        other);
		}
	return 0;
}

static int has_suffix(const char *s, size_t n, const char *suf, size_t *prefix)
{
	size_t k = strlen(suf);
	if (n <= k || memcmp(s + n - k, suf, k))
		return 0;
	*prefix = n - k;
	return 1;
}

/* The role of type id: by --span, else by the convention. */
static void resolve(struct spans *s, const struct tlog *l, unsigned id)
{
	static const char *const suf[4] = { "/begin", "/end", "/async-begin", "/async-end" };
	char tmp[32];
	const char *name = tlog_name(l, id, tmp, sizeof tmp);
	size_t n = strlen(name), pre = 0;

	s->role[id] = R_NONE;
	for (size_t i = 0; i < s->nopt; i++)
		if (!strcmp(name, s->d[i].begin) || !strcmp(name, s->d[i].end)) {
			s->role[id] = strcmp(name, s->d[i].begin) ? R_END : R_BEGIN;
			s->rdef[id] = (uint16_t)i;
			return;
		}
	int k;
	for (k = 0; k < 4 && !has_suffix(name, n, suf[k], &pre); k++)
		;
	if (k == 4)
		return;
	char other[TRACE_EVENT_NAME_MAX + 16];
	if (partner(name, other, sizeof other) && claimed(s, other) >= 0)
		return; /* its partner is a --span's: a plain event (spans_check said so) */
	int keyed = k >= 2;
	size_t i;
	for (i = s->nopt; i < s->nd; i++)
		if (s->d[i].keyed == keyed && strlen(s->d[i].name) == pre &&
		    !memcmp(s->d[i].name, name, pre))
			break;
	if (i == s->nd) {
		if (s->nd == SPAN_MAX)
			return; /* (more span names than that: the others are plain events) */
		struct span_stat *d = &s->d[s->nd++];
		copy_name(d->name, name, pre);
		char t[TRACE_EVENT_NAME_MAX + 16];
		snprintf(t, sizeof t, "%s%s", d->name, suf[keyed ? 2 : 0]);
		copy_name(d->begin, t, strlen(t));
		snprintf(t, sizeof t, "%s%s", d->name, suf[keyed ? 3 : 1]);
		copy_name(d->end, t, strlen(t));
		d->keyed = keyed;
	}
	s->role[id] = (k & 1) ? R_END : R_BEGIN;
	s->rdef[id] = (uint16_t)i;
}

static uint64_t kmix(uint32_t def, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ (uint64_t)def * 0xc2b2ae3d27d4eb4full;
	return h ^ h >> 31;
}

static struct kslot *kfind(struct spans *s, uint32_t def, uint64_t key)
{
	if (!s->kcap)
		return NULL;
	for (size_t j = kmix(def, key) & (s->kcap - 1); s->k[j].used; j = (j + 1) & (s->kcap - 1))
		if (s->k[j].def == def && s->k[j].key == key)
			return &s->k[j];
	return NULL;
}

static int kinsert(struct spans *s, const struct kslot *v)
{
	if ((s->kn + 1) * 2 > s->kcap) {
		size_t ncap = s->kcap ? 2 * s->kcap : 64;
		struct kslot *n = calloc(ncap, sizeof *n);
		if (!n)
			return -1;
		for (size_t i = 0; i < s->kcap; i++)
			if (s->k[i].used) {
				size_t j = kmix(s->k[i].def, s->k[i].key) & (ncap - 1);
				while (n[j].used)
					j = (j + 1) & (ncap - 1);
				n[j] = s->k[i];
			}
		free(s->k);
		s->k = n;
		s->kcap = ncap;
	}
	size_t j = kmix(v->def, v->key) & (s->kcap - 1);
	while (s->k[j].used)
		j = (j + 1) & (s->kcap - 1);
	s->k[j] = *v;
	s->k[j].used = 1;
	s->kn++;
	return 0;
}

/* Removes slot x (linear probing: later slots of its run move back). */
static void kremove(struct spans *s, struct kslot *x)
{
	size_t m = s->kcap - 1, i = (size_t)(x - s->k), j = i;

	s->k[i].used = 0;
	for (;;) {
		j = (j + 1) & m;
		if (!s->k[j].used)
			break;
		size_t h = kmix(s->k[j].def, s->k[j].key) & m;
		/* j's entry may fill the hole at i unless its home lies in (i, j] */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		s->k[i] = s->k[j];
		s->k[j].used = 0;
		i = j;
	}
	s->kn--;
}

/* The lowest lane of definition def free since ts at least (its spans
 * then never overlap in time, even when a log's events are not in time
 * order across threads), now taken: 0.., or -1 out of memory.  (Lanes:
 * about as many as spans of def are open at once.) */
static int64_t lane_take(struct spans *s, uint32_t def, uint64_t ts)
{
	struct lanes *L = &s->ln[def];
	size_t i = 0;
	for (; i < L->n; i++) {
		uint64_t free = ~L->w[i];
		while (free) {
			unsigned b = (unsigned)__builtin_ctzll(free);
			if (L->end[i * 64 + b] <= ts) {
				L->w[i] |= 1ull << b;
				return (int64_t)(i * 64 + b);
			}
			free &= free - 1;
		}
	}
	size_t n = L->n ? 2 * L->n : 1;
	uint64_t *w = realloc(L->w, n * sizeof *w);
	if (w)
		L->w = w;
	uint64_t *end = w ? realloc(L->end, n * 64 * sizeof *end) : NULL;
	if (!end)
		return -1;
	L->end = end;
	memset(w + L->n, 0, (n - L->n) * sizeof *w);
	memset(end + L->n * 64, 0, (n - L->n) * 64 * sizeof *end);
	L->n = n;
	L->w[i] |= 1;
	return (int64_t)(i * 64);
}

static void lane_give(struct spans *s, uint32_t def, uint32_t lane, uint64_t ts)
{
	struct lanes *L = &s->ln[def];
	if (lane / 64 < L->n) {
		L->w[lane / 64] &= ~(1ull << lane % 64);
		L->end[lane] = ts > L->end[lane] ? ts : L->end[lane];
	}
}

static int complete(struct span_stat *d, uint64_t start, uint64_t dur, uint32_t thread)
{
	if (hist_add(&d->h, dur))
		return -1;
	if (d->nslow < SPAN_SLOWEST || dur > d->slow[d->nslow - 1].dur) {
		unsigned i = d->nslow < SPAN_SLOWEST ? d->nslow++ : SPAN_SLOWEST - 1;
		while (i && d->slow[i - 1].dur < dur) {
			d->slow[i] = d->slow[i - 1];
			i--;
		}
		d->slow[i] = (struct span_inst){ start, dur, thread };
	}
	return 0;
}

static int add_inside(struct span_stat *d, uint32_t thread, uint64_t dur)
{
	if (thread >= d->ninside) {
		size_t n = thread + 64;
		uint64_t *v = realloc(d->inside, n * sizeof *v);
		if (!v)
			return -1;
		memset(v + d->ninside, 0, (n - d->ninside) * sizeof *v);
		d->inside = v;
		d->ninside = n;
	}
	d->inside[thread] += dur;
	return 0;
}

/* Every open span: cut by a gap. */
static void cut_all(struct spans *s)
{
	for (size_t t = 0; t < s->nts; t++)
		for (uint32_t i = 0; i < s->ts[t].n; i++)
			s->ts[t].o[i].cut = 1;
	for (size_t j = 0; j < s->kcap; j++)
		s->k[j].cut = 1;
}

static int same_thread(struct tstack *st, struct span_stat *d, unsigned di,
                       int begin, const struct tev *e, struct span_mark *m)
{
	if (begin) {
		if (st->n == st->cap) {
			uint32_t ncap = st->cap ? 2 * st->cap : 8;
			struct open *o = realloc(st->o, ncap * sizeof *o);
			if (!o)
				return -1;
			st->o = o;
			st->cap = ncap;
		}
		m->kind = SPAN_BEGIN;
		m->depth = st->n;
		st->o[st->n++] = (struct open){ e->ts, di, 0 };
		return 0;
	}
	uint32_t j = st->n;
	while (j && st->o[j - 1].def != di)
		j--;
	if (!j) { /* an end with no begin */
		d->incomplete++;
		m->kind = SPAN_CUT;
		m->depth = st->n;
		return 0;
	}
	struct open o = st->o[--j];
	memmove(st->o + j, st->o + j + 1, (st->n - j - 1) * sizeof *st->o);
	st->n--;
	m->depth = j;
	m->paired = 1;
	m->start = o.start;
	if (o.cut || e->ts < o.start) {
		d->incomplete++;
		m->kind = SPAN_CUT;
		return 0;
	}
	m->kind = SPAN_END;
	m->start = o.start;
	m->thread = e->thread;
	m->dur = e->ts - o.start;
	uint32_t outer = 1;
	for (uint32_t i = 0; i < j && outer; i++)
		outer = st->o[i].def != di;
	if (complete(d, o.start, m->dur, e->thread) ||
	    (outer && add_inside(d, e->thread, m->dur)))
		return -1;
	return 0;
}

/* The key of e by field f of its description: 0 and *key, or -1 (no such
 * field, or a payload that does not fit its description). */
static int field_key(const struct tlog *l, const struct tev *e, const char *f, uint64_t *key)
{
	int32_t pid = e->thread < l->nth ? l->th[e->thread].pid : 0;
	const char *desc = e->data ? typemap_desc(l->types, pid, e->id) : NULL;
	struct typed_at at[PT_EXT_FIELDS_MAX];
	size_t n = 0;

	if (!desc || typed_layout(desc, e->data, e->len, at, &n, NULL, 0))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(at[i].f.name, f))
			continue;
		const unsigned char *p = e->data + at[i].off;
		if (at[i].f.size) { /* a number: its value (sign-extended), floats by their bits */
			uint64_t u = 0;
			int sgn = at[i].f.type >= PT_EXT_F_I8 && at[i].f.type <= PT_EXT_F_I64;
			memcpy(&u, p, at[i].f.size); /* (little-endian: the low bytes) */
			if (sgn && at[i].f.size < 8 && (u >> (8 * at[i].f.size - 1) & 1))
				u |= ~0ull << (8 * at[i].f.size);
			*key = u;
			return 0;
		}
		uint64_t h = 0xcbf29ce484222325ull; /* a string or bytes: FNV-1a */
		for (size_t k = 0; k < at[i].len; k++)
			h = (h ^ p[k]) * 0x100000001b3ull;
		*key = h;
		return 0;
	}
	return -1;
}

static int keyed(struct spans *s, const struct tlog *l, struct span_stat *d, unsigned di,
                 int begin, const struct tev *e, struct span_mark *m)
{
	uint64_t key = 0;
	if (d->keyfield[0]) {
		if (field_key(l, e, d->keyfield, &key)) { /* no key: it pairs with nothing */
			d->incomplete++;
			m->kind = SPAN_CUT; /* (a begin too: an incomplete span, unpaired) */
			return 0;
		}
	} else {
		unsigned char kb[8] = { 0 };
		if (e->len)
			memcpy(kb, e->data, e->len < 8 ? e->len : 8);
		memcpy(&key, kb, 8);
	}
	struct kslot *x = kfind(s, di, key);
	if (begin) {
		int64_t lane;
		if (x) { /* the same key begun again: the first cannot be told apart */
			d->incomplete++;
			lane = x->lane;          /* (the new one takes its lane) */
			m->replaced = 1;
			kremove(s, x);
		} else if ((lane = lane_take(s, di, e->ts)) < 0) {
			return -1;
		}
		m->kind = SPAN_BEGIN;
		m->lane = (uint32_t)lane;
		m->flow = ++s->flows;
		struct kslot v = { key, e->ts, m->flow, di, e->thread, (uint32_t)lane, 1, 0 };
		return kinsert(s, &v);
	}
	if (x) {
		m->paired = 1;
		m->lane = x->lane;
		m->start = x->start;
		m->flow = x->flow;
		lane_give(s, di, x->lane, e->ts > x->start ? e->ts : x->start);
	}
	if (!x || x->cut || e->ts < x->start) {
		d->incomplete++;
		m->kind = SPAN_CUT;
		if (x)
			kremove(s, x);
		return 0;
	}
	m->kind = SPAN_END;
	m->start = x->start;
	m->dur = e->ts - x->start;
	uint32_t th = m->thread = x->thread;
	kremove(s, x);
	return complete(d, m->start, m->dur, th);
}

int spans_event(struct spans *s, const struct tlog *l, const struct tev *e, struct span_mark *m)
{
	unsigned id = e->id;

	m->kind = SPAN_NONE;
	m->depth = 0;
	m->paired = m->replaced = 0;
	m->lane = 0;
	m->flow = 0;
	if (e->thread >= s->nts) {
		size_t n = e->thread + 64;
		struct tstack *t = realloc(s->ts, n * sizeof *t);
		if (!t)
			return -1;
		memset(t + s->nts, 0, (n - s->nts) * sizeof *t);
		s->ts = t;
		s->nts = n;
	}
	struct tstack *st = &s->ts[e->thread];
	if (id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME || id == POSIX_TRACE_ERROR) {
		cut_all(s);
		m->depth = st->n;
		return 0;
	}
	if (s->role[id] == R_UNKNOWN) {
		resolve(s, l, id);
		if (!l->names[id] && !posixtrace_eventid_system_name(id))
			s->role[id] = R_UNKNOWN; /* (live: its name may come later) */
	}
	if (s->role[id] != R_BEGIN && s->role[id] != R_END) {
		m->depth = st->n;
		return 0;
	}
	unsigned di = s->rdef[id];
	struct span_stat *d = &s->d[di];
	m->def = di;
	/* a trace that says who its threads were: a pthread_t given to a new
	 * thread (another kernel thread id) means the old one ended, with
	 * its open spans */
	const struct tthread *th = e->thread < l->nth ? &l->th[e->thread] : NULL;
	const struct pt_ext_thread *who = th ? thrmap_find(l->thrs, th->pid, th->tid, e->ts) : NULL;
	if (who) {
		if (st->ktid && who->tid != st->ktid) {
			for (uint32_t i = 0; i < st->n; i++)
				s->d[st->o[i].def].incomplete++;
			st->n = 0;
		}
		st->ktid = who->tid;
	}
	if (d->keyed) {
		m->depth = st->n;
		return keyed(s, l, d, di, s->role[id] == R_BEGIN, e, m);
	}
	return same_thread(st, d, di, s->role[id] == R_BEGIN, e, m);
}

void spans_end(struct spans *s)
{
	for (size_t t = 0; t < s->nts; t++) {
		for (uint32_t i = 0; i < s->ts[t].n; i++)
			s->d[s->ts[t].o[i].def].incomplete++;
		s->ts[t].n = 0;
	}
	for (size_t j = 0; j < s->kcap; j++)
		if (s->k[j].used) {
			s->d[s->k[j].def].incomplete++;
			s->k[j].used = 0;
		}
	s->kn = 0;
	for (size_t i = 0; i < s->nd; i++)
		if (s->ln[i].n) {
			memset(s->ln[i].w, 0, s->ln[i].n * sizeof *s->ln[i].w);
			memset(s->ln[i].end, 0, s->ln[i].n * 64 * sizeof *s->ln[i].end);
		}
}

unsigned spans_open(const struct spans *s, uint32_t thread)
{
	return thread < s->nts ? s->ts[thread].n : 0;
}

unsigned spans_open_def(const struct spans *s, uint32_t thread, unsigned i)
{
	return s->ts[thread].o[i].def;
}

int spans_any(struct spans *s, const struct tlog *l)
{
	int any = 0;
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (l->names[id] || l->count[id]) {
			if (s->role[id] == R_UNKNOWN)
				resolve(s, l, id);
			any |= s->role[id] == R_BEGIN || s->role[id] == R_END;
		}
	return any;
}

long spans_def_of(struct spans *s, const struct tlog *l, unsigned id)
{
	if (id >= PT_NIDS)
		return -1;
	if (s->role[id] == R_UNKNOWN)
		resolve(s, l, id);
	return s->role[id] == R_BEGIN || s->role[id] == R_END ? (long)s->rdef[id] : -1;
}

size_t spans_count(const struct spans *s)
{
	return s->nd;
}

const struct span_stat *spans_stat(const struct spans *s, size_t i)
{
	return &s->d[i];
}

void spans_free(struct spans *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nd; i++) {
		hist_free(&s->d[i].h);
		free(s->d[i].inside);
	}
	for (size_t i = 0; i < SPAN_MAX; i++) {
		free(s->ln[i].w);
		free(s->ln[i].end);
	}
	free(s->ln);
	for (size_t t = 0; t < s->nts; t++)
		free(s->ts[t].o);
	free(s->ts);
	free(s->k);
	free(s->d);
	free(s);
}
