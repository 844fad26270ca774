/*
 * view_http.h -- for the tests and the benchmark of `posixtrace view`
 * (tests/cli_view.c, tests/cli_view_browser.c, bench/view.c): start the
 * server on a log and learn its port and token from what it prints, and
 * send it raw HTTP requests over loopback (each on its own connection,
 * bounded by a receive timeout).
 */
#ifndef POSIXTRACE_TEST_VIEW_HTTP_H
#define POSIXTRACE_TEST_VIEW_HTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct view_srv { pid_t pid; unsigned port; char token[64]; char url[160]; };

/* The numbers of each inner array of "lanes":[[...],[...]] of a density
 * answer (b): every third (the counts) summed; -1 if b has no lanes. */
static inline long long view_density_sum(const char *b)
{
	const char *p = b ? strstr(b, "\"lanes\":[") : NULL;
	long long sum = 0;
	int depth = 0, k = 0;

	if (!p)
		return -1;
	for (p += 9; *p; p++) {
		if (*p == '[') {
			depth++;
			k = 0;
		} else if (*p == ']') {
			if (depth-- == 0)
				break;
		} else if (*p >= '0' && *p <= '9') {
			char *e;
			long long v = strtoll(p, &e, 10);
			if (k++ % 3 == 2)
				sum += v;
			p = e - 1;
		}
	}
	return sum;
}

/* Send req (the whole request) to 127.0.0.1:port; the status (0 if none
 * came), the body in *body (malloc'd, NUL-ended) unless NULL. */
static inline int view_http_send(unsigned port, const char *req, size_t len, char **body,
                                 int half_close)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { 30, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = 0;
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	if (body)
		*body = NULL;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || !buf || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return 0;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	for (size_t done = 0; done < len;) {
		ssize_t w = send(fd, req + done, len - done, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (half_close) /* the request ends here: no more from the client */
		shutdown(fd, SHUT_WR);
	for (;;) {
		if (n + 1 >= cap) {
			char *b = realloc(buf, cap * 2);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		status = 0;
	char *b = strstr(buf, "\r\n\r\n");
	if (body && b) {
		*body = strdup(b + 4);
	}
	free(buf);
	return status;
}

static inline int view_http_raw(unsigned port, const char *req, size_t len, char **body)
{
	return view_http_send(port, req, len, body, 0);
}

/* GET path (with its query string, the token added unless notoken) with
 * the right Host header unless host is given. */
static inline int view_get(const struct view_srv *s, const char *path, const char *host,
                           int notoken, char **body)
{
	char req[4096], h[64];
	snprintf(h, sizeof h, "127.0.0.1:%u", s->port);
	int n = snprintf(req, sizeof req, "GET %s%s%s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
	                 path, notoken ? "" : strchr(path, '?') ? "&" : "?",
	                 notoken ? "" : "t=", notoken ? "" : s->token, host ? host : h);
	return view_http_raw(s->port, req, (size_t)n, body);
}

/* Start `cli view ARGS... LOG` with its output to outfile; wait (up to
 * wait_s) for its URL.  0, or -1 (it ended, or said nothing in time:
 * s->pid is then 0 when it ended). */
static inline int view_start(struct view_srv *s, char *const argv[], const char *outfile,
                             const char *errfile, double wait_s)
{
	memset(s, 0, sizeof *s);
	unlink(outfile); /* (not the last run's URL) */
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	s->pid = pid;
	for (double t = 0; t < wait_s; t += 0.005) {
		FILE *f = fopen(outfile, "r");
		char line[512];
		while (f && fgets(line, sizeof line, f)) {
			char *u = strstr(line, "http://127.0.0.1:"), *q = u ? strstr(u, "/?t=") : NULL;
			if (u && q && sscanf(u, "http://127.0.0.1:%u/?t=%63[0-9a-f]", &s->port, s->token) == 2) {
				snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u/?t=%s", s->port, s->token);
				fclose(f);
				return 0;
			}
		}
		if (f)
			fclose(f);
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			s->pid = 0;
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	return -1;
}

/* SIGTERM; its exit status (128+N if killed by signal N), -1 if none. */
static inline int view_stop(struct view_srv *s)
{
	int st;
	if (s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	while (waitpid(s->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	s->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Peak resident memory of a running process in KiB (VmHWM), -1 if unknown. */
static inline long view_hwm_kb(pid_t pid)
{
	char p[64], line[256];
	long kb = -1;
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

#endif
