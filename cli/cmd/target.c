/*
 * target.c -- the process being traced: a program we start (paused until
 * the stream is running, so its first event is recorded) or a running pid;
 * knowing when it ended; the signals the command handles.
 *
 * The launched child waits on a pipe before execvp().  A second pipe,
 * close-on-exec, tells the parent first that the child runs (one byte),
 * then that exec happened (EOF) or failed (the errno).  The library's fork
 * handler gives the child its own control segment, which survives exec,
 * so the stream made for the child's pid follows it into the program --
 * if the stream is made after that handler ran: until then the child shows
 * only its parent's segment, and a posix_trace_create() that sees nothing
 * else for 2 s (a loaded machine can leave a new child unscheduled) fails
 * with EAGAIN.  So target_launch() returns only once the child has said it
 * runs.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGCHLD are caught by a handler that only
 * counts them (and wakes the main loop through a pipe); the loop takes
 * them with signals_take().  They stay blocked in every other thread.  A stop signal the loop has not taken within
 * STOP_GRACE_S seconds -- the main thread is stuck, in a write to a full
 * pipe for instance -- ends the command by that signal, and so does a
 * second one a second or more after the first: every command stops on
 * SIGINT and SIGTERM.  A signal the terminal sent (si_code SI_KERNEL)
 * also reached the child, which is in our process group: it is not sent
 * again.
 * One of the first three that we were started with ignored (nohup, a
 * script's background job) stays ignored, here and in the child: a
 * blocked signal is never discarded, so sigtimedwait() would take it.
 * SIGCHLD found ignored is set to its default here, or the kernel would
 * reap the program unseen (no SIGCHLD, waitpid() failing with ECHILD) and
 * the command would wait for ever; the program still starts with it
 * ignored, as it would have without us.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"

static sigset_t orig_mask, taken;
static struct sigaction orig_chld;
static int chld_reset;
static int wake_pipe[2] = { -1, -1 };

/* What the handler counted, by signal (any thread may run it). */
static _Atomic int sig_count[NSIG], sig_tty[NSIG];
static _Atomic uint64_t stop_waiting_since; /* ns; 0: no stop signal waiting */
#define STOP_GRACE_S 3 /* a stop signal not taken by then ends the command */

static uint64_t mono_ns_safe(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic int stop_sig;

/* The main loop did not take a stop signal in time: end by it. */
static void stop_now(int sig)
{
	sigset_t one;
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

static void on_alarm(int sig)
{
	(void)sig;
	if (atomic_load(&stop_waiting_since))
		stop_now(atomic_load(&stop_sig));
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	(void)uc;
	if (sig != SIGCHLD) {
		uint64_t t = mono_ns_safe(), since = atomic_load(&stop_waiting_since);
		if (since && t - since >= 1000000000u)
			stop_now(sig); /* a second one, a second later: stop */
		if (!since) {
			atomic_store(&stop_sig, sig);
			atomic_store(&stop_waiting_since, t);
			alarm(STOP_GRACE_S);
		}
	}
	atomic_store(&sig_tty[sig], si && si->si_code == SI_KERNEL);
	atomic_fetch_add(&sig_count[sig], 1);
	if (write(wake_pipe[1], "s", 1) < 0) { /* full: the loop has enough to wake it */
	}
	errno = e;
}

void signals_block(void)
{
	static const int stop[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	sigemptyset(&taken);
	for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++)
		if (sigaction(stop[i], NULL, &sa) != 0 || sa.sa_handler != SIG_IGN)
			sigaddset(&taken, stop[i]);
	sigaddset(&taken, SIGCHLD);
	if (sigaction(SIGCHLD, NULL, &orig_chld) == 0 &&
	    (orig_chld.sa_handler == SIG_IGN || (orig_chld.sa_flags & SA_NOCLDWAIT)))
		chld_reset = 1; /* our handler replaces it; the child gets it back */
	sigprocmask(SIG_BLOCK, &taken, &orig_mask);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return; /* then they stay blocked, and nothing takes them */
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_mask = taken;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&taken, sig) == 1)
			sigaction(sig, &sa, NULL);
	struct sigaction al;
	memset(&al, 0, sizeof al);
	al.sa_handler = on_alarm;
	al.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &al, NULL);
}

/* The main thread takes the signals from now on; threads made before
 * (the library's flusher, the relay's) keep them blocked, so only this
 * one is ever interrupted by the handler.  Called by the first
 * signals_take(), or earlier by a command whose loop may block first. */
void signals_unblock(void)
{
	static int done;
	if (!done && wake_pipe[0] >= 0) {
		done = 1;
		pthread_sigmask(SIG_UNBLOCK, &taken, NULL);
	}
}

static int take(int sig, int *from_tty)
{
	int c = atomic_load(&sig_count[sig]);
	while (c > 0 && !atomic_compare_exchange_weak(&sig_count[sig], &c, c - 1))
		;
	if (c <= 0)
		return 0;
	*from_tty = atomic_load(&sig_tty[sig]);
	return sig;
}

int signals_take(uint64_t timeout_ns, int *from_tty)
{
	static const int order[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };
	char buf[64];

	if (wake_pipe[0] < 0)
		return 0;
	signals_unblock();
	for (int pass = 0; pass < 2; pass++) {
		while (read(wake_pipe[0], buf, sizeof buf) > 0)
			;
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
			if (take(order[i], from_tty)) {
				if (order[i] != SIGCHLD) {
					atomic_store(&stop_waiting_since, 0);
					alarm(0);
				}
				return order[i];
			}
		if (pass || !timeout_ns)
			break;
		struct pollfd p = { wake_pipe[0], POLLIN, 0 };
		struct timespec ts = { (time_t)(timeout_ns / 1000000000u),
		                       (long)(timeout_ns % 1000000000u) };
		ppoll(&p, 1, &ts, NULL);
	}
	return 0;
}

#define JOIN_VAR "POSIXTRACE_JOIN="

int target_launch(struct target *t, char **argv)
{
	int go[2], ex[2];
	/* the program's environment, made before the fork: ours without
	 * POSIXTRACE_JOIN, and room for the one the parent sends with "go" */
	static char join_var[sizeof JOIN_VAR + sizeof t->join];
	size_t nenv = 0, m = 0;
	char **envp;

	memset(t, 0, sizeof *t);
	t->pidfd = t->go_fd = t->exec_fd = -1;
	while (environ[nenv])
		nenv++;
	if (!(envp = malloc((nenv + 2) * sizeof *envp))) {
		err_msg("out of memory");
		return -1;
	}
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], JOIN_VAR, sizeof JOIN_VAR - 1) != 0)
			envp[m++] = environ[i];
	envp[m] = NULL;
	memcpy(join_var, JOIN_VAR, sizeof JOIN_VAR - 1);
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		err_msg("pipe: %s", strerror(errno));
		free(envp);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err_msg("fork: %s", strerror(errno));
		free(envp);
		return -1;
	}
	if (pid == 0) {
		char c = 'r';
		size_t j = sizeof JOIN_VAR - 1;
		/* fork() has returned here: the library's fork handler has made
		 * this process's control segment; the parent may make streams */
		if (write(ex[1], &c, 1) != 1)
			_exit(127);
		/* the program starts with the dispositions and mask we found */
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&taken, sig) == 1)
				signal(sig, SIG_DFL);
		if (chld_reset)
			sigaction(SIGCHLD, &orig_chld, NULL);
		sigprocmask(SIG_SETMASK, &orig_mask, NULL);
		close(go[1]);
		close(ex[0]);
		ssize_t n;
		while ((n = read(go[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1 || c != 'g') /* the parent gave up: do not run untraced */
			_exit(127);
		/* then the value of POSIXTRACE_JOIN, up to a NUL ("": none) */
		while (j < sizeof join_var - 1 && (n = read(go[0], &c, 1)) == 1 && c)
			join_var[j++] = c;
		join_var[j] = 0;
		if (j > sizeof JOIN_VAR - 1) {
			envp[m++] = join_var;
			envp[m] = NULL;
		}
		execvpe(argv[0], argv, envp);
		int e = errno;
		if (write(ex[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	free(envp);
	close(go[0]);
	close(ex[1]);
	t->pid = pid;
	t->child = 1;
	t->go_fd = go[1];
	t->exec_fd = ex[0];
	/* the child runs: no stream is made for it before (see the top) */
	char c = 0;
	ssize_t n;
	while ((n = read(ex[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 || c != 'r') {
		err_msg("cannot start %s: the new process %s", argv[0],
		        n < 0 ? strerror(errno) : "ended before it could run");
		close(go[1]);
		close(ex[0]);
		t->go_fd = t->exec_fd = -1;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		t->pid = 0;
		t->child = 0;
		return -1;
	}
	return 0;
}

/* Let the child exec.  0 once the program runs, else the exec errno. */
int target_release(struct target *t)
{
	int e = 0;
	ssize_t n;
	char go[2 + sizeof t->join];
	size_t len = strnlen(t->join, sizeof t->join - 1);

	go[0] = 'g'; /* then the join value and its NUL, in one write (a pipe's
	              * atomic size): the child reads it all or sees EOF */
	memcpy(go + 1, t->join, len);
	go[1 + len] = 0;
	if (write(t->go_fd, go, len + 2) != (ssize_t)(len + 2))
		e = errno ? errno : EIO;
	close(t->go_fd);
	t->go_fd = -1;
	if (e)
		return e;
	while ((n = read(t->exec_fd, &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(t->exec_fd);
	t->exec_fd = -1;
	return n == (ssize_t)sizeof e ? e : 0;
}

int target_attach(struct target *t, pid_t pid)
{
	memset(t, 0, sizeof *t);
	t->go_fd = t->exec_fd = -1;
	t->pid = pid;
#ifdef SYS_pidfd_open
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	t->pidfd = -1;
#endif
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		if (t->pidfd >= 0)
			close(t->pidfd);
		return -1;
	}
	return 0;
}

/* Does pid have the library's control segment?  Every process that loads
 * libposixtrace gets a memfd named "posixtrace-ctl" (src/producer/ctlseg.c), which
 * shows in /proc/PID/fd; without one posix_trace_create() still succeeds
 * (src/control/slots.c), but the process never records an event.  1 yes, 0 no,
 * -1 cannot tell (not ours to look at, or gone). */
static int has_ctl(pid_t pid)
{
	static const char want[] = "/memfd:posixtrace-ctl";
	char path[64], link[64];
	struct dirent *de;
	DIR *d;
	int found = 0;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while (!found && (de = readdir(d)) != NULL) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
		found = n >= (ssize_t)sizeof want - 1 && !memcmp(link, want, sizeof want - 1);
	}
	closedir(d);
	return found;
}

/* Tracing such a process is legal, but yields only our own events: an
 * empty trace would look like a quiet program, so it is refused.  0: it
 * uses the library (or we cannot tell: said), 1 after a message. */
int target_check_library(pid_t pid, const char *what)
{
	int r = has_ctl(pid);

	if (r == 0) {
		err_msg("pid %d does not use libposixtrace (no posixtrace-ctl segment in "
		        "/proc/%d/fd): nothing it does could be %s", (int)pid, (int)pid, what);
		return 1;
	}
	if (r < 0)
		err_msg("pid %d: cannot tell whether it uses libposixtrace (/proc/%d/fd is not "
		        "ours to read): if it does not, only the tracer's own events will be %s",
		        (int)pid, (int)pid, what);
	return 0;
}

int exec_status(int e)
{
	return e == ENOENT || e == ENOTDIR ? 127 : 126;
}

/* The file execvp() would run for prog (into buf), or NULL. */
static const char *exec_path(const char *prog, char *buf, size_t cap)
{
	if (strchr(prog, '/'))
		return prog;
	const char *path = getenv("PATH");
	for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		struct stat st;
		snprintf(buf, cap, "%.*s%s%s", (int)n, p, n ? "/" : "", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* Would prog run with privileges this user does not have (the kernel's
 * AT_SECURE: set-user-ID or set-group-ID to another id, or file
 * capabilities)?  Then the library in it adopts nothing we prepared and
 * only a controller allowed to ptrace it could reach it: nothing it
 * records reaches our stream (docs/security.md).  The reason, or NULL. */
static const char *privileged(const char *prog)
{
	char buf[4096];
	const char *path = exec_path(prog, buf, sizeof buf);
	struct stat st;
	struct statvfs vfs;

	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return "it is set-user-ID";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getegid()) {
		gid_t g[256];
		int n = getgroups(256, g), member = 0;
		for (int i = 0; i < n; i++)
			member |= g[i] == st.st_gid;
		if (!member)
			return "it is set-group-ID";
	}
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "it has file capabilities";
	return NULL;
}

/* Say so when the program to trace runs with privileges we do not have. */
void target_check_privileged(char **argv, const char *what)
{
	const char *why = privileged(argv[0]);
	if (why)
		err_msg("%s runs with privileges you do not have (%s): it cannot be traced by you, "
		        "and nothing it records will be %s", argv[0], why, what);
}

/* Has a process that is not our child ended?  (A zombie has.) */
static int gone(pid_t pid)
{
	struct pstat ps;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 1;
	return read_stat(pid, &ps) != 0 || ps.state == 'Z' || ps.state == 'X';
}

/* 1 once the target has ended.  Also reaps orphans we adopted as a
 * subreaper. */
int target_poll(struct target *t)
{
	if (t->exited)
		return 1;
	if (!t->child) {
		if (t->pidfd >= 0) {
			struct pollfd p = { t->pidfd, POLLIN, 0 };
			if (poll(&p, 1, 0) == 1)
				t->exited = 1;
		} else if (gone(t->pid)) {
			t->exited = 1;
		}
		return t->exited;
	}
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p <= 0)
			break;
		if (p == t->pid) {
			t->exited = 1;
			t->status = st;
		}
	}
	return t->exited;
}

void target_forward(struct target *t, int sig)
{
	if (!t->exited && t->pid > 0)
		kill(t->pid, sig);
}

int target_exit_code(const struct target *t)
{
	if (WIFEXITED(t->status))
		return WEXITSTATUS(t->status);
	if (WIFSIGNALED(t->status))
		return 128 + WTERMSIG(t->status);
	return 1;
}
