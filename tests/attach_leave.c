/*
 * attach_leave.c -- a controller that attaches to a running process and
 * leaves takes nothing of the process with it and leaves nothing behind
 * (issue 54): the process's view of the stream is unmapped once the
 * controller is gone (before, it stayed mapped until the next stream:
 * 18 MB of address space per `posixtrace live` or `top`, up to 64 of
 * them), and its control memfd, where each stream's region goes, does not
 * grow with every attach (before: by the stream's size each time, 551 MB
 * after 30 attaches).
 *
 * A forked worker records an event every millisecond until killed.  This
 * process attaches 100 times (posix_trace_create for its pid, start, one
 * event read, shutdown), then 3 times with `posixtrace live PID` ended by
 * SIGINT.  After each, once the worker has let go of the view (its
 * VmSize back, waited for up to 10 s: it notices at its next event), its
 * VmSize, the size of its control memfd and its count of descriptors
 * must be what they were after the first.  Each attach must also see the
 * worker's events (the stream works; nothing was reused wrongly).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"

static void worker(void)
{
	trace_event_id_t ev;
	if (posix_trace_eventid_open("leave-tick", &ev) != 0)
		_exit(1);
	for (int i = 0;; i++) {
		posix_trace_event(ev, &i, sizeof i);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (getppid() == 1)
			_exit(0);
	}
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
/* A sanitizer's runtime maps memory of its own as the program runs (its
 * allocator, shadow for what the program maps), so VmSize moves by itself
 * under it (ThreadSanitizer: +168 kB by the 80th attach): what is
 * measured there is what the library maps, its memfds' mappings, in kB. */
static long vm_size(pid_t pid)
{
	return t_lib_maps_kb(pid);
}
#else
static long vm_size(pid_t pid)
{
	char p[64], line[256];
	long kb = -1;
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}
#endif

/* The size of the worker's control memfd, and its count of descriptors. */
static long long ctl_size(pid_t pid, int *nfd)
{
	char d[64];
	long long sz = -1;
	snprintf(d, sizeof d, "/proc/%d/fd", (int)pid);
	DIR *dir = opendir(d);
	struct dirent *e;
	*nfd = 0;
	if (!dir)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		char p[600], l[256];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		++*nfd;
		snprintf(p, sizeof p, "%s/%s", d, e->d_name);
		ssize_t n = readlink(p, l, sizeof l - 1);
		if (n <= 0)
			continue;
		l[n] = 0;
		if (strncmp(l, "/memfd:posixtrace-ctl", 21) == 0 && stat(p, &st) == 0)
			sz = (long long)st.st_size;
	}
	closedir(dir);
	return sz;
}

static void attach_once(pid_t pid)
{
	trace_id_t trid;
	struct posix_trace_event_info info;
	char buf[64];
	size_t len;
	int got = 0;

	REQUIRE(posix_trace_create(pid, NULL, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	while (!got) { /* up to the worker's first event */
		int rc = posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len, &got, &dl);
		if (rc != 0)
			break;
		got = got || info.posix_pid == pid;
		if (info.posix_pid != pid)
			got = 0;
	}
	CHECK(got);
	CHECK_EQ(posix_trace_shutdown(trid), 0);
}

/* The worker lets go of the view at its next event: it unmaps it, then
 * closes its descriptor holding the liveness lock (producer/attach.c).
 * Wait for both: its VmSize back to want, and its count of descriptors
 * to want_fd (unless -1), or 10 s. */
static long settle(pid_t pid, long want, int want_fd)
{
	int nfd;
	long vm = vm_size(pid);
	ctl_size(pid, &nfd);
	for (int i = 0; i < 10000 && (vm != want || (want_fd >= 0 && nfd != want_fd)); i++) {
		usleep(1000);
		vm = vm_size(pid);
		ctl_size(pid, &nfd);
	}
	return vm;
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		worker();
	usleep(20000);
	long vm0 = vm_size(pid);
	int nfd0, nfd1, nfd;
	ctl_size(pid, &nfd0);
	attach_once(pid);
	long vm1 = settle(pid, vm0, nfd0);
	long long ctl1 = ctl_size(pid, &nfd1);
	CHECK_EQ(vm1, vm0); /* the view went */
	CHECK(ctl1 > 0);
	int bad = 0;
	for (int i = 2; i <= 100 && !bad; i++) {
		attach_once(pid);
		long vm = settle(pid, vm1, nfd1);
		long long ctl = ctl_size(pid, &nfd);
		if (vm != vm1 || ctl != ctl1 || nfd != nfd1) {
			fprintf(stderr, "after attach %d: VmSize %ld kB (first %ld), control memfd %lld "
			        "bytes (first %lld), %d fds (first %d)\n", i, vm, vm1, ctl, ctl1, nfd, nfd1);
			bad = 1;
		}
	}
	CHECK(!bad);

	/* the command: `live PID` attached, ended with SIGINT */
	char num[16];
	snprintf(num, sizeof num, "%d", (int)pid);
	for (int i = 0; i < 3 && !bad; i++) {
		pid_t l = fork();
		REQUIRE(l >= 0);
		if (l == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			dup2(fd, 2);
			/* SIGINT ignored is kept across exec (a script's background
			 * job has it so): live would never end, the alarm would */
			signal(SIGINT, SIG_DFL);
			execl(cli_bin, cli_bin, "live", num, (char *)NULL);
			_exit(127);
		}
		usleep(300000);
		kill(l, SIGINT);
		int st;
		REQUIRE(waitpid(l, &st, 0) == l);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		long vm = settle(pid, vm1, nfd1);
		long long ctl = ctl_size(pid, &nfd);
		if (vm != vm1 || ctl != ctl1 || nfd != nfd1) {
			fprintf(stderr, "after live %d: VmSize %ld kB (first %ld), control memfd %lld "
			        "bytes (first %lld), %d fds (first %d)\n", i + 1, vm, vm1, ctl, ctl1, nfd,
			        nfd1);
			bad = 1;
		}
	}
	CHECK(!bad);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	T_END();
}
