/*
 * sec_setuid.c -- a program that runs with privileges its caller does not
 * have records nothing into its caller's streams (docs/security.md; issue
 * 41, finding 2).  Needs root (SKIP otherwise) and a scratch directory
 * not mounted nosuid.
 *
 * A set-user-ID-root copy of this program reads a root-only file and
 * records its token as an event (and holds a root-only "victim" file at
 * fd 50).
 *  1. `posixtrace record` of it by an unprivileged user: the command says
 *     the program runs with privileges the user does not have, the
 *     program's status comes through, and `posixtrace show` of the log (as
 *     the user) has no trace of the token; nor has the log itself.  The
 *     same recorded by root: the token is there (the check can see it).
 *  2. The user's own process (a child the user traces, with a hostile
 *     slot written into its control segment naming the victim's fd and
 *     inode) execs the program with POSIXTRACE_CTL naming its control
 *     memfd, kept open: the program adopts none of it -- the user's stream
 *     gets no token, and the victim file keeps its data.
 */
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "sec_util.h"
#include "../src/shm/layout.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

#define READ_MARK "--suid-read"
#define ATTACK_MARK "--ctl-attack"
#define VICTIM_FD 50

extern char **environ;

/* The set-user-ID program: argv: MARK secret [victim]. */
static int suid_main(int argc, char **argv)
{
	char tok[64] = "";
	int fd = open(argv[2], O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, tok, sizeof tok - 1);
	trace_event_id_t id;

	if (n <= 0)
		return 3;
	tok[n] = 0;
	if (argc > 3) {
		int v = open(argv[3], O_RDWR);
		if (v < 0 || dup2(v, VICTIM_FD) != VICTIM_FD)
			return 4;
	}
	if (posix_trace_eventid_open("secret", &id) != 0)
		return 5;
	for (int i = 0; i < 20; i++) {
		posix_trace_event(id, tok, strlen(tok));
		usleep(2000);
	}
	return 0;
}

/* As the user: trace a child of ours, write a hostile slot into its
 * control segment, let it exec the program with POSIXTRACE_CTL naming
 * that segment; print how many events carried the token. */
static int attack_main(char **argv)
{
	const char *prog = argv[2], *secret = argv[3], *victim = argv[4], *token = argv[5];
	int go[2], rep[2];
	struct stat vst;

	if (pipe(go) || pipe(rep) || stat(victim, &vst) != 0)
		return 20;
	pid_t c = fork();
	if (c == 0) {
		char ch, env[64];
		int fd = atoi(getenv("POSIXTRACE_CTL"));
		if (write(rep[1], &fd, sizeof fd) != sizeof fd || read(go[0], &ch, 1) != 1)
			_exit(21);
		fcntl(fd, F_SETFD, 0); /* kept across exec, as before the library's fix */
		snprintf(env, sizeof env, "POSIXTRACE_CTL=%d", fd);
		char *const av[] = { (char *)prog, READ_MARK, (char *)secret, (char *)victim, NULL };
		char *const ev[] = { env, NULL };
		syscall(SYS_execve, prog, av, ev); /* a raw exec: nothing of ours in between */
		_exit(22);
	}
	int cfd;
	if (c < 0 || t_read_full(rep[0], &cfd, sizeof cfd))
		return 23;
	trace_attr_t attr;
	trace_id_t trid;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamsize(&attr, 1 << 20);
	if (posix_trace_create(c, &attr, &trid) || posix_trace_start(trid))
		return 24;
	/* the hostile slot, in the child's control segment */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)c, cfd);
	int m = open(path, O_RDWR);
	struct pt_ctl *ctl = m < 0 ? MAP_FAILED
	                           : mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (ctl == MAP_FAILED)
		return 25;
	struct pt_ctl_slot *e = &ctl->slot[PT_SLOTS - 1];
	atomic_store(&e->off, 0);
	atomic_store(&e->size, 1 << 20);
	atomic_store(&e->fd, VICTIM_FD);
	atomic_store(&e->ino, (uint64_t)vst.st_ino);
	atomic_store(&e->lock_byte, 0);
	atomic_store(&e->flags, PT_CS_INHERITED);
	atomic_store(&e->ticket, 1000001);
	atomic_fetch_add(&ctl->live, PT_LIVE_BUMP);
	if (write(go[1], "g", 1) != 1)
		return 26;
	int st;
	waitpid(c, &st, 0);
	int leaked = 0, events = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		char buf[256];
		size_t len = 0;
		int none = 0;
		if (posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf - 1, &len, &none) || none)
			break;
		buf[len] = 0;
		events++;
		leaked += strstr(buf, token) != NULL;
	}
	printf("status %d events %d leaked %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128, events,
	       leaked);
	posix_trace_shutdown(trid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], READ_MARK))
		return suid_main(argc, argv);
	if (argc > 5 && !strcmp(argv[1], ATTACK_MARK))
		return attack_main(argv);
	T_BEGIN(120);
	if (access(PT_BUILD_DIR "/posixtrace", X_OK) != 0)
		T_SKIP("the posixtrace command is not built (make cli)");
	sec_setup();
	struct statvfs vfs;
	REQUIRE(statvfs(sec_dir, &vfs) == 0);
	if (vfs.f_flag & ST_NOSUID)
		T_SKIP("/tmp is mounted nosuid");
	const uid_t u = SEC_UID(3);
	const char *cli = sec_copy(PT_BUILD_DIR "/posixtrace", "posixtrace", 0755);
	const char *self = sec_copy("/proc/self/exe", "sec_setuid", 0755);
	const char *prog = sec_copy("/proc/self/exe", "suid-prog", 0755);
	REQUIRE(chown(prog, 0, 0) == 0 && chmod(prog, 04755) == 0);
	/* the root-only token and victim */
	char token[64];
	snprintf(token, sizeof token, "TOKEN-%d-%ld", (int)getpid(), (long)time(NULL));
	const char *secret = sec_path("secret");
	int fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0 && write(fd, token, strlen(token)) == (ssize_t)strlen(token));
	close(fd);
	const char *victim = sec_path("victim");
	static unsigned char pat[8192], got[8192];
	for (unsigned i = 0; i < sizeof pat; i++)
		pat[i] = (unsigned char)(i * 13 + 5);
	fd = open(victim, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0 && write(fd, pat, sizeof pat) == (ssize_t)sizeof pat);
	REQUIRE(ftruncate(fd, 2 << 20) == 0);
	close(fd);
	const char *udir = sec_path("user");
	REQUIRE(mkdir(udir, 0700) == 0 && chown(udir, u, u) == 0);

	/* 1. record by the user, then by root */
	char log[300], *out = NULL, *err = NULL;
	snprintf(log, sizeof log, "%s/u.ptlog", udir);
	int rc = sec_run_as(u, (char *const[]){ (char *)cli, "record", "-o", log, "--", (char *)prog,
	                                        READ_MARK, (char *)secret, NULL },
	                    NULL, NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK(sec_count(err, "runs with privileges you do not have (it is set-user-ID)") == 1);
	free(err);
	rc = sec_run_as(u, (char *const[]){ (char *)cli, "show", log, NULL }, NULL, &out, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sec_count(out, token), 0);
	CHECK_EQ(sec_count(out, "secret"), 0);
	free(out);
	free(err);
	struct stat lst; /* the log itself has no token either */
	REQUIRE(stat(log, &lst) == 0);
	{
		FILE *f = fopen(log, "rb");
		char *all = malloc((size_t)lst.st_size + 1);
		REQUIRE(f && all && fread(all, 1, (size_t)lst.st_size, f) == (size_t)lst.st_size);
		all[lst.st_size] = 0;
		CHECK(memmem(all, (size_t)lst.st_size, token, strlen(token)) == NULL);
		fclose(f);
		free(all);
	}
	snprintf(log, sizeof log, "%s/root.ptlog", sec_dir);
	rc = sec_run_as(0, (char *const[]){ (char *)cli, "record", "-o", log, "--", (char *)prog,
	                                    READ_MARK, (char *)secret, NULL },
	                NULL, NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sec_count(err, "privileges"), 0);
	free(err);
	rc = sec_run_as(0, (char *const[]){ (char *)cli, "show", log, NULL }, NULL, &out, NULL);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sec_count(out, token), 20);
	free(out);

	/* 2. POSIXTRACE_CTL and a hostile slot, from the user's own process */
	rc = sec_run_as(u, (char *const[]){ (char *)self, ATTACK_MARK, (char *)prog, (char *)secret,
	                                    (char *)victim, token, NULL },
	                NULL, &out, &err);
	CHECK_EQ(rc, 0);
	int status = -1, events = -1, leaked = -1;
	CHECK(out && sscanf(out, "status %d events %d leaked %d", &status, &events, &leaked) == 3);
	CHECK_EQ(status, 0);
	CHECK_EQ(leaked, 0);
	if (rc || leaked)
		fprintf(stderr, "attack: %s%s", out ? out : "", err ? err : "");
	free(out);
	free(err);
	fd = open(victim, O_RDONLY);
	CHECK(fd >= 0 && read(fd, got, sizeof got) == (ssize_t)sizeof got && !memcmp(got, pat, sizeof pat));
	close(fd);
	T_END();
}
