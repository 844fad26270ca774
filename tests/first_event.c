/*
 * first_event.c -- a thread's first event does no set-up (issue 39): in a
 * process that already runs several threads, the first
 * posix_trace_event() of a new thread makes no system call beyond those
 * any event that starts a chunk may make.
 *
 * Witnesses, both outside the library:
 *  - the kernel: MEMBARRIER_CMD_PRIVATE_EXPEDITED fails with EPERM in a
 *    process not registered for it.  main() asks it before any call into
 *    the library and before any thread exists, so the registration was
 *    made at load (it used to be made by the first event, and with several
 *    threads running it waits an RCU grace period: 9-16 ms).
 *  - a seccomp filter on the new thread alone, whose every system call is
 *    sent to a supervisor thread (SECCOMP_RET_USER_NOTIF) that notes it
 *    and lets it go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE), like strace.
 *    Between two marker calls around the thread's first event, the only
 *    calls allowed are those of a new chunk: prctl(PR_GET_NAME) (the
 *    thread's name, thrmap.c), fcntl(F_OFD_GETLK) (the controller still
 *    there, at most every 10 ms) and futex wakes (a reader asleep).  No
 *    membarrier, no mmap, no sigprocmask, no readlink, no open.
 *
 * The threads that run already record only after the watched event, so
 * that it is the process's first (the worst case).  Twice: with a stream
 * this process made itself, and in a child run
 * under `posixtrace record` (its stream waits for it across exec and is
 * mapped by a constructor).  Each time the event must be in the trace, and
 * the trace names the thread with its TID and name (its own gettid() and
 * the name it set are the witness).
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "../src/ext.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

#define BUSY 3 /* threads already running */

static trace_event_id_t ev_busy, ev_first;
static _Atomic int stop_busy;

/* ---------------------------------------------------------- supervisor */
static _Atomic int listener = -1;
static _Atomic int sup_done;
static long seen[64][3];        /* between the markers: nr, args[0], args[1] */
static _Atomic int nseen;
static _Atomic int markers;     /* 1 after the first, 2 after the second */

static void *supervisor(void *arg)
{
	(void)arg;
	int fd;
	while ((fd = atomic_load(&listener)) < 0) { /* the thread cannot wake us */
		if (atomic_load(&sup_done))
			return NULL;
		usleep(200);
	}
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 100) <= 0) {
			if (atomic_load(&sup_done))
				break;
			continue;
		}
		if (p.revents & (POLLHUP | POLLERR) && !(p.revents & POLLIN))
			break; /* the thread is gone */
		memset(&req, 0, sizeof req);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
			continue;
		long nr = req.data.nr;
		if (nr == SYS_getppid && atomic_load(&markers) == 0)
			atomic_store(&markers, 1);
		else if (nr == SYS_getuid && atomic_load(&markers) == 1)
			atomic_store(&markers, 2);
		else if (atomic_load(&markers) == 1 && atomic_load(&nseen) < 64) {
			int k = atomic_load(&nseen);
			seen[k][0] = nr;
			seen[k][1] = (long)req.data.args[0];
			seen[k][2] = (long)req.data.args[1];
			atomic_store(&nseen, k + 1);
		}
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	close(fd);
	return NULL;
}

/* ---------------------------------------------------- the new thread */
static _Atomic int first_tid;
static _Atomic int filter_failed;
#define FIRST_NAME "first-ev"

static void *first(void *arg)
{
	(void)arg;
	uint32_t v = 42;
	pthread_setname_np(pthread_self(), FIRST_NAME);
	atomic_store(&first_tid, (int)syscall(SYS_gettid));
#ifdef ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		atomic_store(&filter_failed, errno);
		return NULL;
	}
	/* this thread only (no TSYNC) */
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
	                  &prog);
	if (fd < 0) {
		atomic_store(&filter_failed, errno);
		return NULL;
	}
	atomic_store(&listener, (int)fd); /* (a store: no system call) */
#endif
	syscall(SYS_getppid);            /* marker: the first event begins */
	posix_trace_event(ev_first, &v, sizeof v);
	syscall(SYS_getuid);             /* marker: it is over */
	return NULL;
}

static void *busy(void *arg)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;
	/* running, but recording only after the watched event: that one is
	 * the first of the process (the worst case: under record, nothing
	 * else has mapped the stream or set anything up) */
	while (!atomic_load(&stop_busy)) {
		if (atomic_load(&markers) == 2)
			posix_trace_event(ev_busy, &n, sizeof n), n++;
		usleep(500);
	}
	return NULL;
}

/* The scenario: BUSY threads recording, then a new thread's first event,
 * watched.  Returns the number of failed checks; *who the new thread. */
static int scenario(pthread_t *who)
{
	pthread_t b[BUSY], sup;
	int bad = 0;

	for (long i = 0; i < BUSY; i++)
		REQUIRE(pthread_create(&b[i], NULL, busy, (void *)(i << 32)) == 0);
	usleep(20000); /* they run by now */
	REQUIRE(pthread_create(&sup, NULL, supervisor, NULL) == 0);
	REQUIRE(pthread_create(who, NULL, first, NULL) == 0);
	pthread_join(*who, NULL);
	atomic_store(&sup_done, 1);
	pthread_join(sup, NULL);
	usleep(5000); /* (they record a few) */
	atomic_store(&stop_busy, 1);
	for (int i = 0; i < BUSY; i++)
		pthread_join(b[i], NULL);
	if (atomic_load(&filter_failed)) {
		errno = atomic_load(&filter_failed);
		printf("SKIP: seccomp user notification not available here: %s\n", strerror(errno));
		exit(77);
	}
	if (atomic_load(&markers) != 2) {
		fprintf(stderr, "the supervisor saw %d of the 2 markers\n", atomic_load(&markers));
		bad++;
	}
	for (int i = 0; i < atomic_load(&nseen); i++) {
		long nr = seen[i][0], a0 = seen[i][1], a1 = seen[i][2];
		int ok = (nr == SYS_prctl && a0 == PR_GET_NAME) ||
		         (nr == SYS_fcntl && a1 == F_OFD_GETLK) ||
		         (nr == SYS_futex && ((a1 & 127) == 1 /* FUTEX_WAKE */));
		if (!ok) {
			fprintf(stderr, "first event: system call %ld (%ld, %ld) on the event path\n", nr,
			        a0, a1);
			bad++;
		}
	}
	printf("first event: %d system call(s) between the markers, %d not of a new chunk\n",
	       atomic_load(&nseen), bad);
	return bad;
}

/* The new thread's event is in the trace once, and the trace names it. */
static void check_trace(trace_id_t trid, int is_log, pthread_t who, int tid)
{
	struct posix_trace_event_info ev;
	char buf[64];
	size_t len;
	int none = 0, found = 0;
	uint64_t when = 0;
	trace_event_id_t first_id = (trace_event_id_t)-1;

	CHECK(t_type_named(trid, "first", &first_id));
	while ((is_log ? posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &none)
	               : posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &none)) == 0 &&
	       !none)
		if (ev.posix_event_id == first_id) {
			found++;
			CHECK(pthread_equal(ev.posix_thread_id, who));
			CHECK_EQ(len, 4);
			when = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
			       (uint64_t)ev.posix_timestamp.tv_nsec;
		}
	CHECK_EQ(found, 1);
	struct pt_ext_thread th[256];
	size_t n = 0;
	int named = 0;
	CHECK_RC(pt_ext_threads(trid, 0, th, 256, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (th[i].thread == (uint64_t)who && th[i].tid == tid) {
			named += !strcmp(th[i].name, FIRST_NAME);
			CHECK(th[i].ts <= when + 1000000000ull);
		}
	CHECK(named >= 1);
}

/* --child: the scenario under `posixtrace record` (exit status: failures) */
static int child(void)
{
	pthread_t who;
	REQUIRE(posix_trace_eventid_open("busy", &ev_busy) == 0);
	REQUIRE(posix_trace_eventid_open("first", &ev_first) == 0);
	int bad = scenario(&who);
	printf("first thread %lu tid %d\n", (unsigned long)who, atomic_load(&first_tid));
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	/* before anything else: registered at load? */
	int mb = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	int mb_err = errno;

	T_BEGIN(120);
	if (mb != 0 && mb_err == ENOSYS)
		T_SKIP("no membarrier system call");
	if (argc > 1 && !strcmp(argv[1], "--child")) {
		if (mb != 0) /* and the scenario shows where it is done instead */
			fprintf(stderr, "child: not registered for membarrier at load: %s\n",
			        strerror(mb_err));
		return child() || mb != 0;
	}
#ifndef ARCH
	T_SKIP("the seccomp filter is written for x86-64 and aarch64");
#endif
	CHECK_EQ(mb, 0); /* EPERM: the library did not register at load */

	/* 1. a stream this process made itself */
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t who;
	REQUIRE(posix_trace_eventid_open("busy", &ev_busy) == 0);
	REQUIRE(posix_trace_eventid_open("first", &ev_first) == 0);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamsize(&attr, 1 << 20);
	CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	CHECK_EQ(scenario(&who), 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	check_trace(trid, 0, who, atomic_load(&first_tid));
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&attr);

	/* 2. under posixtrace record */
	char self[4096] = { 0 }, *out = NULL, *err = NULL;
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	cli_setup();
	const char *log = cli_path("first.ptlog");
	int rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--", self, "--child"), &out, &err);
	if (rc == 77)
		T_SKIP("seccomp user notification not available here");
	CHECK_EQ(rc, 0);
	if (rc != 0)
		fprintf(stderr, "record: %s%s", out ? out : "", err ? err : "");
	unsigned long th = 0;
	int tid = 0;
	const char *p = out ? strstr(out, "first thread ") : NULL;
	CHECK(p && sscanf(p, "first thread %lu tid %d", &th, &tid) == 2);
	int fd = open(log, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &trid) == 0);
	check_trace(trid, 1, (pthread_t)th, tid);
	posix_trace_close(trid);
	close(fd);
	free(out);
	free(err);
	T_END();
}
