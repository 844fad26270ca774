/*
 * objread.c -- the controller's side of the map of loaded code: taking
 * the entries the traced processes wrote into a stream's segment (each
 * checked: the traced process can write anything there).  The posixtrace
 * command gets them through pt_ext_objects() (api/ext.c).  A stream
 * written to a log drops the entries of processes gone once the log has
 * them (pt_objs_retire): a recorder of a service that forks for days
 * keeps the entries of the processes alive, not of every child it saw
 * (and each type's latest description); and the identities of the
 * threads alive, not of every thread a pool made.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "reader.h"

_Static_assert(PT_EXT_OBJ_PATH == PT_OBJ_PATH && PT_EXT_OBJ_BID_MAX == PT_OBJ_BID_MAX &&
               PT_EXT_OBJ_BEGIN == PT_OBJ_BEGIN && PT_EXT_OBJ_ADD == PT_OBJ_ADD &&
               PT_EXT_OBJ_DEL == PT_OBJ_DEL && PT_EXT_OBJ_TRUNC == PT_OBJ_F_TRUNC &&
               PT_EXT_OBJ_CONT == PT_OBJ_F_CONT &&
               PT_EXT_OBJ_THREAD == PT_OBJ_THREAD && PT_EXT_OBJ_TYPE == PT_OBJ_TYPE &&
               PT_EXT_OBJ_PROC == PT_OBJ_PROC && PT_EXT_OBJ_FORK == PT_OBJ_FORK &&
               PT_EXT_THREAD_NAME == PT_THREAD_NAME && PT_EXT_TYPE_DESC == PT_TYPE_DESC &&
               PT_TYPE_DESC <= PT_OBJ_PATH && PT_NIDS == __TRACE_EVENT_ID_LIMIT,
               "ext.h and layout.h agree");

static struct pt_ext_obj *push(struct pt_reader *rd)
{
	if (rd->nobjs == rd->objs_cap) {
		size_t ncap = rd->objs_cap ? 2 * rd->objs_cap : 64;
		struct pt_ext_obj *n = realloc(rd->objs, ncap * sizeof *n);
		if (!n)
			return NULL;
		rd->objs = n, rd->objs_cap = ncap;
	}
	return &rd->objs[rd->nobjs];
}

/* Entry i, if complete and sound, into out.  0: taken (or bad: skipped
 * for good); 1: not complete yet. */
static int take(struct pt_stream *t, uint32_t i, struct pt_ext_obj *out, int *ok)
{
	const struct pt_obj *src = &t->view.objs[i % PT_OBJ_SLOTS];
	struct pt_obj o;

	*ok = 0;
	if (atomic_load_explicit(&src->ready, memory_order_acquire) != PT_OBJ_TAG(i))
		return 1; /* (or the ring's last lap's, not taken yet) */
	/* word by word: the traced process may be writing it still */
	pt_get_bytes((unsigned char *)&o, (const pt_word *)src, sizeof o);
	o.path[sizeof o.path - 1] = 0;
	int meta = o.kind == PT_OBJ_THREAD || o.kind == PT_OBJ_TYPE || o.kind == PT_OBJ_PROC;
	if (o.kind == PT_OBJ_FORK) { /* the parent's pid, nothing else */
		if (o.pid <= 0 || !o.lo || o.lo > INT32_MAX || o.lo == (uint64_t)o.pid || o.hi ||
		    o.base || o.bid_len || o.flags || o.path[0])
			return 0;
	} else if (meta ? !pt_ext_meta_ok(o.kind, o.lo, o.hi, strlen(o.path), o.bid_len) ||
	                      (o.flags & ~(o.kind == PT_OBJ_PROC ? PT_OBJ_F_TRUNC | PT_OBJ_F_CONT : 0u)) ||
	                      o.pid <= 0
	                : o.kind < PT_OBJ_BEGIN || o.kind > PT_OBJ_DEL ||
	                      o.bid_len > PT_OBJ_BID_MAX || (o.flags & ~PT_OBJ_F_TRUNC) ||
	                      o.pid <= 0 || (o.kind != PT_OBJ_BEGIN && o.lo >= o.hi)) {
		return 0;
	}
	memset(out, 0, sizeof *out);
	int64_t ns = pt_clock_ns(&t->clk, o.tick);
	out->ts = ns > 0 ? (uint64_t)ns : 0;
	out->base = o.base;
	out->lo = o.lo;
	out->hi = o.hi;
	out->pid = o.pid;
	out->kind = o.kind;
	out->bid_len = o.bid_len;
	out->flags = o.flags;
	memcpy(out->bid, o.bid, o.bid_len);
	memcpy(out->path, o.path, strlen(o.path) + 1);
	*ok = 1;
	return 0;
}

size_t pt_objs_collect(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	size_t first = rd->nobjs;

	if (t->kind != PT_KIND_STREAM || !t->view.objs)
		return first;
	uint32_t end = atomic_load_explicit(&t->hdr->obj_next, memory_order_acquire);
	if (end - rd->obj_first > PT_OBJ_SLOTS) /* (a lie: writers wait for us) */
		end = rd->obj_first + PT_OBJ_SLOTS;
	/* the ring's entries from the first not taken yet on; bit s of
	 * obj_taken: slot s's entry is taken */
	for (uint32_t i = rd->obj_first; i != end; i++) {
		int ok;
		struct pt_ext_obj *o;
		uint32_t s = i % PT_OBJ_SLOTS;
		if (rd->obj_taken[s / 64] >> (s % 64) & 1)
			continue;
		if (!(o = push(rd)) || take(t, i, o, &ok))
			continue;
		rd->obj_taken[s / 64] |= 1ull << (s % 64);
		rd->nobjs += ok;
	}
	/* their slots go back to the writers, in order; an entry never
	 * completed (its writer was killed writing it) would hold the ring
	 * for ever, so it is stepped over once it has kept it 1 s */
	while (rd->obj_first != end) {
		uint32_t s = rd->obj_first % PT_OBJ_SLOTS;
		if (!(rd->obj_taken[s / 64] >> (s % 64) & 1)) {
			uint64_t now = pt_mono_ns();
			if (rd->obj_stuck != rd->obj_first + 1ull) {
				rd->obj_stuck = rd->obj_first + 1ull;
				rd->obj_stuck_since = now;
				break;
			}
			if (now - rd->obj_stuck_since < 1000000000u)
				break;
		}
		rd->obj_taken[s / 64] &= ~(1ull << (s % 64));
		rd->obj_first++;
	}
	atomic_store_explicit(&t->hdr->obj_done, rd->obj_first, memory_order_release);
	/* entries that found the area full: said when the count grows, at
	 * most 64 times (the traced process could make it grow for ever) */
	uint64_t lost = atomic_load_explicit(&t->hdr->obj_lost, memory_order_relaxed);
	struct pt_ext_obj *o;
	if (lost > rd->obj_lost && rd->obj_nlost < 64 && (o = push(rd))) {
		rd->obj_nlost++;
		memset(o, 0, sizeof *o);
		int64_t ns = pt_clock_ns(&t->clk, pt_now());
		o->ts = ns > 0 ? (uint64_t)ns : 0;
		o->kind = PT_EXT_OBJ_LOST;
		o->pid = t->pid;
		o->lo = lost;
		rd->obj_lost = lost;
		rd->nobjs++;
	}
	return first;
}

/* pid is gone: no process has it (one that reused it keeps its entries:
 * kept too long, never dropped too soon). */
static int pid_gone(int32_t pid)
{
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* Thread tid of live process pid is gone: its identity (a THREAD entry)
 * need not stay once the log has it (a service's pool makes a thread
 * every few ms: issue 54).  A tid used again is a new thread, with an
 * entry of its own. */
static int thread_gone(int32_t pid, uint64_t tid)
{
	return pid > 0 && tid > 0 && tid <= INT32_MAX &&
	       syscall(SYS_tgkill, pid, (pid_t)tid, 0) != 0 && errno == ESRCH;
}

static int by_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The pids of the chunks of the stream in use (open, sealed, busy),
 * sorted, into held (nchunks entries); how many. */
static size_t held_pids(const struct pt_stream *t, int32_t *held)
{
	const struct pt_view *v = &t->view;
	size_t n = 0;

	for (uint32_t i = 0; i < v->nchunks; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		if (PT_SS_STATE(atomic_load_explicit(&ck->ss, memory_order_acquire)) != PT_CK_FREE)
			held[n++] = atomic_load_explicit(&ck->pid, memory_order_relaxed);
	}
	qsort(held, n, sizeof *held, by_pid);
	return n;
}

/* A thread whose chunks the stream still holds sealed (a thread seals
 * its chunks as it ends), and the earliest of them: its events are still
 * to be read, so the identity it had then stays.  The C library gives a
 * new thread the handle (pthread_t) of one that ended, so a handle names
 * a run of threads one after another, each with its entry: the entries
 * kept are the last one given before the earliest chunk held (its
 * thread's) and those after; keep_from is that entry's time. */
struct sealer { int32_t pid; uint64_t thread; int64_t min_ns, keep_from; };

static int by_sealer(const void *a, const void *b)
{
	const struct sealer *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->thread > y->thread) - (x->thread < y->thread);
}

static size_t sealers(struct pt_stream *t, struct sealer *s)
{
	const struct pt_view *v = &t->view;
	size_t n = 0, out = 0;

	for (uint32_t i = 0; i < v->nchunks; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		unsigned st = PT_SS_STATE(atomic_load_explicit(&ck->ss, memory_order_acquire));
		if (st == PT_CK_FREE || st == PT_CK_OPEN)
			continue;
		s[n++] = (struct sealer){ atomic_load_explicit(&ck->pid, memory_order_relaxed),
		                          atomic_load_explicit(&ck->thread, memory_order_relaxed),
		                          pt_clock_ns(&t->clk, atomic_load_explicit(&ck->base_ts,
		                                                                    memory_order_relaxed)),
		                          INT64_MIN };
	}
	qsort(s, n, sizeof *s, by_sealer);
	for (size_t i = 0; i < n; i++) { /* one each, its earliest chunk */
		if (out && !by_sealer(&s[out - 1], &s[i]))
			s[out - 1].min_ns = s[i].min_ns < s[out - 1].min_ns ? s[i].min_ns : s[out - 1].min_ns;
		else
			s[out++] = s[i];
	}
	for (size_t i = 0; i < t->rd.nobjs; i++) {
		const struct pt_ext_obj *o = &t->rd.objs[i];
		struct sealer k = { o->pid, o->base, 0, 0 }, *f;
		if (o->kind == PT_EXT_OBJ_THREAD && (f = bsearch(&k, s, out, sizeof *s, by_sealer)) &&
		    (int64_t)o->ts < f->min_ns && (int64_t)o->ts > f->keep_from)
			f->keep_from = (int64_t)o->ts;
	}
	return out;
}

/* Process pid holds a chunk of the stream now (open, sealed, busy). */
static int holds_chunk(const struct pt_stream *t, int32_t pid)
{
	const struct pt_view *v = &t->view;

	for (uint32_t i = 0; i < v->nchunks; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		if (PT_SS_STATE(atomic_load_explicit(&ck->ss, memory_order_acquire)) != PT_CK_FREE &&
		    atomic_load_explicit(&ck->pid, memory_order_relaxed) == pid)
			return 1;
	}
	return 0;
}

/* Process pid's events may still be in the stream: it held a chunk when
 * held was looked at (nheld pids, sorted; NULL: not a stream), or holds
 * one now (a process that took its first chunk after that look and ended
 * before being asked about, a child recording a few events, holds its
 * events in the stream all the same; once gone it takes no chunk, so a
 * look after the question is the answer). */
static int held_by(const struct pt_stream *t, const int32_t *held, size_t nheld, int32_t pid)
{
	return held && (bsearch(&pid, held, nheld, sizeof *held, by_pid) != NULL ||
	                holds_chunk(t, pid));
}

/* The pids whose map a kept process's map is made of: a forked child's map
 * is its parent's as it was (a FORK entry, lo: the parent), so a child
 * whose entries stay keeps its parent's map entries too, and theirs in
 * turn (a child still in the stream after the parent ended: a log cut
 * into parts writes the child's events into the next part, whose map
 * must give their code; tests/cli_rotate_procs).  Sorted into *out (NULL
 * and 0 when there is none or no memory: then nothing more is kept).
 * Whether a process's entries stay is asked here once a FORK entry, as
 * the caller asks it once a process. */
static size_t map_parents(const struct pt_reader *rd, const int32_t *held, size_t nheld,
                          const struct pt_stream *t, int32_t **out)
{
	size_t n = 0, cap = 0;
	int32_t *need = NULL;

	*out = NULL;
	for (int grew = 1; grew;) { /* (to a fixed point: a chain of forks) */
		grew = 0;
		for (size_t i = 0; i < rd->nobjs; i++) {
			const struct pt_ext_obj *o = &rd->objs[i];
			if (o->kind != PT_EXT_OBJ_FORK || o->lo == 0 || o->lo > INT32_MAX)
				continue;
			int32_t parent = (int32_t)o->lo;
			if (n && bsearch(&parent, need, n, sizeof *need, by_pid))
				continue;
			int stays = !pid_gone(o->pid) || held_by(t, held, nheld, o->pid) ||
			            (n && bsearch(&o->pid, need, n, sizeof *need, by_pid));
			if (!stays)
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				int32_t *nn = realloc(need, ncap * sizeof *nn);
				if (!nn) {
					free(need);
					return 0;
				}
				need = nn, cap = ncap;
			}
			need[n++] = parent;
			qsort(need, n, sizeof *need, by_pid);
			grew = 1;
		}
	}
	*out = need;
	return n;
}

static int map_kind(unsigned kind)
{
	return kind == PT_EXT_OBJ_BEGIN || kind == PT_EXT_OBJ_ADD || kind == PT_EXT_OBJ_DEL ||
	       kind == PT_EXT_OBJ_FORK;
}

/* Each event type's latest description, whoever gave it, stays (latest[id]:
 * its index + 1): a process may record a type it never described, and a
 * reader decodes its payloads by another's description of the type
 * (cli/read/tracetypes.c), so a log or a part begun after the describer
 * ended needs it all the same.  Bounded by the types, not the processes. */
static size_t retire(struct pt_stream *t, size_t upto, int unheld, int now)
{
	struct pt_reader *rd = &t->rd;
	size_t out = 0, dropped = 0, nheld = 0, kept_held = 0;
	int32_t last = 0, *held = NULL;
	int last_gone = 0, last_held = 0;
	uint32_t latest[PT_NIDS];
	struct sealer *seal = NULL;
	size_t nseal = 0;

	if (upto > rd->nobjs)
		upto = rd->nobjs;
	if (!now && (rd->nobjs < rd->obj_retire_at || (upto < 64 && !unheld)))
		return 0;
	/* what a chunk still in the stream names stays: its events are still
	 * to be read, and a log cut into parts writes them into the next
	 * part, which must name them too (tests/cli_rotate_procs) */
	if (t->kind == PT_KIND_STREAM) {
		held = malloc((t->view.nchunks + 1) * sizeof *held);
		seal = malloc((t->view.nchunks + 1) * sizeof *seal);
		if (!held || !seal) {
			free(held);
			free(seal);
			return 0;
		}
		nheld = held_pids(t, held);
		nseal = sealers(t, seal);
	}
	int32_t *parents = NULL;
	size_t nparents = map_parents(rd, held, nheld, t, &parents);
	memset(latest, 0, sizeof latest);
	for (size_t i = 0; i < rd->nobjs; i++) {
		const struct pt_ext_obj *o = &rd->objs[i];
		if (o->kind == PT_EXT_OBJ_TYPE && o->lo < PT_NIDS &&
		    (!latest[o->lo] || rd->objs[latest[o->lo] - 1].ts <= o->ts))
			latest[o->lo] = (uint32_t)i + 1;
	}
	int saved = errno;
	for (size_t i = 0; i < rd->nobjs; i++) {
		const struct pt_ext_obj *o = &rd->objs[i];
		if (i < upto || (unheld && o->kind != PT_EXT_OBJ_LOST)) {
			/* (a process's entries come together: one look each) */
			if (o->pid != last || i == 0) {
				last = o->pid;
				last_gone = pid_gone(o->pid);
				last_held = last_gone && held_by(t, held, nheld, last);
			}
			int keep_type = o->kind == PT_EXT_OBJ_TYPE && o->lo < PT_NIDS &&
			                latest[o->lo] == i + 1;
			/* a parent's map, while a child's stays */
			int parent = last_gone && !last_held && map_kind(o->kind) && nparents &&
			             bsearch(&o->pid, parents, nparents, sizeof *parents, by_pid);
			struct sealer k = { o->pid, o->base, 0, 0 }, *f = NULL;
			if ((last_gone && !last_held && !keep_type && !parent) ||
			    (i < upto && o->kind == PT_EXT_OBJ_THREAD && !last_gone &&
			     thread_gone(o->pid, o->lo) &&
			     (!nseal || !(f = bsearch(&k, seal, nseal, sizeof *seal, by_sealer)) ||
			      (int64_t)o->ts < f->keep_from))) {
				rd->obj_retired[o->kind & 15]++;
				dropped += i < upto;
				continue;
			}
			kept_held += last_held || parent; /* (to look again: they go later) */
		}
		if (out != i)
			rd->objs[out] = *o;
		out++;
	}
	free(held);
	free(seal);
	free(parents);
	errno = saved;
	rd->nobjs = out;
	memset(rd->obj_cur_i, 0, sizeof rd->obj_cur_i); /* (positions moved) */
	memset(rd->obj_cur_k, 0, sizeof rd->obj_cur_k);
	/* the next pass when the entries have doubled; or, if some were kept
	 * only while the stream holds their events (a recorder behind the
	 * program: they go once read), after 64 more than the others */
	size_t rest = out - kept_held;
	rd->obj_retire_at = kept_held ? out + (rest > 64 ? rest : 64)
	                              : 2 * out > 256 ? 2 * out : 256;
	if (rd->objs_cap > 64 && rd->objs_cap > 4 * out) { /* the memory back */
		size_t ncap = out > 32 ? 2 * out : 64;
		struct pt_ext_obj *n = realloc(rd->objs, ncap * sizeof *n);
		if (n)
			rd->objs = n, rd->objs_cap = ncap;
	}
	return dropped;
}

size_t pt_objs_retire(struct pt_stream *t, size_t upto)
{
	return retire(t, upto, 0, 0);
}

size_t pt_objs_retire_now(struct pt_stream *t, size_t upto)
{
	return retire(t, upto, 0, 1);
}

size_t pt_objs_retire_unheld(struct pt_stream *t, size_t upto)
{
	return retire(t, upto, 1, 0);
}
