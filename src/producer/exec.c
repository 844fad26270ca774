/*
 * exec.c -- the process's own exec keeps its control segment.
 *
 * The control memfd, and the descriptor a forked child holds for each
 * stream it inherited, are close-on-exec, so no other program gets them:
 * not a child started with system() or posix_spawn(), not one forked and
 * exec'd, not a program that a child of a traced process runs.  A traced
 * process's own exec through the exec functions of this library (which
 * stand in for the C library's: execve, execv, execvp, execvpe, execl,
 * execlp, execle, fexecve) keeps its control segment open for the new
 * image and names it in its environment (POSIXTRACE_CTL, read back by
 * inherit.c), so the streams follow the process into the new program from
 * its first event.  An inherited stream's memfd -- its parent's control
 * memfd -- is never kept: the environment names where the parent holds
 * it, and the new image opens it there again through /proc, which the
 * kernel allows only under the ptrace rule (pt_inherit_adopt).
 *
 * They are kept only when that is the process's own exec: not in a child
 * sharing its memory (vfork(), whose pid differs), not once the process
 * changed its user or group ids since the library was loaded (the new
 * image may belong to someone its controller did not trace), not in a
 * process started with privileges (AT_SECURE), and only while a stream
 * traces it or a controller is making a stream for it (pt_ctl.creating).
 * What it decides is written in the segment (pt_ctl.exec) before the
 * exec, so a controller that found the segment in the window learns that
 * the exec closes it, and looks for the new image's.  An exec the library
 * does not see (a raw system call, or one made inside another library)
 * keeps nothing: the new image starts untraced.
 *
 * Before all that, the process's own exec shuts down the streams this
 * image controls, "as if an explicit call were made to the
 * posix_trace_shutdown() function" (posix_trace_shutdown(3)): their logs
 * get every event recorded and the STOP.  Only an exec that should succeed
 * does so: the file exists, is a regular file and may be executed (for
 * execvp, execlp and execvpe, somewhere in PATH); a program that tries
 * several paths in turn keeps its streams through the attempts that fail
 * at once.  An exec that fails later (E2BIG, ENOMEM, a bad ELF file) finds
 * its streams shut down, as docs/implementation-defined.md says.
 *
 * Async-signal-safe, as exec is: system calls and a memory map -- except
 * that shutdown, which takes the trace-id locks (not there in a child
 * after fork, a vfork child, or an image without streams).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "producer.h"

extern char **environ;

static int (*c_execvpe)(const char *, char *const[], char *const[]);
static int (*c_fexecve)(int, char *const[], char *const[]);
static uid_t load_uid, load_euid;
static gid_t load_gid, load_egid;

/* At load, from lifecycle.c's constructor: the C library's functions this
 * file stands in front of, and the ids the process started with. */
void pt_exec_init(void)
{
	*(void **)&c_execvpe = dlsym(RTLD_NEXT, "execvpe");
	*(void **)&c_fexecve = dlsym(RTLD_NEXT, "fexecve");
	load_uid = getuid();
	load_euid = geteuid();
	load_gid = getgid();
	load_egid = getegid();
}

#define CTL_VAR "POSIXTRACE_CTL="

struct keep {
	int fd[1];            /* the descriptor made inheritable */
	unsigned n;
	int own;              /* this image's own segment: its exec state is set */
	char **env;           /* the environment passed, mapped here */
	size_t env_size;
	char val[sizeof CTL_VAR + 12 + PT_SLOTS * (4 + 12 + 12 + 22)];
};

static char *put_uint(char *p, unsigned v)
{
	return pt_put_u64(p, v);
}

/* A stream traces the process, or a controller is making one (it counted
 * itself in creating before it claims a slot).  The loads are sequentially
 * consistent, after the store of PT_EXEC_DECIDING: a controller that
 * counts itself and then finds no decision under way is seen here. */
static int traced_now(void)
{
	if (atomic_load(&pt_ctl->creating) != 0)
		return 1;
	for (unsigned s = 0; s < PT_SLOTS; s++)
		if (atomic_load(&pt_ctl->slot[s].ticket) != 0)
			return 1;
	return 0;
}

static void inheritable(struct keep *k, int fd)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl >= 0 && (fl & FD_CLOEXEC) && fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) == 0)
		k->fd[k->n++] = fd;
}

/* The environment to exec with: envp, or (when this exec keeps the
 * segment) a copy with POSIXTRACE_CTL naming what is kept. */
static char *const *keep_begin(struct keep *k, char *const *envp)
{
	size_t n = 0;
	char *p;

	k->n = 0;
	k->env = NULL;
	/* the control segment is this image's own (not a vfork parent's):
	 * a controller making a stream now learns what the exec does with it */
	k->own = pt_ctl_fd >= 0 && (pid_t)syscall(SYS_getpid) == pt_pid;
	if (!k->own)
		return envp;
	atomic_store(&pt_ctl->exec, PT_EXEC_DECIDING);
	/* (a program that closed the segment's fd may have a file of its own
	 * at that number now: it is not made inheritable) */
	if (pt_secure || !traced_now() || !pt_fd_is(pt_ctl_fd, &pt_ctl_id) ||
	    getuid() != load_uid || geteuid() != load_euid || getgid() != load_gid ||
	    getegid() != load_egid) {
		atomic_store(&pt_ctl->exec, PT_EXEC_DROPPED);
		return envp;
	}
	while (envp && envp[n])
		n++;
	k->env_size = (n + 2) * sizeof(char *);
	k->env = mmap(NULL, k->env_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->env == MAP_FAILED) {
		k->env = NULL;
		atomic_store(&pt_ctl->exec, PT_EXEC_DROPPED);
		return envp;
	}
	memcpy(k->val, CTL_VAR, sizeof CTL_VAR - 1);
	p = put_uint(k->val + sizeof CTL_VAR - 1, (unsigned)pt_ctl_fd);
	inheritable(k, pt_ctl_fd);
	for (unsigned s = 0; s < PT_SLOTS; s++) {
		const struct pt_own_src *o = &pt_proc.own_src[s];
		if (!pt_proc.own_fd[s] || !(atomic_load(&pt_proc.own_close) >> s & 1) || o->pid <= 0)
			continue; /* none, or a trace id's (gone with this image) */
		*p++ = '/';
		p = put_uint(p, s);
		*p++ = '.';
		p = put_uint(p, (unsigned)o->pid);
		*p++ = '.';
		p = put_uint(p, (unsigned)o->fd);
		*p++ = '.';
		p = pt_put_u64(p, o->ino);
	}
	*p = 0;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], CTL_VAR, sizeof CTL_VAR - 1) != 0)
			k->env[m++] = envp[i];
	k->env[m++] = k->val;
	k->env[m] = NULL;
	atomic_store(&pt_ctl->exec, PT_EXEC_KEPT);
	return k->env;
}

/* The exec failed: all as it was (errno kept). */
static void keep_end(struct keep *k)
{
	int e = errno;

	for (unsigned i = 0; i < k->n; i++)
		fcntl(k->fd[i], F_SETFD, FD_CLOEXEC);
	if (k->env)
		munmap(k->env, k->env_size);
	if (k->own) /* this image goes on with its segment */
		atomic_store(&pt_ctl->exec, 0);
	errno = e;
}

/* path is a regular file this process may execute */
static int runnable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

/* ... file, as execvp looks for it: itself if it names a directory,
 * else in each directory of PATH (the C library's default without one) */
static int runnable_p(const char *file)
{
	char buf[PATH_MAX];
	const char *path = getenv("PATH");
	size_t fl = strlen(file);

	if (!*file)
		return 0;
	if (strchr(file, '/'))
		return runnable(file);
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t dl = end ? (size_t)(end - p) : strlen(p);
		if (dl + 1 + fl < sizeof buf) {
			memcpy(buf, p, dl);
			if (!dl) /* an empty entry: the current directory */
				buf[dl++] = '.';
			buf[dl] = '/';
			memcpy(buf + dl + 1, file, fl + 1);
			if (runnable(buf))
				return 1;
		}
		if (!end)
			return 0;
		p = end;
	}
}

/* The process's own exec, which should succeed: its streams shut down. */
static void exec_shutdown(int ok)
{
	if (ok && pt_exec_shutdown && (pid_t)syscall(SYS_getpid) == pt_pid)
		pt_exec_shutdown();
}

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	struct keep k;

	exec_shutdown(path && runnable(path));
	long r = syscall(SYS_execve, path, argv, keep_begin(&k, envp));
	keep_end(&k);
	return (int)r;
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct keep k;

	if (!c_execvpe) {
		errno = ENOSYS;
		return -1;
	}
	exec_shutdown(file && runnable_p(file));
	int r = c_execvpe(file, argv, keep_begin(&k, envp));
	keep_end(&k);
	return r;
}

PT_API int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

PT_API int execv(const char *path, char *const argv[])
{
	return do_execve(path, argv, environ);
}

PT_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_execvpe(file, argv, envp);
}

PT_API int execvp(const char *file, char *const argv[])
{
	return do_execvpe(file, argv, environ);
}

PT_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct keep k;

	if (!c_fexecve) {
		errno = ENOSYS;
		return -1;
	}
	struct stat st;
	exec_shutdown(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111));
	int r = c_fexecve(fd, argv, keep_begin(&k, envp));
	keep_end(&k);
	return r;
}

/* execl, execlp, execle: the arguments into an array on the stack (as the
 * C library does), then as above. */
#define ARGS_TO_ARRAY(arg0, ap, argv, n)                                                      \
	size_t n = 1;                                                                          \
	va_start(ap, arg0);                                                                    \
	while (va_arg(ap, char *) != NULL)                                                     \
		n++;                                                                           \
	va_end(ap);                                                                            \
	char *argv[n + 1];                                                                     \
	argv[0] = (char *)(arg0);                                                              \
	va_start(ap, arg0);                                                                    \
	for (size_t i_ = 1; i_ <= n; i_++)                                                     \
		argv[i_] = va_arg(ap, char *);

PT_API int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	ARGS_TO_ARRAY(arg0, ap, argv, n)
	va_end(ap);
	return do_execve(path, argv, environ);
}

PT_API int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	ARGS_TO_ARRAY(arg0, ap, argv, n)
	va_end(ap);
	return do_execvpe(file, argv, environ);
}

PT_API int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	ARGS_TO_ARRAY(arg0, ap, argv, n)
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return do_execve(path, argv, envp);
}
