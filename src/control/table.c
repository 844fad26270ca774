/*
 * table.c -- trace identifiers: the table of this process's trace ids
 * (streams it controls and logs it has opened); and what becomes of
 * trace ids at fork.  (Their locks: lock.h.)  A stream stays with the parent (its lock
 * and stream counts too), the child has none.  A log opened for reading
 * is the program's own, like its descriptor: the child keeps its copy
 * (the reader reads with pread(), at offsets of its own), unless a thread
 * was reading it at the fork.  So only a
 * process that made a stream has fork handlers: control/newstream.c asks for
 * them (pt_trid_fork_handlers()) before its first stream, and tells how
 * such a trace id is dropped; a process that only reads logs (the SQLite
 * extension's host, say) gets none.  (The traced side's own fork handling
 * is producer/lifecycle.c's; an INHERITED stream goes on recording the child.)
 *
 * A trace id is (generation << 8 | index): an id that was shut down or
 * closed is refused even after its entry is reused.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "control.h"

pthread_mutex_t pt_trid_table_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t pt_fork_gen;

static struct pt_trid trids[TRACE_SYS_MAX];
static uint32_t next_gen = 1;

static struct pt_trid *trid_alloc(void)
{
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++)
		if (!trids[i].in_use)
			return &trids[i];
	return NULL;
}

/* Is there a free entry (under pt_trid_table_lock)? */
int pt_trid_room(void)
{
	return trid_alloc() != NULL;
}

/* Entry i of the table, whatever its state (fork and exit handlers). */
struct pt_trid *pt_trid_at(unsigned i)
{
	return &trids[i];
}

trace_id_t pt_trid_id(const struct pt_trid *t)
{
	return (trace_id_t)(t->gen << 8 | (unsigned)(t - trids));
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&pt_trid_table_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&pt_trid_table_lock);
}

/* How a stream's trace id is dropped in a fork child (control/newstream.c's). */
static void (*stream_drop)(struct pt_trid *t);

static void atfork_child(void)
{
	pt_fork_gen++;
	/* taken by this thread in atfork_prepare: given back, as in the
	 * parent (made anew, ThreadSanitizer took it for still held, and a
	 * later lock by another thread of the child, at exit, for a double
	 * lock) */
	pthread_mutex_unlock(&pt_trid_table_lock);
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_trid *t = &trids[i];
		int held = atomic_load(&t->s.lock) != 0; /* by a thread the child lacks */
		atomic_store(&t->s.lock, 0);
		if (!t->in_use)
			continue;
		if (t->s.kind == PT_KIND_LOG && !held) {
			t->fork_gen = pt_fork_gen; /* the child's copy, still valid */
			continue;
		}
		if (t->lr) { /* a log in mid-read at the fork: the child has none */
			pt_logr_close(t->lr);
			free(t->lr);
			t->lr = NULL;
		} else if (stream_drop) {
			stream_drop(t);
		}
		t->s.hdr = NULL;
		t->s.tctl = NULL;
		t->in_use = 0;
	}
}

static void (*drop_wanted)(struct pt_trid *t);

static void fork_handlers_once(void)
{
	stream_drop = drop_wanted;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Before a process's first stream, outside every lock of ours (fork takes
 * the C library's lock of handlers, then runs atfork_prepare): from then
 * on a fork takes pt_trid_table_lock, and the child drops every stream
 * with drop.  Registered after producer/lifecycle.c's handlers (its
 * constructor), so a fork takes pt_trid_table_lock before the traced
 * side's resync lock, and the child's traced side is set up before its
 * trace ids are dropped. */
void pt_trid_fork_handlers(void (*drop)(struct pt_trid *t))
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	drop_wanted = drop;
	pthread_once(&once, fork_handlers_once);
}

int pt_trid_lock_any(trace_id_t trid, struct pt_trid **out)
{
	unsigned idx = (unsigned)trid & 0xffu, gen = (unsigned)trid >> 8;
	struct pt_trid *t;

	if (trid <= 0 || idx >= TRACE_SYS_MAX)
		return EINVAL;
	t = &trids[idx];
	pt_lock(&t->s.lock);
	if (!t->in_use || t->gen != gen || atomic_load(&t->dead) || t->fork_gen != pt_fork_gen) {
		pt_unlock(&t->s.lock);
		return EINVAL;
	}
	*out = t;
	return 0;
}

int pt_trid_lock(trace_id_t trid, struct pt_trid **out)
{
	int rc = pt_trid_lock_any(trid, out);

	if (rc == 0 && (*out)->s.kind != PT_KIND_STREAM) {
		pt_unlock(&(*out)->s.lock);
		return EINVAL; /* a log opened for reading, not a stream */
	}
	return rc;
}

/* A free entry of the table, locked, with a new id.  Under pt_trid_table_lock. */
struct pt_trid *pt_trid_new(int kind, trace_id_t *id)
{
	struct pt_trid *t = trid_alloc();

	if (!t)
		return NULL;
	pt_lock(&t->s.lock);
	memset(&t->s.rd, 0, sizeof t->s.rd);
	t->s.kind = kind;
	t->s.fd = t->sys_fd = t->slot = -1;
	t->s.hdr = NULL;
	t->s.tctl = NULL;
	t->s.fl = NULL;
	t->lr = NULL;
	t->status = NULL; /* the caller's */
	t->s.region_off = 0;
	t->typelist_pos = 0;
	t->noloss_ms = 0;
	t->fork_gen = pt_fork_gen;
	atomic_store(&t->dead, 0);
	t->gen = next_gen;
	next_gen = (next_gen + 1) & 0x7fffffu;
	if (!next_gen)
		next_gen = 1;
	t->in_use = 1;
	*id = (trace_id_t)(t->gen << 8 | (unsigned)(t - trids));
	return t;
}

/* Give the entry back (it is locked). */
void pt_trid_free(struct pt_trid *t)
{
	t->in_use = 0;
	pt_unlock(&t->s.lock);
}

void pt_trid_unlock(struct pt_trid *t)
{
	pt_unlock(&t->s.lock);
}
