/*
 * inherit.c -- the streams a process keeps across fork and its own exec
 * (the Trace Inheritance option, and a stream that waited across exec):
 * in a forked child, a control segment of its own holding the inherited
 * streams; in the image an exec started, the segment and the streams the
 * previous image named in POSIXTRACE_CTL (exec.c writes it).  The segment
 * itself is ctlseg.c's; lifecycle.c calls these at fork and at load.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "producer.h"

/* In the child after fork (one thread, async-signal-safe calls only): a
 * control segment of its own (ctlseg.c; at the same fd number, so
 * POSIXTRACE_CTL stays right; the name registry copied) that keeps the
 * inherited streams in their slots, each with the child's own fd on the
 * memfd that holds it; the parent's own streams are let go of. */
void pt_inherit_atfork_child(void)
{
	struct pt_ctl *old = pt_ctl, *c;
	int fd = -1;
	uint32_t live = 0;

	c = pt_ctl_fork_new(&fd);
	pt_procid_adopted(0); /* a new process: no exec of one the streams knew */
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
		 * (pt_inherit_adopt), if it may */
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
		pt_procid_put(sl, 1);
	}
	pt_ctl_fork_use(c, fd, live);
}

/* After exec: the value of POSIXTRACE_CTL that this process's previous
 * image set (exec.c), "C" or "C/S.P.F.I/S.P.F.I...": C the fd of the
 * control segment, kept open across exec; then for each inherited stream
 * its slot S and where its memfd was open (pid P, fd F, inode I).  The
 * segment is adopted if C is a control segment made for this pid (and
 * becomes close-on-exec again).  0 if adopted. */
int pt_inherit_adopt(const char *e)
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
	pt_ctl_use(c, (int)v[0]);
	fcntl((int)v[0], F_SETFD, FD_CLOEXEC);
	atomic_store(&c->exec, 0); /* the exec is over: the segment is this image's */
	pt_procid_adopted(1);      /* the same process as the image before */
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
