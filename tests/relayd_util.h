/*
 * relayd_util.h -- Debian's lttng-relayd for a test, on free loopback
 * ports with a private HOME under the test's scratch directory (its trace
 * in cli_path("out"), its messages in cli_path("relayd.log")), started
 * and stopped by the test; and the test's other processes, each in a
 * process group of its own, killed when the test's alarm ends it
 * (signal(SIGALRM, relayd_on_alarm)).  The caller finds the relay
 * (relayd_bin) and picks the ports (cport, dport, lport: relayd_ports()).
 *
 * Include after <trace.h>, "t.h" and "cli_util.h".
 */
#ifndef POSIXTRACE_RELAYD_UTIL_H
#define POSIXTRACE_RELAYD_UTIL_H

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

static const char *relayd_bin, *bt_bin;
static char self[4096];
static unsigned cport, dport, lport;
static pid_t relayd_pid = -1;

static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	REQUIRE(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	        getsockname(fd, (struct sockaddr *)&a, &l) == 0);
	close(fd);
	return ntohs(a.sin_port);
}

static int port_open(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* What spawn() started, each in a process group of its own: killed (with
 * the programs they run) when the test ends by its alarm. */
static pid_t kids[64];
static int nkids;

static void relayd_on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < nkids; i++)
		kill(-kids[i], SIGKILL);
	static const char msg[] = "timed out; the test's processes killed\n";
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Start argv in the background, stdout and stderr into files. */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p > 0 && nkids < (int)(sizeof kids / sizeof kids[0]))
		kids[nkids++] = p;
	if (p == 0) {
		setpgid(0, 0);
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		setenv("HOME", cli_path("home"), 1);
		setenv("LTTNG_HOME", cli_path("home"), 1);
		execv(argv[0], argv);
		_exit(126);
	}
	return p;
}

static int wait_exit(pid_t p)
{
	int st;
	while (waitpid(p, &st, 0) < 0)
		REQUIRE(errno == EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* three free loopback ports, distinct, into cport, dport and lport */
static void pick_ports(void)
{
	cport = free_port();
	dport = free_port();
	lport = free_port();
	REQUIRE(cport != dport && dport != lport && cport != lport);
}

/* The relay started on cport, dport and lport: 1 once it listens on all
 * three (a loaded machine can take seconds to start it: the alarm bounds
 * the wait), 0 if it ended first. */
static int relayd_try(void)
{
	char c[64], d[64], l[64];
	snprintf(c, sizeof c, "tcp://127.0.0.1:%u", cport);
	snprintf(d, sizeof d, "tcp://127.0.0.1:%u", dport);
	snprintf(l, sizeof l, "tcp://127.0.0.1:%u", lport);
	mkdir(cli_path("home"), 0700);
	relayd_pid = spawn((char *const[]){ (char *)relayd_bin, "-C", c, "-D", d, "-L", l, "-o",
	                                    (char *)cli_path("out"), NULL },
	                   NULL, cli_path("relayd.log"));
	while (!(port_open(cport) && port_open(dport) && port_open(lport))) {
		int st;
		if (waitpid(relayd_pid, &st, WNOHANG) == relayd_pid) {
			relayd_pid = -1;
			return 0;
		}
		usleep(5000);
	}
	return 1;
}

/* The relay started.  A port free when free_port() found it may be taken
 * before the relay binds it (by another program's connection, which
 * takes a port of the same range, or another test's relay): the relay
 * then ends at once ("Address already in use").  At its first start the
 * ports are chosen again; a restart (the recorder comes back to the same
 * ports) tries the same ones again a while later.  10 tries. */
static int relayd_started;
static void relayd_start(void)
{
	for (int i = 0; i < 10; i++) {
		if (relayd_try()) {
			relayd_started = 1;
			return;
		}
		fprintf(stderr, "lttng-relayd ended before it listened (try %d; see %s)\n", i + 1,
		        cli_path("relayd.log"));
		if (!relayd_started)
			pick_ports();
		else
			usleep(200000);
	}
	REQUIRE(0);
}

static void relayd_stop(int sig)
{
	if (relayd_pid > 0) {
		kill(relayd_pid, sig);
		wait_exit(relayd_pid);
		relayd_pid = -1;
	}
}

static void at_exit_stop(void)
{
	relayd_stop(SIGKILL);
}

static const char *url(void)
{
	static char u[64];
	snprintf(u, sizeof u, "net://127.0.0.1:%u:%u", cport, dport);
	return u;
}


/* lttng-relayd and babeltrace2 found (the test skips, saying which is
 * missing, without them), and this program's own path */
static void relayd_need(void)
{
	if (!(relayd_bin = cli_which("lttng-relayd")))
		T_SKIP("lttng-relayd is not installed (Debian: lttng-tools)");
	relayd_bin = strdup(relayd_bin);
	if (!(bt_bin = cli_which("babeltrace2")))
		T_SKIP("babeltrace2 is not installed (Debian: babeltrace2)");
	bt_bin = strdup(bt_bin);
	REQUIRE(relayd_bin && bt_bin && realpath("/proc/self/exe", self) != NULL);
}

/* three free loopback ports for the relay, and its stop at exit */
static void relayd_ports(void)
{
	pick_ports();
	atexit(at_exit_stop);
}

#endif
