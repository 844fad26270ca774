/*
 * thrmap.c -- who a recording thread is: its kernel thread id (TID) and
 * its name (pthread_setname_np(), prctl(PR_SET_NAME)), written into every
 * stream it records into, in the area of the map of loaded code (an entry
 * of kind PT_OBJ_THREAD: its pthread_t, which the stream's chunks carry,
 * its TID and its name), so that a reader can name the writer of each
 * chunk (docs/design.md, "Thread identities").
 *
 * When.  A thread says who it is when it takes a chunk of a stream
 * (event.c's general path, never the per-event fast path): the first
 * chunk it takes in a stream, and the next chunk after its name changed.
 * The name is read with prctl(PR_GET_NAME), a system call that does not
 * wait, at a new chunk when 10 ms have passed since the thread last read
 * it (the owner check's interval): a change is therefore noticed at the
 * thread's first chunk 10 ms or more after its last reading, and the
 * events recorded before that keep the old name.  The TID comes
 * from pthread_getcpuclockid() (the kernel encodes a thread's CPU-time
 * clock as ~tid << 3 | 6; glibc and musl read the TID from the thread's
 * descriptor), checked at load against gettid() for the loading thread;
 * where that check fails it is gettid(), once per thread.
 */
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "producer.h"

struct me {
	int32_t tid;                 /* 0: not known yet */
	char name[PT_THREAD_NAME];
	uint16_t said[PT_SLOTS];     /* the view generation told who we are (views'
	                              * generations are 16 bits: pt_tw_key) */
	uint64_t read_at;            /* tick of the last PR_GET_NAME; 0: never */
};
/* (initial-exec TLS of a library that may be dlopen()ed: every byte
 * counts, event.c) */
static _Thread_local struct me me PT_TLS;
_Static_assert(sizeof(struct me) == 48, "struct me grew: mind the static TLS reserve");
static int tid_by_syscall;       /* pthread_getcpuclockid() did not encode it */

/* The TID of pthread t from its CPU-time clock id, or 0.  (A build that
 * redirects pthread_self() to made-up ids, fuzz/stream_fuzz.c, cannot
 * ask the C library about them: gettid() there.) */
static int32_t tid_of(pthread_t t)
{
	clockid_t c;

#ifdef pthread_self
	(void)t, (void)c;
	return 0;
#else
	if (pthread_getcpuclockid(t, &c) != 0 || (c & 7) != 6)
		return 0;
	long tid = ~((long)c >> 3);
	return tid > 0 && tid <= INT32_MAX ? (int32_t)tid : 0;
#endif
}

static int32_t my_tid(void)
{
	if (!me.tid)
		me.tid = tid_by_syscall ? (int32_t)syscall(SYS_gettid) : tid_of(pthread_self());
	return me.tid;
}

void pt_thrmap_chunk(unsigned s, struct pt_view *sl, uint64_t ts)
{
	char now[PT_THREAD_NAME] = "";

	if (s >= PT_SLOTS)
		return;
	/* the name, read again at most every 10 ms: a system call costs
	 * about 0.8 us here, which per chunk of 256 short events would be 3 ns
	 * an event */
	if (!me.read_at || ts - me.read_at >= sl->owner_every) {
		me.read_at = ts ? ts : 1;
		if (prctl(PR_GET_NAME, now, 0, 0, 0) != 0)
			now[0] = 0;
		now[PT_THREAD_NAME - 1] = 0;
		if (memcmp(now, me.name, sizeof now) != 0) { /* new, or renamed: tell every stream */
			memcpy(me.name, now, sizeof now);
			memset(me.said, 0, sizeof me.said);
		}
	}
	uint16_t gen = (uint16_t)pt_slot_gen(sl);
	if (me.said[s] == gen && gen)
		return;
	struct pt_obj o;
	memset(&o, 0, sizeof o);
	o.base = (uint64_t)pthread_self();
	o.lo = (uint64_t)my_tid();
	memcpy(o.path, me.name, sizeof me.name);
	pt_objmap_put(sl, &o, pt_pid, PT_OBJ_THREAD, ts);
	me.said[s] = gen;
}

/* The child of fork: the one thread is another kernel thread now. */
void pt_thrmap_atfork_child(void)
{
	memset(&me, 0, sizeof me);
}

/* At load (lifecycle.c): can a thread's TID be read without a call? */
void pt_thrmap_init(void)
{
	tid_by_syscall = tid_of(pthread_self()) != (int32_t)syscall(SYS_gettid);
}
