/*
 * sec_view.c -- another local user against `posixtrace view`
 * (docs/security.md, "The trace viewer's server"; issue 47).  Needs root,
 * for the other users (SKIP otherwise).  The server runs as root, the
 * owner; the test's own requests are the owner's.
 *
 *   open    view --open with $BROWSER a script that stays until the test
 *           is done with it: while it runs (the scan sees its command
 *           line), user 61003 reads every /proc/PID/cmdline, and every
 *           file a command line names that it can open: the token is in
 *           none of them (on main the browser's command line held the
 *           URL).  The browser got a file:// name of a 0600 file in a
 *           0700 directory, which leads to the URL; both are gone when
 *           view ends.
 *   held    user 61002 holds HOLD connections, each sending a header line
 *           every DRIP_MS (never ending its headers), opening a new one
 *           when one is closed: each of the owner's requests still gets
 *           its 200 within 1 s (on main: no answer at all), and the other
 *           user's request with the right token gets nothing.
 *   unix    view --unix PATH: the socket is 0600; the owner gets 200 with
 *           the token (Host: localhost), 403 without; user 61002 cannot
 *           connect.
 */
#include <dirent.h>
#include <poll.h>
#include <sys/un.h>
#include <trace.h>
#include "t.h"
#include "sec_util.h"
#include "view_http.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
#define HOLD 64
#define DRIP_MS 200

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* scan (the token in $PT_SCAN_TOKEN: not in a command line of its own):
 * every command line, and every file one names; prints FOUND and where
 * if the token is in any. */
static int scan(const char *token)
{
	if (!token)
		return 2;
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0, lines = 0;

	while (d && (e = readdir(d)) != NULL) {
		char p[300], buf[8192];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
		int fd = open(p, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		lines++;
		buf[n] = 0;
		for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
			if (strstr(a, "browser.sh"))
				printf("browser seen\n");
			if (strstr(a, token)) {
				printf("FOUND in %s\n", p);
				found = 1;
			}
			const char *f = !strncmp(a, "file://", 7) ? a + 7 : a[0] == '/' ? a : NULL;
			int ff = f ? open(f, O_RDONLY | O_NONBLOCK) : -1;
			char fb[4096];
			ssize_t m = ff < 0 ? -1 : read(ff, fb, sizeof fb - 1);
			if (ff >= 0)
				close(ff);
			if (m > 0) {
				fb[m] = 0;
				if (strstr(fb, token)) {
					printf("FOUND in %s\n", f);
					found = 1;
				}
			}
		}
	}
	if (d)
		closedir(d);
	printf("%d command lines\n", lines);
	return found;
}

static void case_open(const char *self, const char *log)
{
	struct view_srv s;
	const char *br = cli_path("browser.sh");
	FILE *f = fopen(br, "w");
	REQUIRE(f != NULL);
	/* (it stays until the gate is made, 60 s at most) */
	fprintf(f, "#!/bin/sh\necho \"$1\" > %s\ncat \"${1#file://}\" > %s.tmp\nmv %s.tmp %s\n"
	        "i=0; while [ ! -e %s ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n",
	        cli_path("browser.arg"), cli_path("browser.page"), cli_path("browser.page"),
	        cli_path("browser.page"), cli_path("browser.gate"));
	fclose(f);
	REQUIRE(chmod(br, 0700) == 0);
	setenv("BROWSER", br, 1);
	CHECK_EQ(view_start(&s, CLI("view", "--open", (char *)log), cli_path("open.out"),
	                    cli_path("open.err"), 30), 0);
	unsetenv("BROWSER");
	for (int i = 0; i < 1000 && access(cli_path("browser.page"), F_OK) != 0; i++)
		usleep(5000);
	char *out = NULL;
	char env[128];
	snprintf(env, sizeof env, "PT_SCAN_TOKEN=%s", s.token);
	CHECK_EQ(sec_run_as(SEC_UID(3), ARGV((char *)self, "scan"), ARGV(env), &out, NULL), 0);
	CHECK(!cli_contains(out, "FOUND"));
	CHECK(cli_contains(out, "browser seen")); /* while the browser ran */
	printf("another user: %s", out);
	free(out);
	close(open(cli_path("browser.gate"), O_WRONLY | O_CREAT, 0600));
	char *arg = sec_slurp(cli_path("browser.arg")), *page = sec_slurp(cli_path("browser.page"));
	CHECK(!strncmp(arg, "file:///", 8) && !strstr(arg, s.token));
	CHECK(cli_contains(page, s.url));
	char *nl = strchr(arg, '\n');
	if (nl)
		*nl = 0;
	struct stat sf, sd;
	char *dir = strdup(arg + 7), *slash = strrchr(dir, '/');
	REQUIRE(slash != NULL);
	CHECK(lstat(arg + 7, &sf) == 0 && S_ISREG(sf.st_mode) && (sf.st_mode & 0777) == 0600);
	*slash = 0;
	CHECK(lstat(dir, &sd) == 0 && S_ISDIR(sd.st_mode) && (sd.st_mode & 0777) == 0700);
	CHECK_EQ(view_stop(&s), 0);
	CHECK(access(dir, F_OK) != 0); /* removed at the end */
	free(dir);
	free(arg);
	free(page);
}

static int dial(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* hold PORT READY: as the other user, HOLD connections that never end
 * their headers; READY made once they are all open (and dripping). */
static _Noreturn void hold(unsigned port, const char *ready)
{
	int fd[HOLD];
	static const char start[] = "GET /meta HTTP/1.1\r\nHost: 127.0.0.1\r\n";
	for (int i = 0; i < HOLD; i++)
		if ((fd[i] = dial(port)) < 0 || send(fd[i], start, sizeof start - 1, MSG_NOSIGNAL) < 0)
			fd[i] = -1;
	for (unsigned k = 0;; k++) {
		for (int i = 0; i < HOLD; i++) {
			if (fd[i] >= 0 && send(fd[i], "X-Hold: 1\r\n", 11, MSG_NOSIGNAL) == 11)
				continue;
			if (fd[i] >= 0)
				close(fd[i]);
			if ((fd[i] = dial(port)) >= 0 &&
			    send(fd[i], start, sizeof start - 1, MSG_NOSIGNAL) < 0) {
				close(fd[i]);
				fd[i] = -1;
			}
		}
		if (k == 5)
			close(open(ready, O_WRONLY | O_CREAT, 0644));
		usleep(DRIP_MS * 1000);
	}
}

/* GET path with the token as the owner: the status, 0 if none came
 * within 2 s; *took the time it took. */
static int timed_get(const struct view_srv *s, const char *path, double *took)
{
	char req[512];
	int n = snprintf(req, sizeof req, "GET %s?t=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
	                 "Connection: close\r\n\r\n", path, s->token, s->port);
	double t0 = mono();
	int fd = dial(s->port), st = 0;
	struct timeval tv = { 2, 0 };
	char buf[64] = "";
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (send(fd, req, (size_t)n, MSG_NOSIGNAL) == n && recv(fd, buf, sizeof buf - 1, 0) > 0 &&
		    sscanf(buf, "HTTP/1.%*d %d", &st) != 1)
			st = 0;
		close(fd);
	}
	*took = mono() - t0;
	return st;
}

static void case_held(const char *self, const char *log)
{
	struct view_srv s;
	CHECK_EQ(view_start(&s, CLI("view", (char *)log), cli_path("held.out"),
	                    cli_path("held.err"), 30), 0);
	char port[16];
	snprintf(port, sizeof port, "%u", s.port);
	const char *ready = strdup(cli_path("w/held.ready")); /* (w: everyone's) */
	REQUIRE(mkdir(cli_path("w"), 0777) == 0 && chmod(cli_path("w"), 0777) == 0);
	fflush(NULL);
	pid_t h = fork();
	REQUIRE(h >= 0);
	if (h == 0) {
		if (sec_become(SEC_UID(2)) != 0)
			_exit(125);
		execv(self, ARGV((char *)self, "hold", port, (char *)ready));
		_exit(126);
	}
	for (int i = 0; i < 2000 && access(ready, F_OK) != 0; i++)
		usleep(5000);
	CHECK(access(ready, F_OK) == 0);
	double worst = 0;
	int ok = 0;
	for (int i = 0; i < 10; i++) {
		double took;
		int st = timed_get(&s, i % 2 ? "/meta" : "/", &took);
		ok += st == 200 && took < 1.0;
		worst = took > worst ? took : worst;
		usleep(100000);
	}
	printf("held: %d of 10 owner's requests answered 200 within 1 s (slowest %.3f s)\n", ok,
	       worst);
	CHECK_EQ(ok, 10);
	/* the other user, token in hand, gets nothing */
	char *out = NULL;
	CHECK_EQ(sec_run_as(SEC_UID(2), ARGV((char *)self, "get", port, s.token), NULL, &out, NULL), 0);
	CHECK(cli_contains(out, "status 0"));
	free(out);
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	CHECK_EQ(view_stop(&s), 0);
	free((char *)ready);
}

/* get PORT TOKEN: GET /meta with the token; prints its status */
static int get(unsigned port, const char *token)
{
	struct view_srv s = { .port = port };
	snprintf(s.token, sizeof s.token, "%s", token);
	double took;
	printf("status %d\n", timed_get(&s, "/meta", &took));
	return 0;
}

static int unix_get(const char *path, const char *token, int *err)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	snprintf(su.sun_path, sizeof su.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), st = 0;
	struct timeval tv = { 5, 0 };
	char req[256], buf[64] = "";
	*err = 0;
	if (fd < 0 || connect(fd, (struct sockaddr *)&su, sizeof su) != 0) {
		*err = errno;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	int n = snprintf(req, sizeof req, "GET /meta%s%s HTTP/1.1\r\nHost: localhost\r\n"
	                 "Connection: close\r\n\r\n", token ? "?t=" : "", token ? token : "");
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) == n && recv(fd, buf, sizeof buf - 1, 0) > 0 &&
	    sscanf(buf, "HTTP/1.%*d %d", &st) != 1)
		st = 0;
	close(fd);
	return st;
}

/* uget PATH: as another user, connect to the Unix socket: prints errno */
static int uget(const char *path)
{
	int e;
	int st = unix_get(path, "x", &e);
	printf("status %d errno %d\n", st, e);
	return 0;
}

static void case_unix(const char *self, const char *log)
{
	const char *sock = strdup(cli_path("view.sock")), *out = cli_path("unix.out");
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || dup2(o, 1) < 0)
			_exit(126);
		execv(cli_bin, CLI("view", "--unix", (char *)sock, (char *)log));
		_exit(127);
	}
	char token[64] = "";
	for (int i = 0; i < 3000 && !token[0]; i++) {
		char *s = cli_slurp(out), *t = s ? strstr(s, "http://localhost/?t=") : NULL;
		if (t)
			sscanf(t + 20, "%63[0-9a-f]", token);
		free(s);
		if (!token[0])
			usleep(5000);
	}
	CHECK(token[0] != 0);
	struct stat sb;
	CHECK(lstat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode) && (sb.st_mode & 0777) == 0600);
	int e;
	CHECK_EQ(unix_get(sock, token, &e), 200);
	CHECK_EQ(unix_get(sock, NULL, &e), 403);
	char *o = NULL;
	CHECK_EQ(sec_run_as(SEC_UID(2), ARGV((char *)self, "uget", (char *)sock), NULL, &o, NULL), 0);
	CHECK(cli_contains(o, "status 0 errno 13")); /* EACCES */
	free(o);
	kill(p, SIGTERM);
	int st;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(access(sock, F_OK) != 0); /* removed at the end */
	free((char *)sock);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "scan"))
		return scan(getenv("PT_SCAN_TOKEN"));
	if (argc == 4 && !strcmp(argv[1], "hold"))
		hold((unsigned)atoi(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "get"))
		return get((unsigned)atoi(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "uget"))
		return uget(argv[2]);
	T_BEGIN(120);
	sec_setup();
	if (access(cli_bin, X_OK) != 0 || access(cli_app, X_OK) != 0)
		T_SKIP("the posixtrace command or examples/app is not built");
	cli_need_view();
	setenv("XDG_CACHE_HOME", cli_path("cache"), 1);
	const char *self = strdup(sec_copy("/proc/self/exe", "self", 0755));
	const char *log = strdup(cli_path("a.ptlog"));
	REQUIRE(cli_record_app(log, "0") == 0);
	case_open(self, log);
	case_held(self, log);
	case_unix(self, log);
	T_END();
}
