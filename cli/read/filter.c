/*
 * filter.c -- the events a reading command keeps, one set of options for
 * show, stats, export, live and view: which processes and threads (by pid,
 * by the PID/TID show prints, by kernel TID, by thread name, by pthread_t),
 * which event types (globs), and --where on the payload's typed fields
 * (where.c).  A thread is named by the identities the trace carries
 * (threads.c): a kernel TID and a name, each valid from when the thread
 * said it; one whose name changed, or whose pthread_t a later thread
 * reused, is judged event by event, by its identity at that time.
 *
 * Memory: a byte per event type and per thread, whatever the events.
 */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "read.h"

const char filter_help[] =
"\nFilters (each given must pass; a list of values: any of them):\n"
"      --pid PID[,PID...]      these processes\n"
"      --thread T[,T...]       these threads, each as show prints it (PID/TID),\n"
"                              a kernel TID, a thread name (a glob: 'worker-*')\n"
"                              or a pthread_t (0x7f...: as info lists it)\n"
"      --tid TID[,TID...]      the threads with these kernel TIDs (gettid())\n"
"      --name GLOB[,GLOB...]   the threads named so (pthread_setname_np)\n"
"      --type GLOB[,GLOB...]   these event types ('job/*'; --event is the same)\n"
"      --exclude GLOB[,...]    not these event types\n"
"      --where EXPR            events whose typed payload fields match EXPR:\n"
"                              comparisons (== != < <= > >=) of a field with a\n"
"                              number or a \"string\" (a glob with == and !=),\n"
"                              joined by && and ||, negated by !, in ( );\n"
"                              e.g. 'status<0 && name==\"db-*\"'.  An event\n"
"                              without the field does not match.\n";

enum { S_PID, S_PIDTID, S_KTID, S_NAME, S_PTHREAD };

static int is_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int cur_opt; /* the option whose values thread_value() takes */

static int add_sel(struct evfilter *f, int kind, int32_t pid, uint64_t v, const char *s)
{
	if (f->nsel == FILTER_MAXSEL)
		return usage_error("more than %d thread and process values", FILTER_MAXSEL);
	f->sel[f->nsel++] = (struct tsel){ .kind = kind, .opt = cur_opt, .pid = pid, .v = v, .s = s };
	return 0;
}

/* One value of --pid (opt FILT_PID), --thread, --tid or --name. */
static int thread_value(struct evfilter *f, int opt, const char *v)
{
	char *end;
	unsigned long long x;

	cur_opt = opt;
	if (opt == FILT_NAME)
		return add_sel(f, S_NAME, 0, 0, v);
	if (opt == FILT_PID) {
		pid_t pid;
		if (parse_pid(v, &pid) && strcmp(v, "0"))
			return usage_error("--pid: '%s' is not a process id", v);
		return add_sel(f, S_PID, pid, 0, NULL);
	}
	if (opt == FILT_TID) {
		if (!is_digits(v) || strlen(v) > 10)
			return usage_error("--tid: '%s' is not a kernel thread id (the number after the "
			                   "PID/ that show prints; a pthread_t goes to --thread)", v);
		return add_sel(f, S_KTID, 0, strtoull(v, NULL, 10), NULL);
	}
	/* --thread: PID/TID, a kernel TID, a pthread_t, or a name */
	const char *slash = strchr(v, '/');
	if (slash && slash > v && is_digits(slash + 1) && strlen(slash + 1) <= 10) {
		char pid_s[16];
		size_t pl = (size_t)(slash - v);
		pid_t pid;
		if (pl < sizeof pid_s) {
			memcpy(pid_s, v, pl);
			pid_s[pl] = 0;
			if (!parse_pid(pid_s, &pid) || !strcmp(pid_s, "0"))
				return add_sel(f, S_PIDTID, !strcmp(pid_s, "0") ? 0 : pid,
				               strtoull(slash + 1, NULL, 10), NULL);
		}
	}
	if (is_digits(v) && strlen(v) <= 10)
		return add_sel(f, S_KTID, 0, strtoull(v, NULL, 10), NULL);
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X') && v[2]) {
		x = strtoull(v, &end, 16);
		if (*end)
			return usage_error("--thread: '%s' is not a pthread_t (hex)", v);
		return add_sel(f, S_PTHREAD, 0, x, NULL);
	}
	return add_sel(f, S_NAME, 0, 0, v);
}

int filter_option(struct evfilter *f, int opt, const char *arg)
{
	f->on = 1;
	if (opt == FILT_WHERE) {
		char err[240];
		if (f->where)
			return usage_error("--where: one expression (join them with &&)");
		if (!(f->where = where_parse(arg, err, sizeof err)))
			return usage_error("--where: %s", err);
		return 0;
	}
	if (f->nstrs == (int)(sizeof f->strs / sizeof f->strs[0]))
		return usage_error("too many filter options");
	char *copy = strdup(arg), *save = NULL;
	if (!copy) {
		err_msg("out of memory");
		return 1;
	}
	f->strs[f->nstrs++] = copy;
	int any = 0;
	for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		any = 1;
		if (opt == FILT_TYPE || opt == FILT_EXCLUDE) {
			const char **v = opt == FILT_TYPE ? f->types : f->excl;
			int *n = opt == FILT_TYPE ? &f->ntypes : &f->nexcl;
			if (*n == FILTER_MAXSEL)
				return usage_error("more than %d event types", FILTER_MAXSEL);
			v[(*n)++] = s;
		} else if (thread_value(f, opt, s)) {
			return EXIT_USAGE;
		}
	}
	if (!any)
		return usage_error("an empty list of values");
	return 0;
}

void filter_free(struct evfilter *f)
{
	for (int i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	where_free(f->where);
	free(f->th_ok);
	memset(f, 0, sizeof *f);
}

int filter_threads(const struct evfilter *f)
{
	return f->nsel > 0;
}

/* ------------------------------------------------------------ threads */
/* Whether one value names a thread of process pid (number idx in it,
 * pthread_t pt) whose identity is id (NULL: the trace does not say). */
static int sel_hit(const struct tsel *s, int32_t pid, unsigned idx, uint64_t pt,
                   const struct pt_ext_thread *id)
{
	switch (s->kind) {
	case S_PID: return pid == s->pid;
	case S_PIDTID:
		/* what show prints: PID/TID, or PID/N for a thread the trace does not name */
		return pid == s->pid && (id && id->tid > 0 ? (uint64_t)id->tid == s->v : idx == s->v);
	case S_KTID: return id && id->tid > 0 && (uint64_t)id->tid == s->v;
	case S_PTHREAD: return pt == s->v && pid != 0;
	default: return id && glob_match(s->s, id->name, strlen(id->name));
	}
}

/* Whether a thread with identity id passes: each kind of value given has
 * one that names it (--pid, then the thread's own, then --name). */
static int thread_pass(const struct evfilter *f, int32_t pid, unsigned idx, uint64_t pt,
                       const struct pt_ext_thread *id)
{
	int need[4] = { 0, 0, 0, 0 }, got[4] = { 0, 0, 0, 0 };

	for (int i = 0; i < f->nsel; i++) {
		const struct tsel *s = &f->sel[i];
		int g = s->opt - FILT_PID; /* --pid, --thread, --tid, --name */
		if (g < 0 || g > 3)
			continue;
		need[g] = 1;
		got[g] |= sel_hit(s, pid, idx, pt, id);
	}
	for (int g = 0; g < 4; g++)
		if (need[g] && !got[g])
			return 0;
	return 1;
}

static int thread_state(const struct evfilter *f, const struct tlog *l, uint32_t t)
{
	const struct tthread *th = &l->th[t];
	const struct pt_ext_thread *id = NULL;
	size_t n = thrmap_ids(l->thrs, th->pid, th->tid, &id);

	if (th->pid == 0) /* the trace's own lane: no identity */
		n = 0;
	if (!n)
		return thread_pass(f, th->pid, th->idx, th->tid, NULL);
	int yes = 0, no = 0;
	for (size_t i = 0; i < n; i++)
		*(thread_pass(f, th->pid, th->idx, th->tid, &id[i]) ? &yes : &no) += 1;
	return yes && no ? 2 : yes ? 1 : 0;
}

static int thread_ok(struct evfilter *f, const struct tlog *l, const struct tev *e)
{
	if (!f->nsel)
		return 1;
	if (e->thread >= l->nth)
		return 0;
	if (e->thread >= f->nth_ok) {
		size_t cap = l->nth + 16;
		signed char *p = realloc(f->th_ok, cap);
		if (!p)
			return 1; /* (out of memory: kept, rather than lost) */
		memset(p + f->nth_ok, -1, cap - f->nth_ok);
		f->th_ok = p;
		f->nth_ok = cap;
	}
	signed char *st = &f->th_ok[e->thread];
	if (*st < 0) {
		const struct tthread *th = &l->th[e->thread];
		const struct pt_ext_thread *id;
		int s = thread_state(f, l, e->thread);
		/* live: a thread that has not said who it is yet may still */
		if (f->live && s == 0 && !thrmap_ids(l->thrs, th->pid, th->tid, &id))
			return 0;
		*st = (signed char)s;
	}
	if (*st < 2)
		return *st;
	const struct tthread *th = &l->th[e->thread];
	return thread_pass(f, th->pid, th->idx, th->tid, thrmap_find(l->thrs, th->pid, th->tid, e->ts));
}

/* ------------------------------------------------------------ types */
int filter_type(struct evfilter *f, const struct tlog *l, unsigned id)
{
	if (!f->ntypes && !f->nexcl)
		return 1;
	if (id >= PT_NIDS)
		return !f->ntypes;
	if (f->type_ok[id])
		return f->type_ok[id] == 1;
	char tmp[32];
	const char *nm = tlog_name(l, id, tmp, sizeof tmp);
	int ok = !f->ntypes;
	for (int i = 0; i < f->ntypes && !ok; i++)
		ok = glob_match(f->types[i], nm, strlen(nm));
	for (int i = 0; i < f->nexcl && ok; i++)
		ok = !glob_match(f->excl[i], nm, strlen(nm));
	if (!f->live) /* (live: a type's name may come later) */
		f->type_ok[id] = ok ? 1 : 2;
	return ok;
}

/* ------------------------------------------------------------ where */
int where_get_typed(void *arg, const char *field, struct where_val *v)
{
	const struct where_typed *g = arg;

	for (size_t i = 0; i < g->n; i++) {
		const struct typed_at *a = &g->at[i];
		if (strcmp(a->f.name, field))
			continue;
		const unsigned char *p = g->d + a->off;
		memset(v, 0, sizeof *v);
		uint64_t u = 0;
		switch (a->f.type) {
		case PT_EXT_F_STRING:
			v->kind = WV_STR;
			v->s = (const char *)p;
			v->n = a->len;
			return 0;
		case PT_EXT_F_BYTES:
			return -1;
		case PT_EXT_F_F32: { float x; memcpy(&x, p, 4); v->kind = WV_FLOAT; v->f = x; return 0; }
		case PT_EXT_F_F64: { double x; memcpy(&x, p, 8); v->kind = WV_FLOAT; v->f = x; return 0; }
		default: break;
		}
		switch (a->f.size) {
		case 1: { uint8_t x; memcpy(&x, p, 1); u = x; break; }
		case 2: { uint16_t x; memcpy(&x, p, 2); u = x; break; }
		case 4: { uint32_t x; memcpy(&x, p, 4); u = x; break; }
		default: memcpy(&u, p, 8); break;
		}
		if (a->f.type >= PT_EXT_F_I8 && a->f.type <= PT_EXT_F_I64) {
			unsigned sh = 64 - 8 * a->f.size;
			v->kind = WV_INT;
			v->i = sh ? (int64_t)(u << sh) >> sh : (int64_t)u;
		} else {
			v->kind = WV_UINT;
			v->u = u;
		}
		return 0;
	}
	return -1;
}

static int where_ok(struct evfilter *f, const struct tlog *l, const struct tev *e)
{
	if (!f->where)
		return 1;
	if (e->id >= PT_NIDS || !e->data)
		return 0;
	int32_t pid = e->thread < l->nth ? l->th[e->thread].pid : 0;
	if (f->types_of != (const void *)l->types) { /* (live: a new table) */
		memset(f->desc, 0, sizeof f->desc);
		f->types_of = l->types;
	}
	if (!f->desc[e->id] || f->desc_pid[e->id] != pid) {
		f->desc[e->id] = typemap_desc(l->types, pid, e->id);
		f->desc_pid[e->id] = pid;
	}
	const char *desc = f->desc[e->id];
	if (!desc)
		return 0;
	struct typed_at at[PT_EXT_FIELDS_MAX];
	struct where_typed g = { at, 0, e->data };
	if (typed_layout(desc, e->data, e->len, at, &g.n, NULL, 0))
		return 0; /* a payload that does not fit its description has no fields */
	return where_eval(f->where, where_get_typed, &g);
}

int filter_event(struct evfilter *f, const struct tlog *l, const struct tev *e)
{
	if (!f || !f->on)
		return 1;
	return filter_type(f, l, e->id) && thread_ok(f, l, e) && where_ok(f, l, e);
}

/* ------------------------------------------------------------ check */
struct fcheck { const struct tlog *l; const char *path; };

static int is_number_type(enum pt_ext_ftype t)
{
	return t != PT_EXT_F_STRING && t != PT_EXT_F_BYTES;
}

static int check_field(void *arg, const char *field, int op, const struct where_val *lit)
{
	const struct fcheck *c = arg;
	const struct typemap *m = c->l->types;
	char names[200] = "", tmp[32];
	size_t nl = 0;
	int found = 0;

	(void)op;
	for (size_t i = 0; i < typemap_count(m); i++) {
		const struct pt_ext_type *t = typemap_at(m, i);
		struct pt_ext_field fl[PT_EXT_FIELDS_MAX];
		size_t nf = 0;
		if (pt_ext_type_parse(t->desc, fl, PT_EXT_FIELDS_MAX, &nf, NULL))
			continue;
		for (size_t k = 0; k < nf; k++) {
			if (nl + strlen(fl[k].name) + 3 < sizeof names && !strstr(names, fl[k].name)) {
				nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "",
				                       fl[k].name);
			}
			if (strcmp(fl[k].name, field))
				continue;
			found = 1;
			const char *tn = tlog_name(c->l, t->id, tmp, sizeof tmp);
			if (fl[k].type == PT_EXT_F_BYTES) {
				err_msg("--where: field '%s' of '%s' is bytes, which do not compare", field, tn);
				return 1;
			}
			if (is_number_type(fl[k].type) != (lit->kind != WV_STR)) {
				err_msg("--where: field '%s' of '%s' is %s (%s): compare it with %s", field, tn,
				        is_number_type(fl[k].type) ? "a number" : "a string",
				        pt_ext_ftype_name(fl[k].type),
				        is_number_type(fl[k].type) ? "a number, not a string in quotes"
				                                   : "a \"string\" in quotes");
				return 1;
			}
		}
	}
	if (!found) {
		if (nl)
			err_msg("--where: no event type of %s has a field '%s' (its fields: %s)", c->path,
			        field, names);
		else
			err_msg("--where: no event type of %s has a field '%s' (no payload is described: "
			        "see posixtrace_eventid_describe(3))", c->path, field);
		return 1;
	}
	return 0;
}

int filter_check(struct evfilter *f, const struct tlog *l)
{
	char tmp[32];

	if (!f->on)
		return 0;
	for (int k = 0; k < f->ntypes + f->nexcl; k++) {
		const char *pat = k < f->ntypes ? f->types[k] : f->excl[k - f->ntypes];
		int found = 0;
		for (unsigned i = 0; i < PT_NIDS && !found; i++)
			if (l->names[i] || l->count[i] || posixtrace_eventid_system_name(i)) {
				const char *nm = tlog_name(l, i, tmp, sizeof tmp);
				found = glob_match(pat, nm, strlen(nm));
			}
		if (!found) {
			err_msg("%s: no event type '%s' in this log (see 'posixtrace info %s')", l->path, pat,
			        l->path);
			return 1;
		}
	}
	for (int k = 0; k < f->nsel; k++) {
		const struct tsel *s = &f->sel[k];
		int found = 0;
		for (size_t i = 0; i < l->nth && !found; i++) {
			const struct tthread *th = &l->th[i];
			const struct pt_ext_thread *id = NULL;
			size_t n = th->pid ? thrmap_ids(l->thrs, th->pid, th->tid, &id) : 0;
			found = sel_hit(s, th->pid, th->idx, th->tid, NULL) && !n;
			for (size_t j = 0; j < n && !found; j++)
				found = sel_hit(s, th->pid, th->idx, th->tid, &id[j]);
		}
		if (found)
			continue;
		switch (s->kind) {
		case S_PID:
			err_msg("%s: no events of process %d in this log (see 'posixtrace info %s')", l->path,
			        (int)s->pid, l->path);
			break;
		case S_PIDTID:
			err_msg("%s: no thread %d/%llu in this log (see 'posixtrace info %s')", l->path,
			        (int)s->pid, (unsigned long long)s->v, l->path);
			break;
		case S_KTID:
			err_msg("%s: no thread with kernel TID %llu in this log (see 'posixtrace info %s')",
			        l->path, (unsigned long long)s->v, l->path);
			break;
		case S_PTHREAD:
			err_msg("%s: no thread with pthread_t %#llx in this log (see 'posixtrace info %s')",
			        l->path, (unsigned long long)s->v, l->path);
			break;
		default:
			err_msg("%s: no thread named '%s' in this log (see 'posixtrace info %s')", l->path,
			        s->s, l->path);
		}
		return 1;
	}
	struct fcheck c = { l, l->path };
	if (f->where && where_fields(f->where, check_field, &c))
		return 1;
	return 0;
}
