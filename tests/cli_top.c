/*
 * cli_top.c -- `posixtrace top` on examples/server (spans by the naming
 * convention).
 *
 *   pipe  `top -- server 3000`, stdout a file: one block per second, and
 *         when the program ends a last block whose since-start counts are
 *         the program's own: 3000 requests, 3000 queue waits, nothing
 *         incomplete, no events lost; exit status the program's (0).
 *   tmux  `top -- server 0` (runs until killed) in a tmux session: the
 *         screen shows the request span's p99; 'q' typed at the terminal
 *         ends top with status 0, and the server goes on running (not
 *         stopped, not dead) until the test kills it.
 * The tmux part is skipped (with a SKIP line) when tmux is not in PATH.
 */
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static const char *server = PT_BUILD_DIR "/examples/server";

/* The last line of s that starts with name, or NULL; its end in *e. */
static const char *last_line(const char *s, const char *name, const char **e)
{
	char pat[64];
	const char *p = NULL, *q = s;
	snprintf(pat, sizeof pat, "\n%s ", name);
	while ((q = strstr(q, pat)) != NULL)
		p = q++;
	if (!p)
		return NULL;
	p++;
	*e = strchr(p, '\n');
	if (!*e)
		*e = p + strlen(p);
	return p;
}

/* its number after '|': the spans since the start */
static long long all_count(const char *s, const char *name)
{
	const char *e, *p = last_line(s, name, &e);
	p = p ? memchr(p, '|', (size_t)(e - p)) : NULL;
	return p ? strtoll(p + 1, NULL, 10) : -1;
}

/* its last number: the incomplete spans */
static long long incomplete(const char *s, const char *name)
{
	const char *e, *p = last_line(s, name, &e);
	if (!p)
		return -1;
	while (e > p && e[-1] == ' ')
		e--;
	while (e > p && e[-1] >= '0' && e[-1] <= '9')
		e--;
	return strtoll(e, NULL, 10);
}

static void check_pipe(void)
{
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("top", "--", (char *)server, "3000"), &out, NULL), 0);
	REQUIRE(out);
	CHECK(cli_contains(out, "posixtrace top: server "));
	CHECK(!cli_contains(out, "\033[")); /* no terminal control on a file */
	CHECK_EQ(all_count(out, "request"), 3000);
	CHECK_EQ(all_count(out, "queue"), 3000);
	CHECK_EQ(all_count(out, "db"), 3000);
	CHECK_EQ(incomplete(out, "request"), 0);
	CHECK_EQ(incomplete(out, "queue"), 0);
	const char *last = out, *q = out;
	while ((q = strstr(q, "posixtrace top: ")) != NULL)
		last = q++;
	CHECK(cli_contains(last, "no events lost"));
	free(out);
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[4096];
	if (snprintf(cmd, sizeof cmd, fmt, a, b) >= (int)sizeof cmd)
		return -1;
	return system(cmd);
}

/* The tmux pane's text into buf. */
static void capture(const char *sock, char *buf, size_t cap)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "tmux -L %s capture-pane -p -t top 2>/dev/null", sock);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(buf, 1, cap - 1, p) : 0;
	buf[n] = 0;
	if (p)
		pclose(p);
}

static int pane_wait(const char *sock, const char *what, char *buf, size_t cap, int ms)
{
	for (int t = 0; t < ms; t += 100) {
		capture(sock, buf, cap);
		if (strstr(buf, what))
			return 1;
		usleep(100000);
	}
	return 0;
}

static void check_tmux(void)
{
	static char buf[65536];
	char sock[64], cmd[2048];
	if (!cli_which("tmux")) {
		printf("SKIP: tmux is not in PATH (Debian: tmux): top was not run at a terminal\n");
		return;
	}
	snprintf(sock, sizeof sock, "pt-top-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "%s top -- %s 0; echo TOP-EXIT=$?; sleep 60", cli_bin, server);
	CHECK_EQ(sh("TERM=xterm tmux -L %s new-session -d -s top -x 160 -y 50 '%s'", sock, cmd), 0);
	/* the screen: the header with the server's pid, and request's p99 */
	int shown = pane_wait(sock, "\nrequest ", buf, sizeof buf, 20000);
	CHECK(shown);
	int pid = 0;
	const char *h = strstr(buf, "posixtrace top: server ");
	CHECK(h && sscanf(h, "posixtrace top: server %d", &pid) == 1 && pid > 0);
	const char *r = strstr(buf, "\nrequest ");
	char name[32], p50[16], u50[8], p99[16], u99[8];
	unsigned long long last;
	CHECK(r && sscanf(r, "%31s %llu %15s %7s %15s %7s", name, &last, p50, u50, p99, u99) == 6 &&
	      (!strcmp(u99, "us") || !strcmp(u99, "ms")) && strtod(p99, NULL) > 0);
	/* q: top ends, the server goes on */
	CHECK_EQ(sh("tmux -L %s send-keys -t top q%s", sock, ""), 0);
	CHECK(pane_wait(sock, "TOP-EXIT=0", buf, sizeof buf, 10000));
	if (pid > 0) {
		char path[64], st[512];
		usleep(200000);
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(st, 1, sizeof st - 1, f) : 0;
		st[n] = 0;
		if (f)
			fclose(f);
		const char *paren = strrchr(st, ')');
		CHECK(paren && (paren[2] == 'S' || paren[2] == 'R')); /* running, not stopped */
		kill(pid, SIGKILL);
	}
	sh("tmux -L %s kill-server 2>/dev/null%s", sock, "");
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	if (access(server, X_OK) != 0)
		T_SKIP("examples/server is not built (make examples)");
	check_pipe();
	check_tmux();
	T_END();
}
