/*
 * noloss_futex.c -- a no-loss writer out of room sleeps on the segment's
 * room futex until a chunk is freed, and is woken by the free; a signal
 * handler that records while its thread sleeps there sleeps too, and both
 * get their room (ring/pool.c, wait_room).
 *
 * Own process, a 64 KiB stream in no-loss mode with a bound no step of
 * this test comes near (60 s), its log a pipe that nobody reads at first:
 * the flusher blocks in write() (its syscall in /proc: from then on it
 * frees nothing), and the producer thread runs out of room.  Then, read
 * from /proc/self/task/TID:
 *  - the producer is in a futex wait (syscall) on an address in a
 *    posixtrace mapping, at the room word's place in its page (the old
 *    wait slept 20 us at a time and yielded: nanosleep, sched_yield or
 *    running, never a futex on the segment);
 *  - while nothing is freed it stays asleep: its voluntary context
 *    switches over a stall of E ms are at most one per 10 ms look at the
 *    controller, plus 3 (the old wait made one per 20 us sleep, thousands);
 *  - SIGUSR1 to it: the handler records, finds no room either, and sleeps
 *    on the same word (nested in the first wait).
 * Then a child starts copying the pipe into a file: the flusher writes,
 * frees chunks and wakes them.  Every event is in the log, in order, the
 * handler's once; no OVERFLOW, no loss; the producer's posixtrace_noloss_wait
 * is there (it waited).
 * First the same across processes (across()): a traced child T, its
 * stream made by another child C whose flusher writes the pipe; T's
 * thread sleeps on room in its own mapping with a process-shared
 * FUTEX_WAIT (a private one would never be woken from C), stays asleep,
 * and C's flusher, once the pipe is read, wakes it: all of T's events kept.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "log_util.h"
#include "../src/shm/layout.h"
#include "../src/ext.h"

#define SMALL (64u << 10)
#define N 100000u

static char path[256];
static int pipe_wfd;
static trace_event_id_t uid;
static atomic_int tid, done, in_handler, handler_done;

static void put(uint32_t seq, uint32_t tno)
{
	unsigned char p[24];
	lu_make(p, seq, tno, sizeof p);
	posix_trace_event(uid, p, sizeof p);
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_store(&in_handler, 1);
	put(0, 1); /* thread number 1: the handler's writer */
	atomic_store(&handler_done, 1);
}

static void *producer(void *arg)
{
	(void)arg;
	atomic_store(&tid, (int)syscall(SYS_gettid));
	for (uint32_t i = 0; i < N; i++)
		put(i, 0);
	atomic_store(&done, 1);
	return NULL;
}

/* The syscall thread t of process pid is in (-1: running, or
 * unreadable) and its first two arguments. */
static long in_syscall(pid_t pid, int t, unsigned long *arg0, unsigned long *arg1)
{
	char f[64], buf[256];
	snprintf(f, sizeof f, "/proc/%d/task/%d/syscall", (int)pid, t);
	int fd = open(f, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	long nr = -1;
	*arg0 = *arg1 = 0;
	if (sscanf(buf, "%ld %lx %lx", &nr, arg0, arg1) < 1)
		return -1;
	return nr;
}

/* Is a in process pid's mapping of one of the library's memfds? */
static int in_segment(pid_t pid, unsigned long a)
{
	char f[64], line[512];
	int yes = 0;
	snprintf(f, sizeof f, "/proc/%d/maps", (int)pid);
	FILE *m = fopen(f, "r");

	if (!m)
		return 0;
	while (!yes && fgets(line, sizeof line, m)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			yes = strstr(line, "posixtrace") != NULL;
	}
	fclose(m);
	return yes;
}

/* Thread t of pid asleep on a stream's room word, process-shared (a
 * FUTEX_PRIVATE_FLAG wait is never woken from the controller's process). */
static int on_room(pid_t pid, int t)
{
	unsigned long a, op;
	return in_syscall(pid, t, &a, &op) == SYS_futex && op == FUTEX_WAIT &&
	       in_segment(pid, a) && a % 4096 == offsetof(struct pt_hdr, room) % 4096;
}

/* Is some thread of process fpid but its main one and t (the flusher) in
 * a write to fd, the log?  The pipe is full and nobody reads it: once
 * there, it stays, and frees nothing more. */
static int flusher_stuck(pid_t fpid, int t, int fd)
{
	char f[64];
	snprintf(f, sizeof f, "/proc/%d/task", (int)fpid);
	DIR *d = opendir(f);
	int yes = 0;

	if (!d)
		return 0;
	for (struct dirent *e; !yes && (e = readdir(d));) {
		int k = atoi(e->d_name);
		unsigned long a, b;
		long nr;
		if (k <= 0 || k == fpid || k == t)
			continue;
		nr = in_syscall(fpid, k, &a, &b);
		yes = (nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 ||
		       nr == SYS_pwritev) && (int)a == fd;
	}
	closedir(d);
	return yes;
}

/* Wait (10 s at most, then say no) until thread t of pid sleeps on room
 * and (fpid > 0) the flusher, in fpid, can free nothing more. */
static int wait_on_room(pid_t pid, int t, pid_t fpid)
{
	for (int i = 0; i < 10000; i++) {
		if ((fpid <= 0 || flusher_stuck(fpid, t, pipe_wfd)) && on_room(pid, t))
			return 1;
		usleep(1000);
	}
	return 0;
}

static long long vol_switches(pid_t pid, int t)
{
	char f[64], line[256];
	long long v = -1;
	snprintf(f, sizeof f, "/proc/%d/task/%d/status", (int)pid, t);
	FILE *s = fopen(f, "r");
	REQUIRE(s);
	while (fgets(line, sizeof line, s))
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
			break;
	fclose(s);
	return v;
}

/* Asleep while nothing is freed: at most one wake per 10 ms look at the
 * controller (plus 3), over about 300 ms. */
static void stays_asleep(pid_t pid, int t)
{
	long long v0 = vol_switches(pid, t), t0 = lu_mono_ms();
	usleep(300000);
	long long v1 = vol_switches(pid, t), e = lu_mono_ms() - t0;
	if (v1 - v0 > e / 10 + 3)
		fprintf(stderr, "%lld voluntary switches in %lld ms of waiting\n", v1 - v0, e);
	CHECK(v1 - v0 <= e / 10 + 3);
}

/* A child copying the pipe rfd into file out until its end (wfd: the
 * pipe's other end, not to be held open there; -1: none). */
static pid_t copier(int rfd, int wfd, int out)
{
	pid_t rd = fork();
	REQUIRE(rd >= 0);
	if (rd)
		return rd;
	static char buf[65536];
	alarm(60);
	if (wfd >= 0)
		close(wfd);
	for (ssize_t r; (r = read(rfd, buf, sizeof buf)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || write(out, buf, (size_t)r) != r)
			_exit(3);
	}
	_exit(0);
}

/* ---------------------------------------------- across processes
 * T, a child, records N events from its main thread into a stream that
 * C, another child, made for it (posix_trace_create_withlog(T, ...)),
 * C's flusher writing the log into a pipe this process reads only once
 * T's thread sleeps on room, in T's mapping, a process-shared futex, and
 * C's flusher is stuck in its write.  Then C's flusher frees chunks and
 * wakes T from its own process: every event of T in the log, no loss. */
static struct xsh {
	atomic_int go, started, created_rc, done, stop, shut;
} *xs;

static void across(void)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	pipe_wfd = p[1];
	xs = mmap(NULL, sizeof *xs, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(xs != MAP_FAILED);
	memset(xs, 0, sizeof *xs);
	pid_t t = fork();
	REQUIRE(t >= 0);
	if (t == 0) {
		alarm(60);
		close(p[0]);
		close(p[1]);
		while (!atomic_load(&xs->go))
			usleep(100);
		for (uint32_t i = 0; i < N; i++) {
			unsigned char b[24];
			lu_make(b, i, 0, sizeof b);
			posix_trace_event(17, b, sizeof b);
		}
		atomic_store(&xs->done, 1);
		while (!atomic_load(&xs->stop))
			usleep(1000);
		_exit(0);
	}
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		trace_attr_t a;
		trace_id_t trid;
		alarm(60);
		close(p[0]);
		posix_trace_attr_init(&a);
		posix_trace_attr_setstreamsize(&a, SMALL);
		posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
		posixtrace_attr_setnoloss(&a, 60000);
		int rc = posix_trace_create_withlog(t, &a, p[1], &trid);
		if (!rc)
			rc = posix_trace_start(trid);
		atomic_store(&xs->created_rc, rc);
		atomic_store(&xs->started, 1);
		if (rc)
			_exit(1);
		while (!atomic_load(&xs->shut))
			usleep(1000);
		_exit(posix_trace_shutdown(trid) == 0 ? 0 : 1);
	}
	close(p[1]);
	for (int i = 0; i < 10000 && !atomic_load(&xs->started); i++)
		usleep(1000);
	REQUIRE(atomic_load(&xs->started));
	CHECK_RC(atomic_load(&xs->created_rc), 0);
	atomic_store(&xs->go, 1);

	CHECK(wait_on_room(t, t, c)); /* (T records from its main thread) */
	CHECK_EQ(atomic_load(&xs->done), 0);
	stays_asleep(t, t);
	CHECK(wait_on_room(t, t, c));

	int out = lu_tmpfile(path, sizeof path, "noloss_futex", O_WRONLY);
	pid_t rd = copier(p[0], -1, out);
	close(p[0]);
	for (int i = 0; i < 30000 && !atomic_load(&xs->done); i++)
		usleep(1000);
	CHECK_EQ(atomic_load(&xs->done), 1);
	atomic_store(&xs->stop, 1);
	CHECK_EQ(t_wait_for(t, 30000), 0);
	atomic_store(&xs->shut, 1);
	CHECK_EQ(t_wait_for(c, 30000), 0);
	CHECK_EQ(t_wait_for(rd, 30000), 0);
	close(out);

	int n = lu_load(path, NULL, NULL), per[1];
	CHECK_EQ(lu_user(n, 17, t, 1, 1, NULL, per), (int)N);
	CHECK_EQ(lu_count(n, POSIX_TRACE_OVERFLOW, -1), 0);
	CHECK(lu_count(n, PT_EXT_NOLOSS_WAIT, t) >= 1);
	lu_no_damage(n);
	lu_rmfile(path);
	munmap(xs, sizeof *xs);
}

int main(void)
{
	T_BEGIN(100);
	int fd = open("/proc/self/syscall", O_RDONLY);
	if (fd < 0)
		T_SKIP("/proc/PID/task/TID/syscall cannot be read here (a kernel without "
		       "CONFIG_HAVE_ARCH_TRACEHOOK, or ptrace access refused)");
	close(fd);
	across(); /* first: forks while this process has no thread */

	int p[2];
	REQUIRE(pipe(p) == 0);
	pipe_wfd = p[1];
	REQUIRE(posix_trace_eventid_open("noloss_futex", &uid) == 0);

	trace_attr_t a;
	trace_id_t trid;
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamsize(&a, SMALL);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	CHECK_RC(posixtrace_attr_setnoloss(&a, 60000), 0);
	REQUIRE(posix_trace_create_withlog(0, &a, p[1], &trid) == 0);
	posix_trace_attr_destroy(&a);
	CHECK_RC(posix_trace_start(trid), 0);

	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, producer, NULL) == 0);
	while (!atomic_load(&tid))
		usleep(100);
	int t = atomic_load(&tid);

	/* out of room, the flusher stuck in its write to the full pipe:
	 * asleep on the room futex, not polling */
	pid_t me = getpid();
	CHECK(wait_on_room(me, t, me));
	CHECK_EQ(atomic_load(&done), 0);
	stays_asleep(me, t);
	CHECK(wait_on_room(me, t, me)); /* (back on it after each 10 ms look) */

	/* a handler that records meanwhile waits too (nested), not deadlocked */
	REQUIRE(pthread_kill(th, SIGUSR1) == 0);
	for (int i = 0; i < 10000 && !atomic_load(&in_handler); i++)
		usleep(1000);
	CHECK_EQ(atomic_load(&in_handler), 1);
	CHECK(wait_on_room(me, t, 0));
	CHECK_EQ(atomic_load(&handler_done), 0);

	/* the flusher writes again, frees chunks, wakes both */
	int out = lu_tmpfile(path, sizeof path, "noloss_futex", O_WRONLY);
	pid_t rd = copier(p[0], p[1], out);
	close(p[0]);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&handler_done), 1);
	CHECK_EQ(atomic_load(&done), 1);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(p[1]);
	CHECK_EQ(t_wait_for(rd, 30000), 0);
	close(out);

	int n = lu_load(path, NULL, NULL), per[2];
	CHECK_EQ(lu_user(n, uid, getpid(), 2, 1, NULL, per), (int)N + 1);
	CHECK_EQ(per[0], (int)N);
	CHECK_EQ(per[1], 1);
	CHECK_EQ(lu_count(n, POSIX_TRACE_OVERFLOW, -1), 0);
	CHECK(lu_count(n, PT_EXT_NOLOSS_WAIT, getpid()) >= 1);
	lu_no_damage(n);
	lu_rmfile(path);
	T_END();
}
