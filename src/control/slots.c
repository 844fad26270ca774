/*
 * slots.c -- the controller's side of tracing a process: finding its
 * control segment, claiming a slot, placing the stream's segment in the
 * same memfd, and the liveness lock.
 *
 * Everything read from a control segment comes from a process that may be
 * hostile: offsets are checked, the file is checked to be a sealed regular
 * file before it is mapped, and nothing from it is used as a pointer.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "control.h"

#define CTL_LINK "/memfd:posixtrace-ctl"

/* A private open file of our own control segment: its locks are the
 * stream's liveness, released when this process exits or execs. */
static int own_ctl(struct pt_target *tg)
{
	char path[64];

	tg->ctl = pt_ctl;
	if (pt_ctl_fd < 0)
		return 0;
	snprintf(path, sizeof path, "/proc/self/fd/%d", pt_ctl_fd);
	tg->fd = open(path, O_RDWR | O_CLOEXEC);
	return 0;
}

/* Finding a target's control segment costs bounded work whatever
 * descriptors the target holds (it may hold thousands of memfds named
 * like ours): a look reads at most SCAN_MAX entries of /proc/PID/fd and
 * opens at most SCAN_OPEN_MAX distinct files among them (a file already
 * refused is known by its inode and not opened again).  A control segment
 * beyond those bounds is not found: the process is then traced as one
 * without the library (docs/implementation-defined.md).
 *
 * Looks are repeated while the target is on its way to a segment of its
 * own (docs/design.md, "Races, and how each is closed"):
 *  - it shows only its parent's (a child that has not yet run its fork
 *    handler): for up to SCAN_WAIT_NS, then EAGAIN;
 *  - its segment is being closed by its exec (pt_ctl.exec): for up to
 *    SCAN_WAIT_NS, then EAGAIN;
 *  - its segment was closed, or the library is mapped but has made no
 *    segment yet (a new image before its constructors), or it shows one
 *    whose magic is not written yet (being made): for up to SCAN_WAIT_NS,
 *    then it is one without the library;
 *  - it shows only someone else's, or none but its environment names a
 *    control segment (an image exec'd by a process of the library, which
 *    may be one too): for up to SCAN_RETRY_NS.
 * Each state's time counts from the look that first found the target in
 * it: a child that showed its parent's segment for 300 ms and then
 * exec'd has the whole time of the next state (when it counted from the
 * first look, the 200 ms of a new image whose segment was still being
 * made were spent already, and the stream was made for a process
 * "without the library": it got nothing).  However the states alternate,
 * the looks end after SCAN_TOTAL_NS. */
#define SCAN_MAX      65536u
#define SCAN_OPEN_MAX 32u
#define SCAN_RETRY_NS 200000000ull
#define SCAN_WAIT_NS  2000000000ull
#define SCAN_TOTAL_NS (2 * SCAN_WAIT_NS) /* however the states alternate */
/* what a look finds the target doing, each with its time */
enum { LOOK_EXEC, LOOK_PARENT, LOOK_NEW, LOOK_OTHER };
#define PROC_READ_MAX (1u << 20) /* of /proc/PID/environ, /proc/PID/maps */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The owner pid of a file that carries a control segment's magic; 0 if
 * it has none; -1 if its magic is not written yet: a segment being made
 * (ctlseg.c writes the magic last), whose owner may be the target, a few
 * microseconds from publishing it. */
static pid_t ctl_owner(int fd)
{
	struct { uint64_t magic; uint32_t version, size; int32_t pid; } h;

	ssize_t n = pread(fd, &h, sizeof h, 0);
	if (n < 0)
		return 0;
	if (n < (ssize_t)sizeof h || h.magic == 0) /* (not even sized yet) */
		return -1;
	if (h.magic != PT_CTL_MAGIC || h.version != PT_CTL_VERSION || h.pid <= 0)
		return 0;
	return h.pid;
}

/* Look through /proc/PID/fd once: 1 found, 0 none, -1 only someone
 * else's (*parent set if one of those is ppid's: a child that has not yet
 * replaced its parent's after fork; *making if one is a segment being
 * made). */
static int scan_fds(DIR *d, pid_t pid, pid_t ppid, struct pt_target *tg, int *parent,
                    int *making)
{
	struct dirent *de;
	char link[64];
	ino_t refused[SCAN_OPEN_MAX];
	unsigned nref = 0, seen = 0;
	int other = 0;

	rewinddir(d);
	while ((de = readdir(d)) != NULL && seen++ < SCAN_MAX) {
		struct stat st;
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
		if (n <= 0 || (size_t)n < sizeof CTL_LINK - 1 || memcmp(link, CTL_LINK, sizeof CTL_LINK - 1))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0)
			continue;
		unsigned k = 0;
		while (k < nref && refused[k] != st.st_ino)
			k++;
		if (k < nref) { /* the same file again (a dup): refused already */
			other = 1;
			continue;
		}
		if (nref == SCAN_OPEN_MAX)
			break;
		int fd = openat(dirfd(d), de->d_name, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if ((tg->ctl = pt_ctl_map(fd, pid)) != NULL) {
			tg->fd = fd;
			return 1;
		}
		pid_t owner = ctl_owner(fd);
		if (owner < 0)
			*making = 1;
		else if (ppid > 0 && owner == ppid)
			*parent = 1;
		refused[nref++] = st.st_ino;
		other = 1;
		close(fd);
	}
	return other ? -1 : 0;
}

/* The parent of pid (/proc/PID/stat, after the command's closing
 * parenthesis), or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	int fd, ppid = 0;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* Does /proc/PID/<what> hold needle (read at most PROC_READ_MAX bytes)?
 * 1 yes, 0 no, -1 it is empty or cannot be read (an image in the middle
 * of its exec shows no environment). */
static int proc_has(pid_t pid, const char *what, const char *needle)
{
	char path[64], buf[4096 + 64];
	size_t nl = strlen(needle), keep = 0, total = 0;
	int fd, hit = 0;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (!hit && total < PROC_READ_MAX && (n = read(fd, buf + keep, 4096)) > 0) {
		size_t len = keep + (size_t)n;
		total += (size_t)n;
		for (size_t i = 0; i + nl <= len && !hit; i++)
			hit = memcmp(buf + i, needle, nl) == 0;
		keep = len < nl - 1 ? len : nl - 1; /* a match across two reads */
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return hit ? 1 : total == 0 ? -1 : 0;
}

void pt_target_uncount(struct pt_target *tg)
{
	if (tg->counted && tg->ctl)
		atomic_fetch_sub(&tg->ctl->creating, 1);
	tg->counted = 0;
}

/* Take the segment found if no exec of the target closes it: counted in
 * creating first, then the exec state read (both sequentially consistent;
 * the exec stores its state, then reads creating).  0 taken; else the
 * segment is let go. */
static int take_segment(struct pt_target *tg)
{
	atomic_fetch_add(&tg->ctl->creating, 1);
	tg->counted = 1;
	uint32_t x = atomic_load(&tg->ctl->exec);
	if (x == 0 || x == PT_EXEC_KEPT)
		return 0;
	pt_target_uncount(tg);
	munmap(tg->ctl, PT_CTL_SIZE);
	close(tg->fd);
	tg->ctl = NULL;
	tg->fd = -1;
	return -1;
}

/* Find the control segment of pid.  The caller may trace pid if it may
 * read /proc/PID/fd: the rule of ptrace (same user, or CAP_SYS_PTRACE). */
int pt_target_open(pid_t pid, struct pt_target *tg)
{
	char path[64];
	DIR *d;
	int r, rc = 0;

	memset(tg, 0, sizeof *tg);
	tg->fd = -1;
	if (pid < 0)
		return ESRCH;
	if (pid == 0 || pid == getpid()) {
		tg->pid = getpid();
		tg->own = 1;
		return own_ctl(tg);
	}
	tg->pid = pid;
	if (kill(pid, 0) != 0)
		return errno == EPERM ? EPERM : ESRCH;
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return errno == EACCES || errno == EPERM ? EPERM
		       : errno == ENOENT || errno == ESRCH ? ESRCH
		       : errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	pid_t ppid = parent_of(pid);
	uint64_t start = mono_ns(), since = start;
	int saw_exec = 0, saw_seg = 0, phase = -1;
	for (;;) {
		int parent = 0, making = 0, now_phase;
		uint64_t limit = SCAN_WAIT_NS, now;
		r = scan_fds(d, pid, ppid, tg, &parent, &making);
		if (r == 1 && take_segment(tg) == 0)
			break;
		if (r != 0)
			saw_seg = 1;
		else if (saw_seg) /* the segment it showed is gone: only an exec
		                   * closes it (it is close-on-exec) */
			saw_exec = 1;
		if (r == 1) /* its exec closes the segment, or decides whether to */
			now_phase = LOOK_EXEC, saw_exec = 1;
		else if (r < 0 && parent)
			now_phase = LOOK_PARENT; /* a child before its fork handler made its own */
		else if (making || saw_exec || proc_has(pid, "maps", "libposixtrace") == 1)
			now_phase = LOOK_NEW; /* a new image of the library, before its
			                       * constructors, or making its segment */
		else if (r < 0 || proc_has(pid, "environ", "POSIXTRACE_CTL=") != 0)
			now_phase = LOOK_OTHER, limit = SCAN_RETRY_NS;
		/* (someone else's; or an image that a process of the library
		 * exec'd, or one in the middle of its exec) */
		else
			break; /* a process without the library */
		now = mono_ns();
		if (now_phase != phase) /* each state's time counts from its start */
			phase = now_phase, since = now;
		if (now - since >= limit || now - start >= SCAN_TOTAL_NS) {
			if (phase == LOOK_EXEC || phase == LOOK_PARENT)
				rc = EAGAIN; /* still on its way: a stream now could get nothing */
			r = 0;
			break;
		}
		usleep(1000);
	}
	closedir(d);
	if (r <= 0 && kill(pid, 0) != 0)
		return ESRCH; /* it died while we looked */
	return rc; /* found, or no control segment: not linked with the library */
}

void pt_target_close(struct pt_target *tg)
{
	pt_target_uncount(tg);
	if (tg->ctl && !tg->own)
		munmap(tg->ctl, PT_CTL_SIZE);
	if (tg->fd >= 0)
		close(tg->fd);
	tg->ctl = NULL;
	tg->fd = -1;
}

/* The region slot s (ours: we hold its lock) had before, if it can hold
 * size bytes again: in this file, not an inherited stream's (those are in
 * another process's file), clear of every other slot's, and mapped by no
 * process any more.  Each process that maps a stream's region holds a
 * read lock on its first byte while it does (producer/alive.c); a process
 * that still maps it could write into it late.  Without this every
 * `posixtrace live` or `top` that attached and left grew the memfd by its
 * stream (issue 54: 551 MB after 30 attaches).  0 if none. */
static uint64_t region_again(struct pt_target *tg, unsigned s, uint64_t size, uint64_t ino)
{
	struct pt_ctl *c = tg->ctl;
	const struct pt_ctl_slot *e = &c->slot[s];
	uint64_t off = atomic_load(&e->off), had = atomic_load(&e->size);
	uint64_t end = atomic_load(&c->region_end);

	if (atomic_load(&e->ino) != ino || (atomic_load(&e->flags) & PT_CS_INHERITED) ||
	    off < PT_CTL_SIZE || off % 4096 || had < size || had > 1ull << 42 || off > end ||
	    had > end - off)
		return 0;
	for (unsigned k = 0; k < PT_SLOTS; k++) {
		const struct pt_ctl_slot *o = &c->slot[k];
		uint64_t ko = atomic_load(&o->off), ks = atomic_load(&o->size);
		if (k != s && atomic_load(&o->ticket) != 0 && atomic_load(&o->ino) == ino &&
		    ko < off + had && off < ko + ks)
			return 0;
	}
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)off,
	                    .l_len = 1 };
	if (fcntl(tg->fd, F_OFD_GETLK, &fl) != 0 || fl.l_type != F_UNLCK)
		return 0;
	/* what a controller that died left there goes (a reader must not
	 * take its map entries for the new stream's) */
	if (fallocate(tg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)had) != 0)
		return 0;
	return off;
}

/* Room for a segment of size bytes in the control memfd: slot s's last
 * region again if it may be (region_again), else past everything given
 * out so far; the first prealloc bytes are backed now. */
int pt_region_alloc(struct pt_target *tg, unsigned slot, uint64_t size, uint64_t prealloc,
                    uint64_t *off)
{
	struct pt_ctl *c = tg->ctl;
	uint64_t end = atomic_load(&c->region_end), nw;
	struct stat st;

	size = (size + 4095) & ~4095ull;
	if (fstat(tg->fd, &st) == 0 && slot < PT_SLOTS &&
	    (nw = region_again(tg, slot, size, (uint64_t)st.st_ino)) != 0) {
		if (posix_fallocate(tg->fd, (off_t)nw, (off_t)prealloc) != 0)
			return ENOMEM;
		*off = nw;
		return 0;
	}
	do {
		if (end < PT_CTL_SIZE || end % 4096 || end > PT_CTL_REGION_MAX)
			return ENOMEM; /* scribbled on */
		nw = end + size;
	} while (!atomic_compare_exchange_weak(&c->region_end, &end, nw));
	/* grow the file; a shrink is refused by the seal, so of two
	 * controllers growing it at once the larger size wins */
	if (fstat(tg->fd, &st) != 0 ||
	    ((uint64_t)st.st_size < nw && pt_fsz_truncate(tg->fd, nw) != 0 && errno != EPERM) ||
	    fstat(tg->fd, &st) != 0 || (uint64_t)st.st_size < nw ||
	    pt_fsz_allocate(tg->fd, end, prealloc) != 0) {
		/* (EFBIG: this process's RLIMIT_FSIZE) the room given back if
		 * nobody took more since, so that a smaller stream may fit */
		atomic_compare_exchange_strong(&c->region_end, &nw, end);
		return ENOMEM;
	}
	*off = end;
	return 0;
}

static int lock_byte(int fd, uint32_t byte, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Take a slot of the target's control segment: one nobody holds the lock
 * of and that is free, or whose controller died (its lock went with it).
 * lock_fd < 0: a process-local control segment, where a CAS suffices. */
int pt_slot_claim(struct pt_target *tg, int lock_fd, unsigned *slot)
{
	struct pt_ctl *c = tg->ctl;

	for (unsigned s = 0; s < PT_SLOTS; s++) {
		struct pt_ctl_slot *e = &c->slot[s];
		if (lock_fd >= 0 && lock_byte(lock_fd, s, F_WRLCK) != 0)
			continue;
		uint64_t tk = atomic_load(&e->ticket);
		if (tk != 0 && (lock_fd < 0 || (atomic_load(&e->flags) & PT_CS_INHERITED) ||
		                atomic_load(&e->fd) != -1))
			tk = ~0ull; /* in use, or not ours to judge */
		if (tk != ~0ull && atomic_compare_exchange_strong(&e->ticket, &tk, PT_TICKET_BUSY)) {
			uint64_t off = atomic_load(&e->off), size = atomic_load(&e->size);
			if (tk && off >= PT_CTL_SIZE && off % 4096 == 0 && off <= PT_CTL_REGION_MAX &&
			    size <= 1ull << 42)
				fallocate(lock_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				          (off_t)off, (off_t)size); /* a dead controller's stream */
			pt_ctl_bump(c, 0, 1u << s);
			*slot = s;
			return 0;
		}
		if (lock_fd >= 0)
			lock_byte(lock_fd, s, F_UNLCK);
	}
	return EAGAIN;
}

/* The name the next stream published in this control segment will have. */
uint64_t pt_slot_ticket(struct pt_ctl *c)
{
	uint64_t tk = atomic_fetch_add(&c->next_ticket, 2);

	return tk <= PT_TICKET_BUSY ? PT_TICKET_BUSY + 1 /* scribbled on: still never 0 or BUSY */
	                            : tk;
}

/* Make slot s name the stream (ticket tk from pt_slot_ticket): from the
 * ticket's store on, the traced process's threads may attach it. */
void pt_slot_publish(struct pt_target *tg, unsigned s, uint64_t off, uint64_t size, int fd,
                     uint64_t ino, uint32_t live_byte, uint64_t tk)
{
	struct pt_ctl *c = tg->ctl;
	struct pt_ctl_slot *e = &c->slot[s];

	atomic_store(&e->off, off);
	atomic_store(&e->size, size);
	atomic_store(&e->fd, fd);
	atomic_store(&e->ino, ino);
	atomic_store(&e->ctl_pid, getpid());
	atomic_store(&e->lock_byte, live_byte);
	atomic_store(&e->flags, 0);
	atomic_store_explicit(&e->ticket, tk, memory_order_release);
}

void pt_slot_release(struct pt_ctl *c, unsigned s, uint64_t ticket)
{
	if (atomic_compare_exchange_strong(&c->slot[s].ticket, &ticket, 0))
		pt_ctl_bump(c, 0, 1u << s);
}

/* A controller leaves another process: the slot is free again, and the
 * process stops recording into the stream at its next event.  Every bit
 * of its wanted bitmap is set so that there is one, even for a process
 * that records nothing a stream still running wants: its view is
 * unmapped then (producer/event.c, record_idle), not only when a stream
 * next reaches it.  Its resync puts the bitmap right again. */
void pt_slot_leave(struct pt_ctl *c, unsigned s, uint64_t ticket)
{
	if (atomic_compare_exchange_strong(&c->slot[s].ticket, &ticket, 0)) {
		pt_ctl_bump(c, 0, 1u << s);
		for (unsigned i = 0; i < PT_NIDS / 64; i++)
			atomic_store(&c->want[i], ~0ull);
	}
}
