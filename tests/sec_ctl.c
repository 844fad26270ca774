/*
 * sec_ctl.c -- the control segment reaches no other program, and a
 * hostile writer of it can only make the process lose its own streams
 * (docs/security.md; issue 41, finding 1).
 *
 * This root process traces itself with an inherited stream.
 *  1. Leaks: a shell started with system(), one started with
 *     posix_spawn(), and one a forked child (which inherits the stream)
 *     execs, each list the inodes of their descriptors: this process's
 *     control memfd is among none of them.
 *  2. A forked child that inherits the stream and execs this program
 *     again records N events into it (its own exec keeps it traced: the
 *     new image opens the memfd again where this process holds it); one
 *     that becomes another user first (setuid, or setpriv in the exec'd
 *     image) records none: the kernel refuses it the memfd.
 *  3. A hostile slot written into this process's control segment, naming
 *     a 0600 file's descriptor and inode (as a leaked child could have):
 *     the file keeps its data and the descriptor stays open.  A slot that
 *     names the control pages themselves: the stream still records.  Then
 *     random words over every slot while threads record: no crash, the
 *     file intact.
 * Parts 1 and 2 as unprivileged users need root (SKIP otherwise).
 */
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "sec_util.h"
#include "../src/shm/layout.h"

#define N 200
#define MARK "--sec-child"

extern char **environ;
static trace_event_id_t child_id;

struct payload { int pid, seq; };

/* The exec'd image: N events, then exit. */
static int child_main(void)
{
	if (posix_trace_eventid_open("sec-child", &child_id) != 0)
		return 3;
	for (int i = 0; i < N; i++) {
		struct payload p = { (int)getpid(), i };
		posix_trace_event(child_id, &p, sizeof p);
	}
	return 0;
}

static uint64_t ino_of(int fd)
{
	struct stat st;
	REQUIRE(fstat(fd, &st) == 0);
	return (uint64_t)st.st_ino;
}

static int ctl_fd(void)
{
	const char *e = getenv("POSIXTRACE_CTL");
	REQUIRE(e != NULL);
	return atoi(e);
}

/* The inodes of the shell's descriptors, one a line, into file out. */
static const char *list_cmd(const char *out, char *buf, size_t cap)
{
	snprintf(buf, cap, "for f in /proc/$$/fd/*; do stat -L -c %%i \"$f\"; done > %s 2>/dev/null; exit 0",
	         out);
	return buf;
}

static int has_ino(const char *file, uint64_t ino)
{
	char *s = sec_slurp(file), want[32];
	snprintf(want, sizeof want, "%llu\n", (unsigned long long)ino);
	int found = 0;
	for (char *p = s; p && *p;) {
		if (!strncmp(p, want, strlen(want)))
			found = 1;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	int lines = sec_count(s, "\n");
	free(s);
	REQUIRE(lines >= 3); /* the listing ran: at least stdin, stdout, stderr */
	return found;
}

static void wait_ok(pid_t p)
{
	int st;
	REQUIRE(waitpid(p, &st, 0) == p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Events of the child kind per pid in the stream, read dry. */
static int count_child(trace_id_t trid, pid_t pid)
{
	struct posix_trace_event_info ev;
	struct payload p;
	size_t len;
	static int seen[65536];
	static int total;
	for (;;) {
		if (t_try(trid, &ev, &p, sizeof p, &len) != 0)
			break;
		if (ev.posix_event_id == child_id && len == sizeof p && p.pid == (int)ev.posix_pid &&
		    p.pid >= 0 && p.pid < 65536)
			seen[p.pid]++;
		total++;
	}
	return pid >= 0 && pid < 65536 ? seen[pid] : -1;
}

static pid_t fork_exec_child(const char *self, uid_t as, const char *setpriv_uid)
{
	fflush(NULL);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		if (as && sec_become(as) != 0)
			_exit(10);
		if (setpriv_uid) {
			char re[32], rg[32];
			snprintf(re, sizeof re, "--reuid=%s", setpriv_uid);
			snprintf(rg, sizeof rg, "--regid=%s", setpriv_uid);
			execl("/usr/bin/setpriv", "setpriv", re, rg, "--clear-groups", self, MARK,
			      (char *)NULL);
		} else {
			execl(self, self, MARK, (char *)NULL);
		}
		_exit(11);
	}
	return c;
}

static trace_event_id_t rec_id;
static atomic_int stop;

static void *recorder(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load(&stop); i++)
		posix_trace_event(rec_id, &i, sizeof i);
	return NULL;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], MARK))
		return child_main();
	T_BEGIN(60);
	sec_setup();
	const char *self = sec_copy("/proc/self/exe", "sec_ctl", 0755);

	trace_attr_t attr;
	trace_id_t trid;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED);
	posix_trace_attr_setstreamsize(&attr, 4 << 20);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_eventid_open("sec-child", &child_id) == 0);
	REQUIRE(posix_trace_eventid_open("sec-rec", &rec_id) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	uint64_t my_ino = ino_of(ctl_fd());
	char cmd[512];

	/* 1. no program started from here holds our control memfd */
	const char *out = sec_path("fds-system");
	REQUIRE(system(list_cmd(out, cmd, sizeof cmd)) == 0);
	CHECK(!has_ino(out, my_ino));
	out = sec_path("fds-spawn");
	pid_t p;
	char *sh_argv[] = { "sh", "-c", (char *)list_cmd(out, cmd, sizeof cmd), NULL };
	REQUIRE(posix_spawn(&p, "/bin/sh", NULL, NULL, sh_argv, environ) == 0);
	wait_ok(p);
	CHECK(!has_ino(out, my_ino));
	out = sec_path("fds-forked");
	fflush(NULL);
	if ((p = fork()) == 0) {
		posix_trace_event(rec_id, "x", 1); /* the child is traced (inherited) */
		execl("/bin/sh", "sh", "-c", list_cmd(out, cmd, sizeof cmd), (char *)NULL);
		_exit(12);
	}
	REQUIRE(p > 0);
	wait_ok(p);
	CHECK(!has_ino(out, my_ino));

	/* 2. an exec'd child keeps recording into the inherited stream only
	 * while it may ptrace this process */
	pid_t same = fork_exec_child(self, 0, NULL);
	wait_ok(same);
	pid_t other = fork_exec_child(self, SEC_UID(1), NULL);
	wait_ok(other);
	CHECK_EQ(count_child(trid, same), N);
	CHECK_EQ(count_child(trid, other), 0);
	if (access("/usr/bin/setpriv", X_OK) == 0) {
		char u[16];
		pid_t via_root = fork_exec_child(self, 0, "0");
		wait_ok(via_root);
		snprintf(u, sizeof u, "%u", (unsigned)SEC_UID(2));
		pid_t via_user = fork_exec_child(self, 0, u);
		wait_ok(via_user);
		CHECK_EQ(count_child(trid, via_root), N);
		CHECK_EQ(count_child(trid, via_user), 0);
	} else {
		printf("note: no /usr/bin/setpriv, its case skipped\n");
	}

	/* 3. hostile slots */
	const char *vpath = sec_path("victim");
	int v = open(vpath, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(v >= 0);
	static unsigned char pat[8192], got[8192];
	for (unsigned i = 0; i < sizeof pat; i++)
		pat[i] = (unsigned char)(i * 7 + 1);
	REQUIRE(write(v, pat, sizeof pat) == (ssize_t)sizeof pat);
	REQUIRE(ftruncate(v, 2 << 20) == 0); /* room for a "stream" of 1 MiB */
	struct pt_ctl *c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ctl_fd(), 0);
	REQUIRE(c != MAP_FAILED);
	unsigned s = PT_SLOTS - 1;
	REQUIRE(atomic_load(&c->slot[s].ticket) == 0);
	struct pt_ctl_slot *e = &c->slot[s];
	/* a stream "in" the victim file, its controller dead (no lock held) */
	atomic_store(&e->off, 0);
	atomic_store(&e->size, 1 << 20);
	atomic_store(&e->fd, v);
	atomic_store(&e->ino, ino_of(v));
	atomic_store(&e->lock_byte, 0);
	atomic_store(&e->flags, PT_CS_INHERITED);
	atomic_store(&e->ticket, 1000001);
	atomic_fetch_add(&c->live, PT_LIVE_BUMP);
	for (int i = 0; i < 10; i++)
		posix_trace_event(rec_id, &i, sizeof i);
	/* the same, not inherited */
	atomic_store(&e->flags, 0);
	atomic_store(&e->ticket, 1000003);
	atomic_fetch_add(&c->live, PT_LIVE_BUMP);
	for (int i = 0; i < 10; i++)
		posix_trace_event(rec_id, &i, sizeof i);
	CHECK(fcntl(v, F_GETFD) >= 0);
	CHECK(pread(v, got, sizeof got, 0) == (ssize_t)sizeof got && !memcmp(got, pat, sizeof pat));
	/* a slot naming our control pages, its controller dead */
	s = PT_SLOTS - 2;
	e = &c->slot[s];
	REQUIRE(atomic_load(&e->ticket) == 0);
	atomic_store(&e->off, 0);
	atomic_store(&e->size, PT_CTL_SIZE);
	atomic_store(&e->fd, -1);
	atomic_store(&e->ino, my_ino);
	atomic_store(&e->lock_byte, s);
	atomic_store(&e->flags, 0);
	atomic_store(&e->ticket, 1000005);
	atomic_fetch_add(&c->live, PT_LIVE_BUMP);
	count_child(trid, -1); /* read dry */
	struct posix_trace_event_info ev;
	int k, n = 0;
	size_t len;
	for (int i = 0; i < 10; i++)
		posix_trace_event(rec_id, &i, sizeof i);
	while (t_try(trid, &ev, &k, sizeof k, &len) == 0)
		n += ev.posix_event_id == rec_id;
	CHECK_EQ(n, 10);
	CHECK_EQ(atomic_load(&c->magic), PT_CTL_MAGIC);
	/* random words over every slot (and the live word) while threads record */
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&th[i], NULL, recorder, NULL) == 0);
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 64; i++) {
			uint64_t r = rnd(&seed);
			unsigned w = (unsigned)(r % (sizeof(c->slot) / (sizeof(uint64_t))));
			uint64_t val = rnd(&seed);
			if (r >> 60 == 0)
				val = v | (uint64_t)v << 32; /* the victim's fd */
			else if (r >> 60 == 1)
				val = ino_of(v);
			atomic_store((_Atomic uint64_t *)((char *)c->slot + w * sizeof(uint64_t)), val);
		}
		atomic_fetch_add(&c->live, PT_LIVE_BUMP | (uint32_t)(rnd(&seed) & PT_LIVE_MASK));
		posix_trace_event(rec_id, "y", 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 300000000L);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(fcntl(v, F_GETFD) >= 0);
	CHECK(pread(v, got, sizeof got, 0) == (ssize_t)sizeof got && !memcmp(got, pat, sizeof pat));
	posix_trace_shutdown(trid);
	T_END();
}
