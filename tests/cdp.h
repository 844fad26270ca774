/*
 * cdp.h -- a browser driven through the Chrome DevTools Protocol, for the
 * tests of pages (tests/cli_view_cdp.c): Debian's chromium started
 * headless with --remote-debugging-pipe (commands on its fd 3, answers
 * and events on its fd 4, each message a JSON text ended by a NUL), one
 * page target attached in flat mode; a command is sent and its answer
 * waited for (bounded by a poll timeout), events in between are looked
 * at for script exceptions.  JSON is not parsed: the tests look for the
 * fields they need in the answer's text.
 */
#ifndef POSIXTRACE_TEST_CDP_H
#define POSIXTRACE_TEST_CDP_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct cdp {
	pid_t pid;
	int to, from;          /* our ends: commands to chromium, messages from it */
	char *buf;             /* bytes read and not yet taken */
	size_t n, cap;
	int id;
	char session[128];
	int exceptions;        /* Runtime.exceptionThrown events seen */
	char exception[512];   /* the first one's text */
};

static inline int cdp_start(struct cdp *c, const char *chromium, const char *profile)
{
	int in[2], out[2];

	memset(c, 0, sizeof *c);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		char dir[400];
		snprintf(dir, sizeof dir, "--user-data-dir=%s", profile);
		/* fd 3: what it reads; fd 4: what it writes */
		int r = dup(in[0]), w = dup(out[1]);
		if (r < 0 || w < 0 || dup2(r, 3) < 0 || dup2(w, 4) < 0)
			_exit(126);
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0) {
			dup2(nul, 1);
			dup2(nul, 2);
		}
		execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		      "--remote-debugging-pipe", "--window-size=1400,800", "--no-first-run",
		      "--hide-scrollbars", dir, "about:blank", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	c->cap = 1 << 20;
	c->buf = malloc(c->cap);
	return c->buf ? 0 : -1;
}

/* The next message (NUL-ended, in c->buf; taken off by the caller with
 * cdp_drop), or NULL after timeout_ms without one or at EOF. */
static inline char *cdp_message(struct cdp *c, int timeout_ms, size_t *len)
{
	for (;;) {
		char *z = memchr(c->buf, 0, c->n);
		if (z) {
			*len = (size_t)(z - c->buf) + 1;
			return c->buf;
		}
		struct pollfd p = { c->from, POLLIN, 0 };
		if (poll(&p, 1, timeout_ms) <= 0)
			return NULL;
		if (c->n + 65536 > c->cap) {
			char *b = realloc(c->buf, c->cap * 2);
			if (!b)
				return NULL;
			c->buf = b;
			c->cap *= 2;
		}
		ssize_t r = read(c->from, c->buf + c->n, c->cap - c->n);
		if (r <= 0)
			return NULL;
		c->n += (size_t)r;
	}
}

static inline void cdp_drop(struct cdp *c, size_t len)
{
	memmove(c->buf, c->buf + len, c->n - len);
	c->n -= len;
}

/* Send method with params (a JSON object's text, or NULL) in the page's
 * session (unless browser-wide); the answer (malloc'd) or NULL. */
static inline char *cdp_call(struct cdp *c, int in_session, const char *method, const char *params)
{
	size_t cap = strlen(method) + (params ? strlen(params) : 0) + 300;
	char *msg = malloc(cap), id[32];
	if (!msg)
		return NULL;
	int id_ = ++c->id;
	int n = snprintf(msg, cap, "{\"id\":%d,%s%s%s\"method\":\"%s\",\"params\":%s}", id_,
	                 in_session ? "\"sessionId\":\"" : "", in_session ? c->session : "",
	                 in_session ? "\"," : "", method, params ? params : "{}");
	int bad = write(c->to, msg, (size_t)n + 1) != n + 1; /* with its NUL */
	free(msg);
	if (bad)
		return NULL;
	snprintf(id, sizeof id, "{\"id\":%d,", id_);
	for (;;) {
		size_t len;
		char *m = cdp_message(c, 30000, &len);
		if (!m)
			return NULL;
		if (strstr(m, "\"method\":\"Runtime.exceptionThrown\"")) {
			if (!c->exceptions++)
				snprintf(c->exception, sizeof c->exception, "%s", m);
		}
		if (strncmp(m, id, strlen(id)) == 0) {
			char *r = strdup(m);
			cdp_drop(c, len);
			return r;
		}
		cdp_drop(c, len);
	}
}

/* A page target, attached (flat): 0 or -1. */
static inline int cdp_page(struct cdp *c)
{
	char *r = cdp_call(c, 0, "Target.createTarget", "{\"url\":\"about:blank\"}"), tid[128];
	const char *p = r ? strstr(r, "\"targetId\":\"") : NULL;
	if (!p || sscanf(p + 12, "%127[^\"]", tid) != 1) {
		free(r);
		return -1;
	}
	free(r);
	char params[256];
	snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", tid);
	r = cdp_call(c, 0, "Target.attachToTarget", params);
	p = r ? strstr(r, "\"sessionId\":\"") : NULL;
	int ok = p && sscanf(p + 13, "%127[^\"]", c->session) == 1;
	free(r);
	if (!ok)
		return -1;
	free(cdp_call(c, 1, "Runtime.enable", NULL));
	free(cdp_call(c, 1, "Page.enable", NULL));
	return 0;
}

/* The value of a JavaScript expression, as JSON text (malloc'd: a
 * string's quotes included), or NULL. */
static inline char *cdp_eval(struct cdp *c, const char *expr)
{
	size_t cap = strlen(expr) * 2 + 100;
	char *params = malloc(cap), *q = params;
	if (!params)
		return NULL;
	q += sprintf(q, "{\"expression\":\"");
	for (const char *s = expr; *s; s++) {
		if (*s == '"' || *s == '\\')
			*q++ = '\\';
		*q++ = *s == '\n' ? ' ' : *s;
	}
	strcpy(q, "\",\"returnByValue\":true}");
	char *r = cdp_call(c, 1, "Runtime.evaluate", params);
	free(params);
	const char *v = r ? strstr(r, "\"value\":") : NULL;
	if (!v) {
		free(r);
		return NULL;
	}
	v += 8;
	/* a string to its closing quote (escapes skipped), else to , or } */
	const char *end = v;
	if (*v == '"') {
		for (end = v + 1; *end && *end != '"'; end++)
			if (*end == '\\' && end[1])
				end++;
		end += *end == '"';
	} else
		end = v + strcspn(v, ",}");
	char *out = strndup(v, (size_t)(end - v));
	free(r);
	return out;
}

static inline double cdp_eval_num(struct cdp *c, const char *expr)
{
	char *v = cdp_eval(c, expr);
	double d = v ? strtod(v[0] == '"' ? v + 1 : v, NULL) : -1e300;
	free(v);
	return d;
}

/* Wait (up to ms) until expr is true. */
static inline int cdp_wait(struct cdp *c, const char *expr, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		char *v = cdp_eval(c, expr);
		int ok = v && strcmp(v, "true") == 0;
		free(v);
		if (ok)
			return 0;
		usleep(50000);
	}
	return -1;
}

static inline void cdp_key(struct cdp *c, char k)
{
	char params[200];
	for (int down = 1; down >= 0; down--) {
		snprintf(params, sizeof params, "{\"type\":\"%s\",\"key\":\"%c\",\"text\":\"%c\","
		         "\"code\":\"Key%c\",\"windowsVirtualKeyCode\":%d}", down ? "keyDown" : "keyUp",
		         k, k, k - 32, k - 32);
		free(cdp_call(c, 1, "Input.dispatchKeyEvent", params));
	}
}

/* type: mousePressed, mouseReleased, mouseMoved, mouseWheel */
static inline void cdp_mouse(struct cdp *c, const char *type, double x, double y, double dy,
                             int button_down)
{
	char params[300];
	snprintf(params, sizeof params, "{\"type\":\"%s\",\"x\":%.1f,\"y\":%.1f,\"deltaX\":0,"
	         "\"deltaY\":%.1f,\"button\":\"%s\",\"buttons\":%d,\"clickCount\":%d}", type, x, y,
	         dy, button_down || strcmp(type, "mouseReleased") == 0 ? "left" : "none",
	         button_down ? 1 : 0, strcmp(type, "mousePressed") == 0 || strcmp(type, "mouseReleased") == 0);
	free(cdp_call(c, 1, "Input.dispatchMouseEvent", params));
}

static inline void cdp_click(struct cdp *c, double x, double y)
{
	cdp_mouse(c, "mouseMoved", x, y, 0, 0);
	cdp_mouse(c, "mousePressed", x, y, 0, 1);
	cdp_mouse(c, "mouseReleased", x, y, 0, 0);
}

static inline int b64(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
	     : ch >= '0' && ch <= '9' ? ch - '0' + 52 : ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* A PNG of the page to path: 0 or -1. */
static inline int cdp_screenshot(struct cdp *c, const char *path)
{
	char *r = cdp_call(c, 1, "Page.captureScreenshot", "{\"format\":\"png\"}");
	const char *p = r ? strstr(r, "\"data\":\"") : NULL;
	FILE *f = p ? fopen(path, "wb") : NULL;
	int rc = f ? 0 : -1;
	if (f) {
		unsigned v = 0, bits = 0;
		for (p += 8; *p && *p != '"'; p++) {
			int d = b64((unsigned char)*p);
			if (d < 0)
				continue;
			v = v << 6 | (unsigned)d;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				fputc((int)(v >> bits & 0xff), f);
			}
		}
		rc = fclose(f) ? -1 : 0;
	}
	free(r);
	return rc;
}

static inline void cdp_stop(struct cdp *c)
{
	int st;
	if (c->pid > 0) {
		free(cdp_call(c, 0, "Browser.close", NULL));
		close(c->to);
		close(c->from);
		for (int i = 0; i < 100 && waitpid(c->pid, &st, WNOHANG) == 0; i++)
			usleep(50000);
		if (waitpid(c->pid, &st, WNOHANG) == 0) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
		}
	}
	c->pid = 0;
	free(c->buf);
	c->buf = NULL;
}

#endif
