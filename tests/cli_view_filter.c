/*
 * cli_view_filter.c -- `posixtrace view` takes the filters of show: on a
 * recorded examples/app, `view --name worker-1` serves a page whose /meta
 * counts only worker-1's events (in all, per type, per lane: the other
 * lanes 0), with time 0 where it is without the filter, and whose /query
 * of the whole trace gives exactly those events, all on worker-1's lane;
 * `view --where 'status==404'` counts the app's 404 replies; an unknown
 * field is refused before the server starts.  (The server listens on a
 * free loopback port, stopped by the test.)  Skipped when posixtrace was
 * built without libmicrohttpd (no server).
 */
#include <stdint.h>
#include <string.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"

static long long json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* /meta of `view LOG ARGS`, or NULL. */
static char *meta_of(struct view_srv *vs, char *const argv[])
{
	char *body = NULL;
	if (view_start(vs, argv, cli_path("view.out"), cli_path("view.err"), 60) != 0)
		return NULL;
	if (view_get(vs, "/meta", NULL, 0, &body) != 200) {
		free(body);
		return NULL;
	}
	return body;
}

int main(void)
{
	struct cli_ev *ev;
	struct view_srv vs;
	char path[160], *err = NULL;

	T_BEGIN(120);
	cli_setup();
	cli_need_view();
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	/* the witness: the log read with posix_trace_open() */
	int replies404 = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(ev[i].name, "reply") && ev[i].len >= 12) {
			int32_t status;
			memcpy(&status, ev[i].data + 8, 4);
			replies404 += status == 404;
		}
	CHECK(replies404 > 0);

	/* without a filter: time 0 */
	char *all = meta_of(&vs, CLI("view", (char *)log));
	view_stop(&vs);
	REQUIRE(all);
	long long t0 = json_num(all, "t0");

	/* worker-1 alone */
	char *m = meta_of(&vs, CLI("view", "--name", "worker-1", (char *)log));
	REQUIRE(m);
	CHECK_EQ(json_num(m, "events"), 40); /* its 20 requests and 20 replies */
	CHECK_EQ(json_num(m, "t0"), t0);
	CHECK(strstr(m, "\"count\":20,\"name\":\"request\"") && strstr(m, "\"count\":20,\"name\":\"reply\""));
	CHECK(!strstr(m, "\"name\":\"tick\""));
	const char *w1 = strstr(m, " worker-1\"");
	CHECK(w1 != NULL);
	/* lanes: worker-1's counts 40, every other 0 */
	int lanes = 0, nonzero = 0;
	for (const char *p = strstr(m, "\"lanes\":["); p && (p = strstr(p, "\"count\":")); p++) {
		long long c = strtoll(p + 8, NULL, 10);
		lanes++;
		nonzero += c != 0;
		if (c)
			CHECK_EQ(c, 40);
	}
	CHECK(lanes >= 5);
	CHECK_EQ(nonzero, 1);
	/* the events of the whole trace: 40, all on one lane */
	char *q = NULL;
	snprintf(path, sizeof path, "/query?from=0&to=%lld&cols=1000", json_num(m, "span"));
	CHECK_EQ(view_get(&vs, path, NULL, 0, &q), 200);
	int evs = 0, other = 0, lane = -1;
	const char *evl = q ? strstr(q, "\"ev\":[") : NULL;
	for (const char *p = evl ? evl + 5 : NULL; p && (p = strstr(p + 1, "[")) != NULL;) {
		int ln;
		if (sscanf(p, "[%d,", &ln) != 1)
			break;
		if (lane < 0)
			lane = ln;
		other += ln != lane;
		evs++;
	}
	CHECK_EQ(evs, 40);
	CHECK_EQ(other, 0);
	free(q);
	free(m);
	view_stop(&vs);

	/* a payload field */
	m = meta_of(&vs, CLI("view", "--where", "status==404", (char *)log));
	REQUIRE(m);
	CHECK_EQ(json_num(m, "events"), replies404);
	free(m);
	view_stop(&vs);
	/* refused before serving */
	CHECK_EQ(cli_run(CLI("view", "--where", "nosuch==1", (char *)log), NULL, &err), 1);
	CHECK(cli_contains(err, "has a field 'nosuch'"));
	free(err);
	free(all);
	free(ev);
	T_END();
}
