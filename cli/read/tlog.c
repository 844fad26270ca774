/*
 * tlog.c -- a trace read as a stream of events through the public API:
 * posix_trace_open(), the attributes and status, the event-type list and
 * names, then one event at a time with posix_trace_getnext_event().
 * Nothing is kept of an event once the next is read: the tables grow
 * with processes, threads and event types, never with events.
 *
 * Threads get a small index per process (1, 2, ... in order of their first
 * event, as the writers' tables list them), stable for a given log
 * whatever is later filtered out: they are numbered from the totals
 * before the first event is given -- the log's summary, else the count
 * the library made of it when it opened it (pt_ext_log_census), else a
 * pass over all of it (tlog_scan) that goes back to the start with
 * posix_trace_rewind().
 *
 * A log that is not whole still reads: the reader returns each damaged
 * stretch as a POSIX_TRACE_ERROR event (data: EBADMSG), counted here, and
 * a log whose writer never finished it has no END block, which the loss
 * counts of src/ext.h reveal (no final count).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "read.h"

struct hslot { int32_t pid; uint32_t used; uint64_t tid, born; uint32_t idx; };

static uint64_t mix(int32_t pid, uint64_t tid, uint64_t born)
{
	uint64_t h = tid * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4full ^
	             born * 0x165667b19e3779f9ull;
	return h ^ h >> 29;
}

static int grow_hash(struct tlog *l)
{
	size_t ncap = l->hcap_ ? l->hcap_ * 2 : 256;
	struct hslot *n = calloc(ncap, sizeof *n), *o = l->hash_;

	if (!n)
		return -1;
	for (size_t i = 0; i < l->hcap_; i++)
		if (o[i].used) {
			size_t j = mix(o[i].pid, o[i].tid, o[i].born) & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = o[i];
		}
	free(o);
	l->hash_ = n;
	l->hcap_ = ncap;
	return 0;
}

/* process (pid, born) -> how many threads of it l->th holds: the count
 * (0 when new), NULL out of memory.  (A new thread's number in its process
 * came from a look through every thread before: a log of 30 000 forked
 * children took seconds.) */
struct pidn { int32_t pid; uint32_t n; uint64_t born; uint32_t used; };

static uint32_t *pid_threads(struct tlog *l, int32_t pid, uint64_t born)
{
	if ((l->npid_ + 1) * 2 > l->pncap_) {
		size_t ncap = l->pncap_ ? l->pncap_ * 2 : 256;
		struct pidn *n = calloc(ncap, sizeof *n), *o = l->pidn_;
		if (!n)
			return NULL;
		for (size_t i = 0; i < l->pncap_; i++)
			if (o[i].used) {
				size_t j = mix(o[i].pid, 0, o[i].born) & (ncap - 1);
				while (n[j].used)
					j = (j + 1) & (ncap - 1);
				n[j] = o[i];
			}
		free(o);
		l->pidn_ = n, l->pncap_ = ncap;
	}
	struct pidn *t = l->pidn_;
	size_t j = mix(pid, 0, born) & (l->pncap_ - 1);
	for (; t[j].used; j = (j + 1) & (l->pncap_ - 1))
		if (t[j].pid == pid && t[j].born == born)
			return &t[j].n;
	t[j] = (struct pidn){ pid, 0, born, 1 };
	l->npid_++;
	return &t[j].n;
}

/* The index of thread (pid, tid) at time ts, of the process pid named
 * then (births.c), made on first sight. */
static int thread_index(struct tlog *l, int32_t pid, uint64_t tid, uint64_t ts, uint32_t *out)
{
	const struct tthread *t = l->nth ? &l->th[l->last_th_] : NULL;
	if (t && t->pid == pid && t->tid == tid && ts >= t->born && ts < t->until) {
		*out = l->last_th_; /* most events: the thread of the one before */
		return 0;
	}
	uint64_t born = tlog_born(l, pid, ts);
	if ((l->nth + 1) * 2 > l->hcap_ && grow_hash(l))
		return -1;
	struct hslot *h = l->hash_;
	size_t j = mix(pid, tid, born) & (l->hcap_ - 1);
	for (; h[j].used; j = (j + 1) & (l->hcap_ - 1))
		if (h[j].pid == pid && h[j].tid == tid && h[j].born == born) {
			*out = l->last_th_ = h[j].idx;
			return 0;
		}
	if (l->nth % 64 == 0) {
		struct tthread *n = realloc(l->th, (l->nth + 64) * sizeof *n);
		if (!n)
			return -1;
		l->th = n;
	}
	uint32_t *np = pid_threads(l, pid, born);
	if (!np)
		return -1;
	unsigned idx = ++*np;
	l->th[l->nth] = (struct tthread){ .pid = pid, .tid = tid, .idx = idx, .first = UINT64_MAX,
	                                  .born = born, .until = tlog_born_next(l, pid, born) };
	h[j] = (struct hslot){ pid, 1, tid, born, (uint32_t)l->nth };
	*out = l->last_th_ = (uint32_t)l->nth++;
	return 0;
}

int tlog_thread(struct tlog *l, int32_t pid, uint64_t tid, uint64_t ts, uint32_t *out)
{
	return thread_index(l, pid, tid, ts, out);
}

void tlog_init(struct tlog *l)
{
	memset(l, 0, sizeof *l);
	l->fd_ = -1;
	l->first = UINT64_MAX;
	for (unsigned i = 0; i < PT_NIDS; i++)
		l->tfirst[i] = UINT64_MAX;
}

/* The totals of a first pass: one more event. */
static void count_event(struct tlog *l, uint32_t th, unsigned id, uint64_t ts)
{
	struct tthread *t = &l->th[th];

	l->nev++;
	l->count[id]++;
	t->count++;
	t->first = ts < t->first ? ts : t->first;
	t->last = ts > t->last ? ts : t->last;
	l->tfirst[id] = ts < l->tfirst[id] ? ts : l->tfirst[id];
	l->tlast[id] = ts > l->tlast[id] ? ts : l->tlast[id];
	l->first = ts < l->first ? ts : l->first;
	l->last = ts > l->last ? ts : l->last;
	l->overflows += id == POSIX_TRACE_OVERFLOW;
	l->errors += id == POSIX_TRACE_ERROR;
}

int tlog_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e)
{
	uint32_t th;

	e->ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	        (uint64_t)ev->posix_timestamp.tv_nsec;
	if (thread_index(l, ev->posix_pid, (uint64_t)ev->posix_thread_id, e->ts, &th))
		return -1;
	e->addr = (uint64_t)(uintptr_t)ev->posix_prog_address;
	e->data = data;
	e->len = (uint32_t)len;
	e->thread = th;
	e->id = (uint16_t)(ev->posix_event_id < PT_NIDS ? ev->posix_event_id : 0);
	e->trunc = (uint8_t)ev->posix_truncation_status;
	e->lost = tlog_note_loss(l, trid, ev);
	e->n = l->pass_n_++;
	if (!l->totals) /* (a later pass: the totals are known) */
		count_event(l, th, e->id, e->ts);
	return 0;
}

void tthread_waits(struct tthread *t, uint64_t n, uint64_t ns, uint64_t max)
{
	t->waits += n;
	t->wait_ns += ns;
	t->wait_max = max > t->wait_max ? max : t->wait_max;
}

void tlog_finish(struct tlog *l)
{
	free(l->pr);
	l->pr = NULL;
	l->npr = 0;
	free(l->pth);
	free(l->pth_at);
	l->pth = NULL, l->pth_at = NULL;
	/* (pid, born) -> its index + 1 in l->pr (a log of thousands of
	 * processes is not looked through for each thread) */
	size_t cap = 64, pcap = 0;
	while (cap < 2 * l->nth + 2)
		cap *= 2;
	struct { int32_t pid; uint32_t p; uint64_t born; } *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return;
	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *t = &l->th[i];
		size_t j = (size_t)(mix(t->pid, 0, t->born) & (cap - 1)), p;
		while (tab[j].p && (tab[j].pid != t->pid || tab[j].born != t->born))
			j = (j + 1) & (cap - 1);
		if (tab[j].p) {
			p = tab[j].p - 1;
		} else {
			if (l->npr == pcap) {
				pcap = pcap ? 2 * pcap : 64;
				struct tproc *n = realloc(l->pr, pcap * sizeof *n);
				if (!n) {
					free(tab);
					return;
				}
				l->pr = n;
			}
			p = l->npr;
			l->pr[l->npr++] = (struct tproc){ t->pid, 0, 0, UINT64_MAX, 0, t->born, t->until, 0 };
			tab[j].pid = t->pid, tab[j].born = t->born, tab[j].p = (uint32_t)l->npr;
		}
		struct tproc *q = &l->pr[p];
		q->nthreads++;
		q->count += l->th[i].count;
		q->first = l->th[i].first < q->first ? l->th[i].first : q->first;
		q->last = l->th[i].last > q->last ? l->th[i].last : q->last;
	}
	free(tab);
	if (l->npr) /* (an empty log: no array to sort) */
		qsort(l->pr, l->npr, sizeof *l->pr, tproc_cmp);
	for (size_t p = 1; p < l->npr; p++) /* (births.c, the exports' pids) */
		l->pr[p].rank = l->pr[p - 1].pid == l->pr[p].pid ? l->pr[p - 1].rank + 1 : 0;
	for (size_t i = 0; i < l->nth; i++) {
		const struct tproc *q = tlog_proc_born(l, l->th[i].pid, l->th[i].born);
		l->th[i].proc = q ? (uint32_t)(q - l->pr) : (uint32_t)l->npr; /* (npr: none) */
	}
	/* each process's threads (TLOG_PROC_THREADS): counted, then placed */
	l->pth = malloc((l->nth + 1) * sizeof *l->pth);
	l->pth_at = calloc(l->npr + 2, sizeof *l->pth_at);
	if (!l->pth || !l->pth_at) { /* (then tlog_proc_thread looks through them all) */
		free(l->pth), free(l->pth_at);
		l->pth = NULL, l->pth_at = NULL;
		return;
	}
	for (size_t i = 0; i < l->nth; i++)
		l->pth_at[l->th[i].proc + 1]++;
	for (size_t p = 0; p < l->npr; p++)
		l->pth_at[p + 1] += l->pth_at[p];
	for (size_t i = 0; i < l->nth; i++)
		l->pth[l->pth_at[l->th[i].proc]++] = (uint32_t)i;
	for (size_t p = l->npr; p > 0; p--) /* (each one's start again) */
		l->pth_at[p] = l->pth_at[p - 1];
	l->pth_at[0] = 0;
}

/* The recorder's process: the one that wrote the trace's first
 * POSIX_TRACE_START (the controller starts the stream), none of whose
 * threads the trace names (the library names a traced program's threads)
 * and that wrote no more events than the trace has system events.  A
 * program that traces itself writes its own START but names its threads
 * and writes its own events: it is never the recorder.  A later part of a
 * recording (no START of its own): the recorder of the parts before
 * (l->front.recorder), if it is here as a recorder would be.  0: none. */
int tlog_proc_thread(const struct tlog *l, size_t p, size_t *k, size_t *i)
{
	if (l->pth_at) {
		if (*k >= l->pth_at[p + 1] - l->pth_at[p])
			return 0;
		*i = l->pth[l->pth_at[p] + (*k)++];
		return 1;
	}
	while (*k < l->nth) /* (no index: memory ran out for it) */
		if (l->th[(*k)++].pid == l->pr[p].pid && l->th[*k - 1].born == l->pr[p].born) {
			*i = *k - 1;
			return 1;
		}
	return 0;
}

static int32_t recorder_pid(const struct tlog *l)
{
	uint64_t nsys = 0;
	int32_t found = 0, hint = l->front.recorder;

	for (unsigned id = 0; id < PT_NIDS; id++)
		if (posixtrace_eventid_system_name(id))
			nsys += l->count[id];
	if (!l->count[POSIX_TRACE_START]) {
		/* a later part of a recording (parts.c): the recorder an
		 * earlier part had, if it is here as a recorder would be */
		const struct tproc *q = hint > 0 ? tlog_proc(l, hint, l->first) : NULL;
		if (!q || q->count > nsys)
			return 0;
		for (size_t i = 0; i < l->nth; i++)
			if (l->th[i].pid == hint && l->thrs &&
			    thrmap_find(l->thrs, hint, l->th[i].tid, l->th[i].first))
				return 0;
		return hint;
	}
	/* each process that could be the recorder: one of its threads wrote
	 * the START (bit 0), none said who it is (bit 1); one look at each
	 * thread (l->th[i].proc, tlog_finish: a look through every thread
	 * for each process took seconds on a log of 30 000 children) */
	unsigned char *fl = l->npr ? calloc(l->npr, 1) : NULL;
	if (!fl)
		return 0;
	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *t = &l->th[i];
		const struct tproc *q = t->proc < l->npr ? &l->pr[t->proc] : NULL;
		if (!q || q->pid != t->pid || q->pid <= 0 || q->count > nsys)
			continue;
		if (t->first == l->tfirst[POSIX_TRACE_START])
			fl[t->proc] |= 1;
		if (!(fl[t->proc] & 2) && l->thrs && thrmap_find(l->thrs, t->pid, t->tid, t->first))
			fl[t->proc] |= 2;
	}
	for (size_t p = 0; p < l->npr; p++)
		if (fl[p] == 1) {
			if (found) {
				found = 0; /* two candidates: hide neither */
				break;
			}
			found = l->pr[p].pid;
		}
	free(fl);
	return found;
}

/* After the totals: unless --all, the recorder's threads become the
 * trace's own writer (pid 0, thread 0: one lane, no process) and its
 * loaded objects leave the map (and its events their code address), its
 * identity (parent, command line) the process table; the events of later passes follow
 * (tlog_next). */
static void tlog_front(struct tlog *l)
{
	int32_t pid = recorder_pid(l);
	size_t n = 0, keep = SIZE_MAX;

	if (pid)
		l->tracer = pid;
	if (!pid || l->front.all)
		return;
	l->recorder = pid;
	/* one lane (0, 0): the recorder's threads and the reader's own events (losses) */
	struct tthread lane = { .idx = 1, .first = UINT64_MAX, .until = UINT64_MAX };
	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *t = &l->th[i];
		if (t->pid == pid || (t->pid == 0 && t->tid == 0)) {
			lane.count += t->count;
			lane.first = t->first < lane.first ? t->first : lane.first;
			lane.last = t->last > lane.last ? t->last : lane.last;
			tthread_waits(&lane, t->waits, t->wait_ns, t->wait_max);
		}
	}
	for (size_t i = 0; i < l->nth; i++) {
		if (l->th[i].pid == pid || (l->th[i].pid == 0 && l->th[i].tid == 0)) {
			if (keep != SIZE_MAX)
				continue;
			keep = n;
			l->th[n++] = lane;
			continue;
		}
		l->th[n++] = l->th[i];
	}
	l->nth = n;
	for (size_t i = n = 0; i < l->nobjs; i++)
		if (l->objs[i].pid != pid)
			l->objs[n++] = l->objs[i];
	l->nobjs = n;
	for (size_t i = n = 0; i < l->nprocs; i++) /* nor its parent and command line */
		if (l->procs[i].pid != pid)
			l->procs[n++] = l->procs[i];
	l->nprocs = n;
	memset(l->hash_, 0, l->hcap_ * sizeof(struct hslot)); /* the index again */
	struct hslot *h = l->hash_;
	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *t = &l->th[i];
		size_t j = mix(t->pid, t->tid, t->born) & (l->hcap_ - 1);
		while (h[j].used)
			j = (j + 1) & (l->hcap_ - 1);
		h[j] = (struct hslot){ t->pid, 1, t->tid, t->born, (uint32_t)i };
	}
	if (l->pidn_) /* (and the counts by pid: the recorder's are gone) */
		memset(l->pidn_, 0, l->pncap_ * sizeof(struct pidn));
	l->npid_ = 0;
	for (size_t i = 0; i < l->nth; i++) {
		uint32_t *np = pid_threads(l, l->th[i].pid, l->th[i].born);
		if (np)
			++*np;
	}
	l->last_th_ = 0;
	tlog_finish(l);
}

/* An option's lines in a help: the option at column 6, its text at col. */
static void help_item(FILE *f, int col, const char *opt, const char *const *text)
{
	int n = fprintf(f, "      %s", opt);
	for (int i = 0; text[i]; i++, n = 0)
		fprintf(f, "%*s%s\n", n < col ? col - n : (fputc('\n', f), col), "", text[i]);
}

void front_help(FILE *f, int col, int t0)
{
	static const char *const all[] = {
		"keep the recorder's own process: its events,",
		"threads and loaded code (else its events are",
		"the trace's, pid 0)", NULL };
	static const char *const when[] = {
		"time 0 of relative times: first (the program's",
		"first event, the default), trace (the trace's",
		"first event: the recorder's START), an event",
		"type NAME (its first event), or a TIME as show's",
		"--from takes it (seconds after the program's",
		"first event, a UTC time, @EPOCH)", NULL };

	help_item(f, col, "--all", all);
	if (t0)
		help_item(f, col, "--t0 WHEN", when);
}

int t0_parse(const char *s, struct t0_spec *out)
{
	memset(out, 0, sizeof *out);
	if (!strcmp(s, "first"))
		out->kind = T0_FIRST;
	else if (!strcmp(s, "trace"))
		out->kind = T0_TRACE;
	else if (parse_when(s, &out->w) == 0)
		out->kind = T0_TIME;
	else if (*s && strlen(s) <= TRACE_EVENT_NAME_MAX) {
		out->kind = T0_TYPE;
		strcpy(out->name, s);
	} else {
		return -1;
	}
	return 0;
}

uint64_t tlog_program_first(const struct tlog *l)
{
	uint64_t first = UINT64_MAX;

	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *t = &l->th[i];
		if (t->pid != 0 && t->pid != l->tracer && t->count && t->first < first)
			first = t->first;
	}
	return first == UINT64_MAX ? l->first : first;
}

int tlog_t0(const struct tlog *l, uint64_t *t0)
{
	const struct t0_spec *s = &l->front.t0;
	char tmp[32];

	switch (s->kind) {
	case T0_TRACE:
		*t0 = l->first;
		return 0;
	case T0_TIME:
		*t0 = when_ns(&s->w, tlog_program_first(l));
		return 0;
	case T0_TYPE:
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (l->count[id] && !strcmp(tlog_name(l, id, tmp, sizeof tmp), s->name)) {
				*t0 = l->tfirst[id];
				return 0;
			}
		err_msg("%s: --t0: no events of type '%s' in this log (see 'posixtrace info %s')",
		        l->path, s->name, l->path);
		return 1;
	default:
		*t0 = tlog_program_first(l);
		return 0;
	}
}

const char *t0_what(const struct tlog *l)
{
	switch (l->front.t0.kind) {
	case T0_TRACE: return "the trace's first event";
	case T0_TYPE: return "the first event of the type --t0 names";
	case T0_TIME: return "the time --t0 gives";
	default: /* (the recorder known, and nothing after its first event: no program events) */
		return l->tracer && tlog_program_first(l) == l->first
		               ? "the trace's first event: no program events"
		               : "the program's first event";
	}
}

int t0_live(const struct t0_spec *s, uint64_t ts, int32_t pid, int32_t self, uint64_t *t0)
{
	if (s->kind == T0_TRACE) { /* (asked until time 0 is known: the first event) */
		*t0 = ts;
		return 1;
	}
	if (s->kind == T0_TIME && s->w.absolute) {
		*t0 = s->w.ns;
		return 1;
	}
	if (pid == 0 || pid == self) /* the trace's own, or the reader's */
		return 0;
	*t0 = when_ns(&s->w, ts); /* (T0_FIRST: w is zero) */
	return 1;
}

void tlog_program_counts(const struct tlog *l, int32_t also, unsigned *procs, unsigned *threads)
{
	*procs = *threads = 0;
	for (size_t i = 0; i < l->npr; i++)
		if (l->pr[i].pid != 0 && l->pr[i].pid != also) {
			++*procs;
			*threads += l->pr[i].nthreads;
		}
}

/* l->procs in the order of (pid, time), entries of equal ones in the order
 * they came, so that tlog_identity() finds a pid's latest by a binary
 * search (a look through every entry for each process took seconds with
 * 30 000 forked children).  Out of memory: left as they are, and
 * tlog_identity() looks through them all. */
struct proc_key { int32_t pid; uint32_t i; uint64_t ts; };

static int cmp_proc_key(const void *a, const void *b)
{
	const struct proc_key *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

void tlog_sort_procs(struct tlog *l)
{
	size_t n = l->nprocs;
	struct proc_key *k = n > 1 ? malloc(n * sizeof *k) : NULL;
	struct pt_ext_proc *p = k ? malloc(n * sizeof *p) : NULL;

	if (!p) {
		free(k);
		l->procs_sorted_ = n <= 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct proc_key){ l->procs[i].pid, (uint32_t)i, l->procs[i].ts };
	qsort(k, n, sizeof *k, cmp_proc_key);
	for (size_t i = 0; i < n; i++)
		p[i] = l->procs[k[i].i];
	free(k);
	free(l->procs);
	l->procs = p;
	l->procs_sorted_ = 1;
}

/* The latest identity of process p: of its pid, stamped from its start
 * to the next process's (births.c). */
const struct pt_ext_proc *tlog_identity(const struct tlog *l, const struct tproc *p)
{
	const struct pt_ext_proc *best = NULL;
	int32_t pid = p->pid;
	if (l->procs_sorted_) { /* the last of pid's before the next start */
		size_t lo = 0, hi = l->nprocs;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (l->procs[mid].pid < pid ||
			    (l->procs[mid].pid == pid && l->procs[mid].ts < p->until))
				lo = mid + 1;
			else
				hi = mid;
		}
		best = lo ? &l->procs[lo - 1] : NULL;
		return best && best->pid == pid && best->ts >= p->born ? best : NULL;
	}
	for (size_t i = 0; i < l->nprocs; i++)
		if (l->procs[i].pid == pid && l->procs[i].ts >= p->born && l->procs[i].ts < p->until &&
		    (!best || l->procs[i].ts >= best->ts))
			best = &l->procs[i];
	return best;
}

/* The index in l->pr of i's parent, or -1 (none, or not in the trace):
 * the process its parent's pid named when it said who it was. */
static long tree_parent(const struct tlog *l, size_t i)
{
	const struct pt_ext_proc *id = tlog_identity(l, &l->pr[i]);
	const struct tproc *pp = id && id->ppid > 0 && id->ppid != l->pr[i].pid
	                         ? tlog_proc(l, id->ppid, id->ts) : NULL;
	return pp ? pp - l->pr : -1;
}

int tlog_tree(const struct tlog *l, size_t **orderp, unsigned **depthp)
{
	size_t n = l->npr, k = 0, sp = 0;
	long *parent = malloc((n + 1) * sizeof *parent);
	size_t *stack = malloc((n + 1) * sizeof *stack), *order = malloc((n + 1) * sizeof *order);
	unsigned *sdepth = malloc((n + 1) * sizeof *sdepth), *depth = malloc((n + 1) * sizeof *depth);

	*orderp = order;
	*depthp = depth;
	if (!parent || !stack || !sdepth || !order || !depth) {
		free(parent);
		free(stack);
		free(sdepth);
		free(order);
		free(depth);
		*orderp = NULL;
		*depthp = NULL;
		err_msg("out of memory");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		parent[i] = tree_parent(l, i);
	/* A cycle (pids reused) is cut where it is met: the first process
	 * (in pid order) whose line of parents never ends is a root.  Each
	 * walk stops at a process known to reach a root (mark 1), and marks
	 * those it went through so; a walk that comes back on itself (mark
	 * 2) cuts, and unmarks the rest.  (With sdepth as the marks, and
	 * stack as the walk: a look through every process for each one's
	 * children, and walks of n steps, took seconds with 30 000.) */
	unsigned *mark = sdepth;
	for (size_t i = 0; i < n; i++)
		mark[i] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		long p = (long)i;
		while (p >= 0 && mark[p] == 0) {
			mark[p] = 2, stack[len++] = (size_t)p;
			p = parent[p];
		}
		int loops = p >= 0 && mark[p] == 2;
		if (loops)
			parent[i] = -1;
		for (size_t q = 0; q < len; q++)
			mark[stack[q]] = loops && stack[q] != i ? 0 : 1;
	}
	/* each one's children, in pid order: next[] through order[] */
	long *head = malloc((n + 1) * sizeof *head), *next = NULL;
	if (!head || !(next = malloc((n + 1) * sizeof *next))) {
		free(head), free(parent), free(stack), free(sdepth), free(order), free(depth);
		*orderp = NULL, *depthp = NULL;
		err_msg("out of memory");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		head[i] = -1;
	for (size_t c = 0; c < n; c++) /* (each list: the last child first) */
		if (parent[c] >= 0)
			next[c] = head[parent[c]], head[parent[c]] = (long)c;
	/* depth first from each root (pid order); children in pid order */
	for (size_t r = 0; r < n; r++) {
		if (parent[r] >= 0)
			continue;
		stack[sp] = r, sdepth[sp++] = 0;
		while (sp) {
			size_t x = stack[--sp];
			unsigned d = sdepth[sp];
			order[k] = x, depth[k++] = d;
			for (long c = head[x]; c >= 0; c = next[c]) /* (the first comes out first) */
				stack[sp] = (size_t)c, sdepth[sp++] = d + 1;
		}
	}
	free(head);
	free(next);
	free(parent);
	free(stack);
	free(sdepth);
	return 0;
}

const char tlog_unfinished[] =
	"the log has no final status: the recording was cut short (killed, or the disk "
	"filled); events up to the last complete block are kept";
const char tlog_writing[] =
	"the log is being written (its recorder is running): read up to its last complete "
	"block when opened; its final status comes when the recording ends";

/* "stretches of the log could not be read (...)", after the count */
void tlog_damage_text(const struct tlog *l, char *buf, size_t cap)
{
	snprintf(buf, cap, "stretch%s of the log could not be read (%s a posix_trace_error event)",
	         l->damaged == 1 ? "" : "es", l->damaged == 1 ? "it is" : "each is");
}

void tlog_one_warn(const struct tlog *l)
{
	char text[120];

	if (l->unfinished)
		err_msg("%s: %s", l->path, l->writing ? tlog_writing : tlog_unfinished);
	if (l->damaged) {
		tlog_damage_text(l, text, sizeof text);
		err_msg("%s: %llu damaged %s", l->path, (unsigned long long)l->damaged, text);
	}
}

/* The format version in the header (docs/log-format.md: u16 at 12, in the
 * order of the byte-order mark at 8), 0 if unknown.  A version 1 log never
 * has a final loss count, finished or not: there we cannot tell. */
static unsigned log_version(int fd)
{
	unsigned char h[14];
	uint32_t bom;
	uint16_t v;

	if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, "PSXTRLOG", 8))
		return 0;
	memcpy(&bom, h + 8, 4);
	memcpy(&v, h + 12, 2);
	if (bom == 0x04030201u)
		v = (uint16_t)(v >> 8 | v << 8);
	else if (bom != 0x01020304u)
		return 0;
	return v;
}

static int is_damage(const struct posix_trace_event_info *ev, const void *data, size_t len)
{
	int e;

	if (ev->posix_event_id != POSIX_TRACE_ERROR || len != sizeof e)
		return 0;
	memcpy(&e, data, sizeof e);
	return e == EBADMSG;
}

static int fail(const char *path, const char *what, int rc)
{
	if (rc == EINVAL)
		err_msg("%s: not a posixtrace log (or damaged beyond reading): %s", path, what);
	else
		err_msg("%s: %s: %s", path, what, strerror(rc));
	return 1;
}

static int fetch_procs(trace_id_t trid, size_t from, void *out, size_t cap, size_t *n)
{
	return pt_ext_procs(trid, from, out, cap, n);
}

/* The map of loaded code the log carries. */
static int tlog_objects(struct tlog *l, trace_id_t trid)
{
	for (;;) {
		size_t n = 0, cap = l->nobjs + 256;
		struct pt_ext_obj *o = realloc(l->objs, cap * sizeof *o);
		if (!o)
			return ENOMEM;
		l->objs = o;
		if (pt_ext_objects(trid, l->nobjs, o + l->nobjs, cap - l->nobjs, &n) != 0 || n == 0)
			return 0;
		l->nobjs += n;
	}
}

static int open_failed(struct tlog *l, const char *what, int rc)
{
	fail(l->path, what, rc);
	tlog_one_free(l);
	return 1;
}

/* The file, open for reading (l made anew, to be read as f says): its
 * fd, or -1 after a message. */
static int open_file(struct tlog *l, const char *path, const struct tlog_front *f)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	tlog_init(l);
	if (f)
		l->front = *f;
	l->path = path;
	if (fd < 0) {
		err_msg("cannot open %s: %s%s", path, strerror(errno),
		        errno == ENOENT ? " (give the path of a log written by 'posixtrace record')"
		                        : "");
		return -1;
	}
	if (fstat(fd, &sb) == 0) {
		l->file_size = sb.st_size;
		if (!S_ISREG(sb.st_mode)) { /* the library would only say "not a log" */
			err_msg("%s: %s (give the path of a log written by 'posixtrace record')",
			        path, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int take_counts(struct tlog *l, const struct pt_ext_summary *s);

/* After l->procs and l->objs are read from the log on fd: in order, and
 * each process's start known (births.c; a log older than format 11 does
 * not say which PROC entries go on from one before: only its FORK entries
 * begin a process).  0, or -1 out of memory. */
static int procs_read(struct tlog *l, int fd)
{
	if (log_version(fd) < 11)
		for (size_t i = 0; i < l->nprocs; i++)
			l->procs[i].cont = 1;
	tlog_sort_procs(l);
	return tlog_births(l);
}

/* The totals from the summary the log carries (src/ext.h); with all (no
 * trace id open) also its attributes, status, names and map of loaded
 * code.  0, or -1: it has none. */
static int from_summary(struct tlog *l, int fd, int all)
{
	struct pt_ext_summary *s;

	if (pt_ext_log_summary(fd, &s) != 0)
		return -1;
	if (all) {
		l->attr = s->attr;
		l->st = s->status;
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (s->names[id][0] && (l->names[id] = strdup(s->names[id])))
				l->listed[id] = 1;
		if (s->nobjs) { /* (taken over, not copied: 504 bytes an entry) */
			l->objs = s->objs, l->nobjs = s->nobjs;
			s->objs = NULL, s->nobjs = 0;
		}
		/* (format 6) who the threads were, what the payloads hold */
		l->thrs = thrmap_from(s->threads, s->nthreads);
		l->types = typemap_from(s->types, s->ntypes);
		l->procs = s->procs, l->nprocs = s->nprocs;
		s->threads = NULL, s->types = NULL, s->procs = NULL; /* (taken over) */
		if (!l->thrs || !l->types || procs_read(l, fd)) {
			pt_ext_summary_free(s);
			return -1;
		}
	}
	if (take_counts(l, s)) {
		pt_ext_summary_free(s);
		return -1;
	}
	pt_ext_summary_free(s);
	l->summary = l->totals = 1;
	return 0;
}

/* The counts of s (a summary, or the census of the scan at open) as the
 * totals, then the threads by process and the recorder's (tlog_front).
 * 0, or -1 out of memory. */
static int take_counts(struct tlog *l, const struct pt_ext_summary *s)
{
	uint32_t th;

	/* a writer's count of two processes given one pid (births.c) is not
	 * theirs apart: then the events are read for the totals */
	for (size_t i = 0; i < s->nwriters; i++) {
		const struct pt_ext_sum_writer *w = &s->writers[i];
		if (w->count && tlog_born(l, w->pid, w->first) != tlog_born(l, w->pid, w->last)) {
			l->summary_merged = 1;
			return -1;
		}
	}
	for (size_t i = 0; i < s->nwriters; i++) {
		const struct pt_ext_sum_writer *w = &s->writers[i];
		if (thread_index(l, w->pid, w->thread, w->count ? w->first : 0, &th))
			return -1;
		/* (a writer may come twice: one whose process was gone, and
		 * another process given its pid since, by a recording that
		 * retired the first one; src/log/logsum.c) */
		l->th[th].count += w->count;
		l->th[th].first = w->first < l->th[th].first ? w->first : l->th[th].first;
		l->th[th].last = w->last > l->th[th].last ? w->last : l->th[th].last;
		if (s->waits_known)
			tthread_waits(&l->th[th], w->waits, w->wait_ns, w->wait_max);
	}
	l->waits_known = s->waits_known;
	memcpy(l->count, s->count, sizeof l->count);
	memcpy(l->tfirst, s->tfirst, sizeof l->tfirst);
	memcpy(l->tlast, s->tlast, sizeof l->tlast);
	l->nev = s->events;
	l->first = s->events ? s->first : 0;
	l->last = s->last;
	l->overflows = s->count[POSIX_TRACE_OVERFLOW];
	l->errors = s->count[POSIX_TRACE_ERROR];
	l->ngaps = s->gaps;
	l->lost_at = s->losses.at_resume;
	l->lost_stream = s->losses.at_resume;
	l->lost_final = s->losses.total_ok;
	if (s->losses.total_ok && s->losses.total > l->lost_stream)
		l->lost_stream = s->losses.total;
	l->log_overwritten = s->losses.log_overwritten;
	l->log_dropped = s->losses.log_dropped;
	l->lost_implausible = s->losses.implausible;
	tlog_finish(l);
	tlog_front(l);
	l->totals = 1;
	return 0;
}

/* The totals of a log with no summary, from the scan posix_trace_open()
 * did (pt_ext_log_census): as a summary would give them, and the reader's
 * error events and a missing final status as reading it would tell.  0,
 * or -1: not known (then a pass reads them). */
static int from_census(struct tlog *l)
{
	struct pt_ext_summary *s;
	uint64_t damaged = 0;

	if (pt_ext_log_census(l->trid_, &s, &damaged) != 0)
		return -1;
	int rc = take_counts(l, s);
	pt_ext_summary_free(s);
	if (rc)
		return -1;
	l->damaged = damaged;
	l->unfinished = !l->lost_final && log_version(l->fd_) >= 2;
	l->writing = l->unfinished && log_being_written(l->fd_);
	if (l->first == UINT64_MAX || !l->nev)
		l->first = 0;
	return 0;
}

int tlog_one_totals_as(struct tlog *l, const char *path, const struct tlog_front *f)
{
	int fd = open_file(l, path, f);

	if (fd < 0)
		return 1;
	posix_trace_attr_init(&l->attr);
	if (from_summary(l, fd, 1) == 0) {
		close(fd);
		return 0;
	}
	close(fd);
	tlog_one_free(l);
	return tlog_one_load_as(l, path, f);
}

int tlog_open(struct tlog *l, const char *path, const struct tlog_front *f)
{
	trace_id_t trid;
	int rc, fd = open_file(l, path, f);

	if (fd < 0)
		return 1;
	if ((rc = posix_trace_open(fd, &trid)) != 0) {
		close(fd);
		return fail(path, "posix_trace_open", rc);
	}
	l->trid_ = trid;
	l->fd_ = fd;
	l->open_ = 1;
	posix_trace_attr_init(&l->attr);
	if ((rc = posix_trace_get_attr(trid, &l->attr)) != 0 ||
	    (rc = posix_trace_get_status(trid, &l->st)) != 0)
		return open_failed(l, "reading the attributes", rc);
	for (;;) {
		trace_event_id_t id;
		int none;
		char name[TRACE_EVENT_NAME_MAX + 1];
		if (posix_trace_eventtypelist_getnext_id(trid, &id, &none) != 0 || none)
			break;
		if (id < PT_NIDS && posix_trace_eventid_get_name(trid, id, name) == 0) {
			l->listed[id] = 1;
			free(l->names[id]);
			l->names[id] = strdup(name);
		}
	}
	if ((rc = tlog_objects(l, trid)) != 0)
		return open_failed(l, "reading the map of loaded code", rc);
	if (!(l->thrs = thrmap_load(trid)) || !(l->types = typemap_load(trid)) ||
	    !(l->procs = ext_fetch_all(trid, sizeof *l->procs, fetch_procs, &l->nprocs)))
		return open_failed(l, "reading the thread identities and payload descriptions",
		                   ENOMEM);
	if (procs_read(l, fd))
		return open_failed(l, "reading the process identities", ENOMEM);
	if (!(l->many_ = malloc(sizeof *l->many_)))
		return open_failed(l, "reading events", ENOMEM);
	l->many_->n = l->many_at_ = 0;
	return 0;
}

/* After the last event of a pass that counts: the final counts. */
static void tlog_end(struct tlog *l)
{
	tlog_note_totals(l, l->trid_);
	l->unfinished = !l->lost_final && log_version(l->fd_) >= 2;
	l->writing = l->unfinished && log_being_written(l->fd_);
	tlog_finish(l);
	tlog_front(l);
	if (l->first == UINT64_MAX)
		l->first = 0;
	l->totals = 1;
}

/* Events read ahead and not given yet: a pass with them cannot be bounded
 * again, nor go on in batches (the library's reader is past them). */
static int ahead(const struct tlog *l)
{
	return l->many_ && l->many_at_ < l->many_->n;
}

/* The rest of a batch read ahead by tlog_one_next_batch: not given yet. */
static int stashed(const struct tlog *l)
{
	return l->stash_ && l->stash_at_ < l->stash_->n;
}

int tlog_one_next(struct tlog *l, struct tev *e)
{
	struct pt_ext_many *m = l->many_;
	int rc;

	if (!l->open_ || !m)
		return 0;
	if (stashed(l)) { /* (tlog_next after tlog_next_batch in one pass) */
		fail(l->path, "reading events", EINVAL);
		return -1;
	}
	if (l->many_at_ >= m->n) {
		l->many_at_ = 0;
		if ((rc = pt_ext_next_many(l->trid_, m)) != 0) {
			fail(l->path, "reading events", rc);
			return -1;
		}
	}
	if (!m->n) {
		if (!l->totals)
			tlog_end(l);
		return 0;
	}
	size_t i = l->many_at_++;
	struct posix_trace_event_info ev = m->ev[i];
	unsigned char *data = m->data + m->off[i];
	size_t len = m->len[i];
	if (l->recorder && ev.posix_pid == l->recorder) { /* the trace's own (tlog_front) */
		ev.posix_pid = 0;
		ev.posix_thread_id = 0;
		ev.posix_prog_address = NULL; /* in the recorder's code, not shown */
	}
	if (tlog_add(l, l->trid_, &ev, data, len, e)) {
		fail(l->path, "reading events", ENOMEM);
		return -1;
	}
	if (!l->totals)
		l->damaged += is_damage(&ev, data, len);
	return 1;
}

/* Writer w of a batch as a thread (the recorder's: the trace's lane). */
static int writer_thread(struct tlog *l, const struct pt_ext_bwriter *w, uint64_t ts, uint32_t *th)
{
	int32_t pid = w->pid;
	uint64_t tid = w->thread;

	if (l->recorder && pid == l->recorder) /* the trace's own (tlog_next) */
		pid = 0, tid = 0;
	return thread_index(l, pid, tid, ts, th);
}

/* Each writer of batch b as a thread (thread_of), when no process began
 * in the trace (births.c): every writer's process is its pid's only one.
 * 0, or -1 out of memory. */
static int batch_writers(struct tlog *l, const struct pt_ext_batch *b, uint32_t *thread_of)
{
	for (size_t w = 0; w < b->nw; w++)
		if (writer_thread(l, &b->w[w], 0, &thread_of[w]))
			return -1;
	return 0;
}

/* The next part of the batch read into l->stash_ (from l->stash_at_) into
 * b, with each of its writers as a thread (thread_of): up to a writer's
 * event of another process than its first event's (births.c: one given
 * the pid and pthread_t of one gone, in the same block of the log), whose
 * writer (pid, pthread_t) is two threads; b's writers are those of its
 * events.  Each event is copied once, whatever the cuts.  0, or -1 out
 * of memory. */
static int stash_part(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of)
{
	const struct pt_ext_batch *s = l->stash_;
	uint16_t to[PT_EXT_BATCH_W];
	size_t i = l->stash_at_;

	memset(to, 0xff, sizeof to);
	b->nw = b->n = 0;
	for (; i < s->n; i++) {
		struct pt_ext_bevent e = s->ev[i];
		if (to[e.w] == 0xffff) {
			if (writer_thread(l, &s->w[e.w], e.ts, &thread_of[b->nw]))
				return -1;
			b->w[b->nw] = s->w[e.w];
			to[e.w] = (uint16_t)b->nw++;
		} else {
			const struct tthread *t = &l->th[thread_of[to[e.w]]];
			if (e.ts < t->born || e.ts >= t->until)
				break; /* (not the first: i > l->stash_at_) */
		}
		e.w = to[e.w];
		b->ev[b->n++] = e;
	}
	l->stash_at_ = i;
	return 0;
}

int tlog_one_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of)
{
	int rc = 0;

	if (!l->open_)
		return 0;
	/* with processes that began in the trace (births.c), each batch is
	 * read into l->stash_ and given out in parts (stash_part); else as
	 * the library gives it */
	if (ahead(l)) /* (tlog_next_batch after tlog_next in one pass) */
		rc = EINVAL;
	else if (!l->nbirths_)
		rc = pt_ext_next_batch(l->trid_, b);
	else if (!stashed(l)) {
		if (!l->stash_ && !(l->stash_ = malloc(sizeof *l->stash_)))
			rc = ENOMEM;
		else if ((rc = pt_ext_next_batch(l->trid_, l->stash_)) != 0)
			l->stash_->n = 0;
		l->stash_at_ = 0;
	}
	if (rc != 0) {
		fail(l->path, "reading events", rc);
		return -1;
	}
	if (l->nbirths_ ? stash_part(l, b, thread_of) != 0 : batch_writers(l, b, thread_of) != 0) {
		fail(l->path, "reading events", ENOMEM);
		return -1;
	}
	if (!b->n) {
		if (!l->totals)
			tlog_end(l);
		return 0;
	}
	if (!l->totals) /* the first pass: what tlog_add() counts */
		for (size_t i = 0; i < b->n; i++) {
			const struct pt_ext_bevent *e = &b->ev[i];
			count_event(l, thread_of[e->w], e->id < PT_NIDS ? e->id : 0, e->ts);
			l->damaged += e->id == POSIX_TRACE_ERROR && (e->flags & PT_EXT_BEV_WORD) &&
			              e->word == EBADMSG; /* (is_damage) */
		}
	/* a loss count ends a batch: the pass's count, as tlog_note_loss()
	 * has it after that event */
	const struct pt_ext_bevent *last = &b->ev[b->n - 1];
	if (last->flags & PT_EXT_BEV_LOST) {
		struct posix_trace_event_info ev = { .posix_event_id = POSIX_TRACE_RESUME };
		(void)tlog_note_loss(l, l->trid_, &ev);
	}
	l->pass_n_ += b->n;
	return 1;
}

int tlog_scan(struct tlog *l)
{
	struct progress p;
	char what[300];
	int rc;

	if (l->totals)
		return 0;
	snprintf(what, sizeof what, "reading %s", l->path);
	progress_begin(&p, what, 0); /* (how many events, the log does not say) */
	/* in batches: the totals need no payload (tlog_next_batch) */
	struct pt_ext_batch *b = malloc(sizeof *b);
	uint32_t thread_of[PT_EXT_BATCH_W];
	uint64_t shown = 0;
	if (!b) {
		err_msg("%s: reading events: %s", l->path, strerror(ENOMEM));
		return 1;
	}
	while ((rc = tlog_one_next_batch(l, b, thread_of)) > 0)
		if (l->nev - shown >= 65536)
			progress_update(&p, shown = l->nev);
	free(b);
	p.done = l->nev;
	progress_end(&p);
	if (rc < 0)
		return 1;
	return tlog_one_rewind(l);
}

int tlog_one_rewind(struct tlog *l)
{
	int rc = posix_trace_rewind(l->trid_);

	if (rc)
		return fail(l->path, "going back to the start", rc);
	if (l->many_)
		l->many_at_ = l->many_->n = 0;
	if (l->stash_)
		l->stash_->n = 0;
	l->pass_n_ = 0; /* the next pass counts places again, nothing else */
	l->pass_at_ = 0;
	return 0;
}

int tlog_one_seek(struct tlog *l, uint64_t ts)
{
	uint64_t before = 0;
	int rc = pt_ext_seek(l->trid_, ts, &before);

	if (rc)
		return fail(l->path, "seeking in the log", rc);
	if (l->many_)
		l->many_at_ = l->many_->n = 0;
	if (l->stash_)
		l->stash_->n = 0;
	l->pass_at_ = before;
	l->pass_n_ = 0;
	return 0;
}

int tlog_one_until(struct tlog *l, uint64_t ts)
{
	/* (to the end, a pass begun may go on: what was read ahead comes
	 * first, as it would have; a bound set within it would not hold) */
	int rc = (ahead(l) || stashed(l)) && ts != UINT64_MAX ? EINVAL
	                                                      : pt_ext_seek_end(l->trid_, ts);

	return rc ? fail(l->path, "seeking in the log", rc) : 0;
}

int tlog_one_load_as(struct tlog *l, const char *path, const struct tlog_front *f)
{
	if (tlog_open(l, path, f))
		return 1;
	if (from_summary(l, l->fd_, 0) == 0 || from_census(l) == 0)
		return 0;
	if (tlog_scan(l)) {
		tlog_one_free(l);
		return 1;
	}
	return 0;
}

void tlog_one_free(struct tlog *l)
{
	if (l->open_)
		posix_trace_close(l->trid_);
	if (l->fd_ >= 0)
		close(l->fd_);
	for (unsigned i = 0; i < PT_NIDS; i++)
		free(l->names[i]);
	free(l->many_);
	free(l->th);
	free(l->pr);
	free(l->hash_);
	free(l->pidn_);
	free(l->pth);
	free(l->pth_at);
	free(l->objs);
	thrmap_free(l->thrs);
	typemap_free(l->types);
	free(l->procs);
	free(l->births_);
	free(l->stash_);
	posix_trace_attr_destroy(&l->attr);
	memset(l, 0, sizeof *l);
	l->fd_ = -1;
}

/* The name of type id: the log's, the standard one, or "event-ID". */
const char *tlog_name(const struct tlog *l, unsigned id, char *buf, size_t cap)
{
	if (id < PT_NIDS && l->names[id])
		return l->names[id];
	const char *s = posixtrace_eventid_system_name(id);
	if (s)
		return s;
	snprintf(buf, cap, "event-%u", id);
	return buf;
}
