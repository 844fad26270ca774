/*
 * ctlseg.c -- this process's control segment.
 *
 * Made when the library is loaded (four syscalls, no thread), close-on-exec:
 * it reaches no other program (system(), posix_spawn(), a child's exec).
 * The process's own exec keeps it (exec.c) and names it in POSIXTRACE_CTL,
 * where the new image finds it again -- unless that image runs with
 * privileges (AT_SECURE), which then starts afresh.  Replaced by a fresh
 * one in the child after fork (the child keeps the slots of inherited
 * streams).  Controllers of other processes find it in /proc/PID/fd; see
 * trid/target.c.  It also holds the process's event-name registry, so a
 * controller agrees with the traced process on ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/auxvec.h> /* AT_SECURE (<sys/auxv.h> brings <elf.h>, whose PT_TLS clashes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "traced.h"

#define CTL_ENV "POSIXTRACE_CTL"

/* Without a memfd the process can still trace itself: its control segment
 * is then plain process memory that nobody else can reach. */
static union {
	struct pt_ctl c;
	char bytes[PT_CTL_SIZE];
} fallback;

struct pt_ctl *pt_ctl = &fallback.c;
/* <trace.h>'s inline test reads the live word through this */
_Static_assert(PT_LIVE_MASK == 0xffu, "<trace.h> tests the low 8 bits of the live word");
PT_API const unsigned int *__posix_trace_gate = (const unsigned int *)&fallback.c.live;
/* ... and, since POSIXTRACE_0.2, the wanted bitmap through this */
_Static_assert(PT_NIDS == 1024 && PT_NIDS / 64 == 16, "<trace.h> indexes 16 words of wanted bits");
PT_API const unsigned long long *__posix_trace_want = (const unsigned long long *)fallback.c.want;
int pt_ctl_fd = -1;
struct pt_fdid pt_ctl_id;
int pt_secure;
extern unsigned long getauxval(unsigned long type); /* <sys/auxv.h> */

/* Everything but the magic number, which is written last (ctl_publish):
 * a controller that finds the segment early takes it for someone else's
 * and looks again. */
static void ctl_init_header(struct pt_ctl *c)
{
	c->version = PT_CTL_VERSION;
	c->size = PT_CTL_SIZE;
	atomic_store(&c->pid, pt_pid);
	atomic_store(&c->region_end, PT_CTL_SIZE);
	atomic_store(&c->next_ticket, 2);
	pt_names_init(pt_ctl_names(c));
}

/* Map fd if it is the control segment of pid; NULL otherwise.  Also used
 * by a controller on another process's (trid/target.c): nothing is trusted. */
struct pt_ctl *pt_ctl_map(int fd, pid_t pid)
{
	struct stat st;
	struct pt_ctl *c;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)PT_CTL_SIZE ||
	    !(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK))
		return NULL;
	c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return NULL;
	if (atomic_load_explicit(&c->magic, memory_order_acquire) != PT_CTL_MAGIC ||
	    c->version != PT_CTL_VERSION || atomic_load(&c->pid) != pid) {
		munmap(c, PT_CTL_SIZE);
		return NULL;
	}
	return c;
}

/* A new control segment, close-on-exec (exec.c keeps it across this
 * process's own exec).  Sealed against shrinking so that no mapping of it
 * can fault; it may grow. */
static struct pt_ctl *ctl_make(int *fdp)
{
	int fd = memfd_create("posixtrace-ctl", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	struct pt_ctl *c;

	if (fd < 0)
		return NULL;
	if (pt_fsz_truncate(fd, PT_CTL_SIZE) != 0 || /* (RLIMIT_FSIZE: no segment, no signal) */
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0 ||
	    (c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	ctl_init_header(c);
	*fdp = fd;
	return c;
}

static void ctl_publish(struct pt_ctl *c)
{
	atomic_store_explicit(&c->magic, PT_CTL_MAGIC, memory_order_release);
}

static void ctl_use(struct pt_ctl *c, int fd)
{
	pt_ctl = c;
	__posix_trace_gate = (const unsigned int *)&c->live;
	__posix_trace_want = (const unsigned long long *)c->want;
	pt_ctl_fd = fd;
	pt_fdid_of(fd, &pt_ctl_id);
}

/* An inherited stream's memfd, opened again after exec where the process
 * it came from holds it: /proc/PID/fd/FD, which the kernel opens only for
 * a process that may ptrace PID (a child that changed its user cannot),
 * and only if it is still the file it was (inode).  -1 if not.  Also how
 * a process joins the stream its environment names (join.c). */
int pt_reopen_at(int32_t pid, int32_t fd, uint64_t ino)
{
	char path[64], *p = path;
	struct stat st;
	int f;

	if (pid <= 0 || fd < 0)
		return -1;
	memcpy(p, "/proc/", 6); /* (no snprintf: a resync may run in a signal handler) */
	p = pt_put_u64(p + 6, (uint64_t)pid);
	memcpy(p, "/fd/", 4);
	*pt_put_u64(p + 4, (uint64_t)fd) = 0;
	if ((f = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return -1;
	if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != ino ||
	    !(fcntl(f, F_GET_SEALS) & F_SEAL_SHRINK)) {
		close(f);
		return -1;
	}
	return f;
}

/* After exec: the value of POSIXTRACE_CTL that this process's previous
 * image set (exec.c), "C" or "C/S.P.F.I/S.P.F.I...": C the fd of the
 * control segment, kept open across exec; then for each inherited stream
 * its slot S and where its memfd was open (pid P, fd F, inode I).  The
 * segment is adopted if C is a control segment made for this pid (and
 * becomes close-on-exec again).  0 if adopted. */
int pt_ctl_adopt(const char *e)
{
	unsigned long long v[1 + 4 * PT_SLOTS];
	unsigned n = 0;
	struct pt_ctl *c;

	for (const char *p = e;; p++) {
		char *end;
		if (*p < '0' || *p > '9' || n == sizeof v / sizeof v[0])
			return -1;
		errno = 0;
		v[n] = strtoull(p, &end, 10);
		if (errno || (n == 0 ? v[n] >= 1u << 20 : (n - 1) % 4 != 3 && v[n] >= 1u << 30))
			return -1; /* (S, P and F are small; I, an inode, is not) */
		p = end;
		n++;
		if (!*p && n % 4 == 1)
			break;
		if (*p != (n % 4 == 1 ? '/' : '.'))
			return -1;
	}
	if ((c = pt_ctl_map((int)v[0], pt_pid)) == NULL)
		return -1; /* not ours (a parent's, named in an environment passed on) */
	ctl_use(c, (int)v[0]);
	fcntl((int)v[0], F_SETFD, FD_CLOEXEC);
	atomic_store(&c->exec, 0); /* the exec is over: the segment is this image's */
	for (unsigned i = 1; i + 3 < n; i += 4) {
		unsigned s = (unsigned)v[i];
		if (s >= PT_SLOTS || pt_proc.own_fd[s])
			continue;
		int fd = pt_reopen_at((int32_t)v[i + 1], (int32_t)v[i + 2], v[i + 3]);
		if (fd < 0)
			continue; /* gone, or not ours to open: the stream does not follow */
		pt_slot_own_fd(s, fd, 1);
		pt_proc.own_src[s] = (struct pt_own_src){ (int32_t)v[i + 1], (int32_t)v[i + 2], v[i + 3] };
	}
	return 0;
}

/* Before any other constructor of ours or of the program, so a program's
 * constructor can record its first event into a stream that was waiting
 * for it across exec. */
__attribute__((constructor(101))) static void ctl_init(void)
{
	char buf[16];
	int fd;
	struct pt_ctl *c;

	pt_pid = getpid(); /* the only getpid() at load */
	/* A program that runs with privileges its caller does not have
	 * (set-user-ID, set-group-ID, file capabilities) adopts nothing its
	 * environment names: its control segment is a new one, which only a
	 * controller allowed to ptrace it can reach. */
	pt_secure = getauxval(AT_SECURE) != 0;
	const char *e = pt_secure ? NULL : secure_getenv(CTL_ENV);
	pt_exec_init();
	if (e && pt_ctl_adopt(e) == 0) {
		snprintf(buf, sizeof buf, "%d", pt_ctl_fd);
		setenv(CTL_ENV, buf, 1);
		pt_join(pt_secure ? NULL : secure_getenv(PT_JOIN_ENV));
		return;
	}
	ctl_init_header(&fallback.c);
	ctl_publish(&fallback.c);
	if ((c = ctl_make(&fd)) == NULL)
		return;
	ctl_publish(c);
	ctl_use(c, fd);
	snprintf(buf, sizeof buf, "%d", fd);
	setenv(CTL_ENV, buf, 1);
	pt_join(pt_secure ? NULL : secure_getenv(PT_JOIN_ENV)); /* before attach_at_load */
}

/* Slot s's share of the wanted bitmap: the user ids the filter f lets
 * through, or every user id (f NULL: a filter this segment does not hear
 * of).  Written before the pt_ctl_bump() that makes it count. */
void pt_ctl_slot_want(struct pt_ctl *c, unsigned s, const _Atomic uint64_t *f)
{
	for (unsigned i = 0; i < PT_NIDS / 64; i++) {
		uint64_t w = f ? ~atomic_load(&f[i]) : ~0ull;
		if (i == 0)
			w &= ~((1ull << PT_SYS_IDS) - 1); /* system ids: never user events */
		atomic_store(&c->slot_want[s][i], w);
	}
}

/* The wanted bitmap anew: the OR of slot_want over the running slots.
 * Every change (a slot's share, a live bit) is followed by a bump of the
 * live word and then this, so a pass that saw the live word unchanged
 * from before its loads to after its stores stored what was current; one
 * that did not goes again.  Of two concurrent passes, a stale one ends
 * with a pass of its own after the other's change (and a pass that ends
 * later stores later).  Async-signal-safe: atomics only. */
static void want_recompute(struct pt_ctl *c)
{
	uint32_t v = atomic_load(&c->live), v2;
	for (;;) {
		for (unsigned i = 0; i < PT_NIDS / 64; i++) {
			uint64_t w = 0;
			for (uint32_t m = v & PT_LIVE_MASK; m; m &= m - 1)
				w |= atomic_load(&c->slot_want[__builtin_ctz(m)][i]);
			atomic_store(&c->want[i], w);
		}
		if ((v2 = atomic_load(&c->live)) == v)
			return;
		v = v2;
	}
}

/* The wanted bitmap as the running slots say, after a controller set it
 * all to make this process look at its control segment (attach.c). */
void pt_ctl_want_refresh(struct pt_ctl *c)
{
	want_recompute(c);
}

/* Set and clear live bits and count the change, so that every recording
 * thread resyncs on its next event; then the wanted bitmap follows. */
void pt_ctl_bump(struct pt_ctl *c, uint32_t set, uint32_t clear)
{
	uint32_t o = atomic_load_explicit(&c->live, memory_order_relaxed), n;
	do {
		n = (((o & ~PT_LIVE_MASK) + PT_LIVE_BUMP) | ((o | set) & ~clear & PT_LIVE_MASK));
		if (!(n & ~PT_LIVE_MASK))
			n += PT_LIVE_BUMP;
	} while (!atomic_compare_exchange_weak_explicit(&c->live, &o, n, memory_order_seq_cst,
	                                                memory_order_relaxed));
	want_recompute(c);
}

/* In the child after fork (one thread, async-signal-safe calls only): a
 * control segment of its own at the same fd number, so POSIXTRACE_CTL stays
 * right; the name registry copied; inherited streams kept in their slots,
 * each with its own fd on the memfd that holds it. */
void pt_ctl_atfork_child(void)
{
	struct pt_ctl *old = pt_ctl, *c;
	int fd = -1;
	uint32_t live = 0;

	c = ctl_make(&fd);
	if (!c) {
		if (old != &fallback.c)
			memcpy(fallback.bytes + PT_CTL_NAMES, (char *)old + PT_CTL_NAMES,
			       PT_CTL_SIZE - PT_CTL_NAMES);
		ctl_init_header(&fallback.c);
		c = &fallback.c;
		memset(c->slot, 0, sizeof c->slot);
	} else {
		pt_names_copy(pt_ctl_names(c), pt_ctl_names(old));
	}
	for (unsigned s = 0; s < PT_SLOTS; s++) {
		struct pt_view *sl = pt_view(s);
		struct pt_ctl_slot *o = &old->slot[s], *n = &c->slot[s];
		/* the parent's descriptor for the slot, copied by fork: the
		 * child's own dup replaces it below, if the stream is inherited */
		int pfd = pt_proc.own_fd[s] - 1, pclose = atomic_load(&pt_proc.own_close) >> s & 1;
		struct pt_fdid pfd_id = pt_proc.own_id[s]; /* (closed only if still its file) */
		pt_proc.own_fd[s] = 0;
		atomic_fetch_and(&pt_proc.own_close, ~(1u << s));
		if (!(atomic_load(&pt_proc.att) >> s & 1)) {
			/* tickets are per control segment: the parent's last one
			 * means nothing in the child's (the first stream a
			 * controller made there could carry the same number) */
			pt_proc.ticket[s] = 0;
			if (pfd >= 0 && pclose)
				pt_close_own(pfd, &pfd_id);
			continue;
		}
		if (sl->inherit != POSIX_TRACE_INHERITED || atomic_load(&sl->dead)) {
			/* the parent's stream: only this thread runs, so unmap now */
			atomic_fetch_and(&pt_proc.att, ~(1u << s));
			pt_map_release(sl->hdr, sl->map_size);
			sl->hdr = NULL;
			pt_proc.ticket[s] = 0;
			if (pfd >= 0 && pclose)
				pt_close_own(pfd, &pfd_id);
			continue;
		}
		/* a descriptor of the child's own, close-on-exec: an image the
		 * child execs opens the memfd again where the parent holds it
		 * (pt_ctl_adopt), if it may */
		int hfd = fcntl(sl->home_fd, F_DUPFD_CLOEXEC, 3);
		struct stat hst;
		pt_proc.own_src[s] = (struct pt_own_src){ 0, 0, 0 };
		if (hfd >= 0 && fstat(hfd, &hst) == 0)
			pt_proc.own_src[s] = (struct pt_own_src){ getppid(), sl->home_fd,
			                                          (uint64_t)hst.st_ino };
		if (pfd >= 0 && pclose && pfd != hfd)
			pt_close_own(pfd, &pfd_id);
		atomic_store(&n->off, atomic_load(&o->off));
		atomic_store(&n->size, atomic_load(&o->size));
		atomic_store(&n->fd, hfd);
		atomic_store(&n->ino, atomic_load(&o->ino));
		atomic_store(&n->ctl_pid, atomic_load(&o->ctl_pid));
		atomic_store(&n->lock_byte, sl->lock_byte);
		atomic_store(&n->tree_pid, atomic_load(&o->tree_pid));
		atomic_store(&n->tree_fd, atomic_load(&o->tree_fd));
		atomic_store(&n->flags, PT_CS_INHERITED | (atomic_load(&o->flags) & PT_CS_TREE));
		atomic_store(&n->ticket, pt_proc.ticket[s]);
		sl->home_fd = hfd;
		if (hfd >= 0)
			pt_slot_own_fd(s, hfd, 1);
		sl->test_hdr_filter = 1;
		for (unsigned i = 0; i < PT_NIDS / 64; i++) /* the controller will not tell us */
			atomic_store(&sl->filter[i], 0);
		pt_ctl_slot_want(c, s, NULL); /* nor of its filter: every user id may be wanted */
		live |= atomic_load(&old->live) & (1u << s);
		/* the child's map: its parent's, which the parent wrote here */
		pt_objmap_fork(sl, pt_pid, getppid());
		pt_procid_put(sl);
	}
	atomic_store(&c->live, live | PT_LIVE_BUMP);
	want_recompute(c);
	ctl_publish(c);
	if (c != &fallback.c && pt_ctl_fd >= 0 && fd != pt_ctl_fd && pt_fd_is(pt_ctl_fd, &pt_ctl_id)) {
		/* (not over a file of the program's that took the number after
		 * it closed ours: then the new number is kept, and exec.c names
		 * it) */
		dup3(fd, pt_ctl_fd, O_CLOEXEC); /* the parent's control segment is not ours */
		close(fd);
		fd = pt_ctl_fd;
	}
	ctl_use(c, c == &fallback.c ? -1 : fd); /* before the old one goes */
	if (old != &fallback.c)
		munmap(old, PT_CTL_SIZE);
}

/* Fork: the traced side of the child (its pid, a control segment of its
 * own that keeps its INHERITED streams, no chunk of the parent's, no
 * thread but this one).  Registered at load, after ctl_init, so these run
 * after the trace-id table's prepare handler and before its child handler
 * (trid/table.c). */
static void atfork_prepare(void)
{
	pt_resync_atfork_prepare();
}

static void atfork_parent(void)
{
	pt_resync_atfork_parent();
}

static void atfork_child(void)
{
	pt_pid = getpid();
	pt_objmap_atfork_child();
	pt_ctl_atfork_child();
	pt_alive_atfork_child();
	pt_record_atfork_child();
	pt_quiesce_atfork_child();
	atomic_store(&pt_proc.sync, 0);
	atomic_store(&pt_proc.seen, 0);
}

__attribute__((constructor(101))) static void ctl_fork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
