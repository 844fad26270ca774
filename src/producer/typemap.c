/*
 * typemap.c -- the payload descriptions a program gave
 * (posixtrace_eventid_describe(), api/typedesc.c), kept in process memory
 * and written into every stream the process records into, in the area of
 * the map of loaded code (an entry of kind PT_OBJ_TYPE: the event id and
 * the description), so that a reader can decode the payloads by field.
 * A stream that reaches the process later gets them all when it is
 * mapped (attach.c), like the map of loaded code.
 *
 * The table is mapped at the first description (a program that describes
 * nothing pays nothing); entries are written under a try-lock and
 * published with a release store, so a resync in a signal handler reads
 * only whole descriptions and never waits.
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include "producer.h"

#define T_NONE  0u
#define T_VALID 1u
struct tdesc {
	_Atomic uint32_t state[PT_NIDS];
	char desc[PT_NIDS][PT_TYPE_DESC];
};
static struct tdesc *_Atomic tab;
static _Atomic int tab_lock;

int pt_typemap_set(unsigned id, const char *desc)
{
	struct tdesc *t = atomic_load_explicit(&tab, memory_order_acquire);
	size_t n = strnlen(desc, PT_TYPE_DESC);

	if (id >= PT_NIDS || n >= PT_TYPE_DESC)
		return EINVAL;
	while (atomic_exchange_explicit(&tab_lock, 1, memory_order_acquire))
		sched_yield();
	if (!t) {
		void *p = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		               -1, 0);
		if (p == MAP_FAILED) {
			atomic_store_explicit(&tab_lock, 0, memory_order_release);
			return ENOMEM;
		}
		t = p;
		atomic_store_explicit(&tab, t, memory_order_release);
	}
	/* a description replaced: readers of the table see it invalid while
	 * it is rewritten (a stream mapped meanwhile gets the new one from
	 * the write into every stream below) */
	atomic_store_explicit(&t->state[id], T_NONE, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(t->desc[id], desc, n + 1);
	atomic_store_explicit(&t->state[id], T_VALID, memory_order_release);
	atomic_store_explicit(&tab_lock, 0, memory_order_release);

	struct pt_obj o;
	memset(&o, 0, sizeof o);
	o.lo = id;
	memcpy(o.path, desc, n + 1);
	unsigned level = pt_enter(); /* the views stay mapped while we write */
	pt_objmap_put_all(&o, PT_OBJ_TYPE);
	pt_leave(level);
	return 0;
}

void pt_typemap_dump(struct pt_view *sl, int32_t pid)
{
	struct tdesc *t = atomic_load_explicit(&tab, memory_order_acquire);
	struct pt_obj o;
	uint64_t tick = pt_now();

	if (!t)
		return;
	for (unsigned id = 0; id < PT_NIDS; id++) {
		if (atomic_load_explicit(&t->state[id], memory_order_acquire) != T_VALID)
			continue;
		memset(&o, 0, sizeof o);
		o.lo = id;
		memcpy(o.path, t->desc[id], PT_TYPE_DESC);
		o.path[PT_TYPE_DESC - 1] = 0;
		if (atomic_load_explicit(&t->state[id], memory_order_acquire) != T_VALID)
			continue; /* rewritten meanwhile: the writer puts it everywhere */
		pt_objmap_put(sl, &o, pid, PT_OBJ_TYPE, tick);
	}
}
