/*
 * life_exec_ctor.c -- a program linked with the static library whose own
 * constructor (default priority) makes a stream with a log, records and
 * exec's: the exec shuts the stream down as posix_trace_shutdown(3) says,
 * as it does from main (tests/life_exec).  The library's exec hook must be
 * in place before the program's own constructors run: with the hook set
 * by a default-priority constructor of the library, the program's came
 * first (its object is linked before the library's), and the exec left
 * the log without its events and its STOP.
 *
 * This test runs itself again with LIFE_CTOR_LOG naming a log: in that
 * image the constructor below creates a stream for itself (FLUSH, log
 * APPEND), starts it, records N events (payload: seq 0..N-1) and calls
 * execv() of /bin/true without shutting the stream down.  The log must
 * then hold the N events in order, START once and STOP once.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "log_util.h"
#include "helpers.h"

#define N 2000

__attribute__((constructor)) static void program_ctor(void)
{
	const char *path = getenv("LIFE_CTOR_LOG");
	trace_attr_t a;
	trace_id_t t;
	trace_event_id_t id;

	if (!path)
		return;
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0 || posix_trace_attr_init(&a) || posix_trace_attr_setstreamsize(&a, 1 << 20) ||
	    posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH) ||
	    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
	    posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_eventid_open("ctor", &id) ||
	    posix_trace_start(t))
		_exit(3);
	for (int i = 0; i < N; i++)
		posix_trace_event(id, &i, sizeof i);
	char *argv[] = { (char *)"true", NULL };
	execv("/bin/true", argv);
	_exit(4);
}

int main(void)
{
	char path[256], self[4096];

	T_BEGIN(60);
	if (access("/bin/true", X_OK) != 0)
		T_SKIP("no /bin/true");
	ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sn > 0);
	self[sn] = 0;
	int fd = lu_tmpfile(path, sizeof path, "life-exec-ctor", O_RDWR);
	close(fd);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		setenv("LIFE_CTOR_LOG", path, 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	CHECK_EQ(t_wait_for(pid, 10000), 0);
	struct lu_run r = lu_run_of(lu_load(path, NULL, NULL));
	printf("log after an exec from a constructor: %d events of %d, START %d, STOP %d\n", r.user,
	       N, r.starts, r.stops);
	CHECK_EQ(r.user, N);
	CHECK(r.order);
	CHECK_EQ(r.starts, 1);
	CHECK_EQ(r.stops, 1);
	lu_rmfile(path);
	T_END();
}
