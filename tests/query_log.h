/*
 * query_log.h -- a log whose every row is known, for the tests and the
 * benchmark of `posixtrace query` and the SQLite extension (tests/
 * cli_query.c, bench/query.c), written straight with the log writer as
 * biglog.h does (and with its biglog_open, biglog_end).
 *
 * Process 100 ("server --port 80", parent 1) has threads A (TID 101,
 * "main") and B (TID 102, "worker-1"); process 200 ("child", parent 100)
 * thread C (TID 201, "child").  Types 17..24: req/begin (described
 * "id:u64"), req/end, db/begin, db/end, hand/async-begin, hand/async-end
 * (keyed by their first 8 bytes), tick ("n:u32,cost:f64,who:string"),
 * note (no description).  Round r (of n), from t = QLOG_T0 + r * 10 us:
 *
 *   t+0    A req/begin {id: r}        t+100  A db/begin
 *   t+50   A hand/async-begin key r   t+300  A db/end
 *   t+500  hand/async-end key r, on B when r is even, else on A
 *   t+700  C tick {n: r, cost: r / 2, who: "c"}
 *   t+800  B note
 *   t+1000 + (r % 10) * 10   A req/end
 *
 * so req lasts 1000 + (r % 10) * 10 ns (depth 0), db 200 ns (depth 1,
 * inside req), hand 450 ns; flow has a row per even round.  Between
 * rounds n/2 - 1 and n/2 (n >= 2) a gap: OVERFLOW then RESUME (5 lost),
 * pid 0.  After the last round a req/begin left open (no slice).
 * hand/async-end is described too ("key:u64").
 * Every event has its own timestamp, in the order written: event i of
 * the log is the i-th written, 9 a round (+2 at the gap, +1 at the end).
 */
#ifndef POSIXTRACE_TEST_QUERY_LOG_H
#define POSIXTRACE_TEST_QUERY_LOG_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <trace.h>
#include "../src/ext.h"
#include "../src/log/log.h"
#include "biglog.h"

#define QLOG_T0 1764255600000000000ull
#define QLOG_ROUND 10000u
#define QLOG_LOST 5u
#define QLOG_A 0x7f0000a000ull
#define QLOG_B 0x7f0000b000ull
#define QLOG_C 0x7f0000c000ull

static inline uint64_t qlog_events(uint64_t n)
{
	return 9 * n + (n >= 2 ? 2 : 0) + 1;
}

static inline uint64_t qlog_req_dur(uint64_t r)
{
	return 1000 + r % 10 * 10;
}

static inline int qlog_meta(struct pt_logw *w, uint16_t kind, int32_t pid, uint64_t base,
                            uint64_t lo, const char *path)
{
	struct pt_ext_obj o;
	memset(&o, 0, sizeof o);
	o.ts = QLOG_T0 - 1000, o.kind = kind, o.pid = pid, o.base = base, o.lo = lo;
	snprintf(o.path, sizeof o.path, "%s", path);
	return pt_logw_obj(w, &o);
}

static inline int qlog_write(const char *path, uint64_t n)
{
	static const char *const names[] = { "req/begin", "req/end", "db/begin", "db/end",
	                                     "hand/async-begin", "hand/async-end", "tick", "note" };
	struct pt_logw w;
	int fd, rc = biglog_open(&w, &fd, path, "qlog", QLOG_T0, names, 8);

	if (rc)
		return rc;
	rc = qlog_meta(&w, PT_EXT_OBJ_PROC, 100, 0, 1, "server --port 80");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_PROC, 200, 0, 100, "child");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_THREAD, 100, QLOG_A, 101, "main");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_THREAD, 100, QLOG_B, 102, "worker-1");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_THREAD, 200, QLOG_C, 201, "child");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_TYPE, 100, 0, 17, "id:u64");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_TYPE, 200, 0, 23, "n:u32,cost:f64,who:string");
	if (!rc)
		rc = qlog_meta(&w, PT_EXT_OBJ_TYPE, 100, 0, 22, "key:u64");
	for (uint64_t r = 0; r < n && !rc; r++) {
		uint64_t t = QLOG_T0 + r * QLOG_ROUND;
		struct { uint32_t n; uint32_t pad; double cost; char who[2]; } tick;
		memset(&tick, 0, sizeof tick);
		tick.n = (uint32_t)r, tick.cost = (double)r / 2, tick.who[0] = 'c';
		if (r && r == n / 2) {
			rc = pt_logw_event(&w, t - 200, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0);
			if (!rc)
				rc = pt_logw_event_lost(&w, t - 100, 0, 0, 0, POSIX_TRACE_RESUME, QLOG_LOST);
		}
#define QEV(dt, pid, th, id, p, len) \
		if (!rc) rc = pt_logw_event(&w, t + (dt), pid, th, 0x401000 + (id), id, 0, p, len)
		QEV(0, 100, QLOG_A, 17, &r, 8);
		QEV(50, 100, QLOG_A, 21, &r, 8);
		QEV(100, 100, QLOG_A, 19, NULL, 0);
		QEV(300, 100, QLOG_A, 20, NULL, 0);
		QEV(500, 100, r % 2 ? QLOG_A : QLOG_B, 22, &r, 8);
		QEV(700, 200, QLOG_C, 23, &tick, 18);
		QEV(800, 100, QLOG_B, 24, NULL, 0);
		QEV(qlog_req_dur(r), 100, QLOG_A, 18, NULL, 0);
		QEV(2000, 200, QLOG_C, 24, NULL, 0);
#undef QEV
	}
	if (!rc) {
		uint64_t r = n;
		rc = pt_logw_event(&w, QLOG_T0 + n * QLOG_ROUND, 100, QLOG_A, 0x401011, 17, 0, &r, 8);
	}
	return biglog_end(&w, fd, rc, 1, n >= 2 ? QLOG_LOST : 0);
}

/* The extension of a sanitized build is built with the sanitizer's
 * runtime, which must be the first library of the process that loads it:
 * for AddressSanitizer the host programs (sqlite3, python3) get it
 * preloaded (PT_ASAN_RT, the Makefile's; leaks of the hosts themselves
 * not reported); a ThreadSanitizer host cannot be made so, and the test
 * skips.  Call before starting a host. */
static inline void qlog_sanitized_hosts(void)
{
#if defined(__SANITIZE_THREAD__)
	T_SKIP("a ThreadSanitizer build's extension loads only into a program built with it "
	       "(sqlite3 and python3 are not)");
#elif defined(__SANITIZE_ADDRESS__) && defined(PT_ASAN_RT)
	setenv("LD_PRELOAD", PT_ASAN_RT, 1);
	setenv("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0", 1);
#elif defined(__SANITIZE_ADDRESS__)
	T_SKIP("AddressSanitizer build without PT_ASAN_RT: the hosts cannot load the extension");
#endif
}

#ifdef POSIXTRACE_CLI_UTIL_H
/* The extension's hosts, for the tests that load it (sql_ext,
 * sql_ext_host): skips (exit 77, saying why) when the command was built
 * without SQLite, when there is no sqlite3 shell or no python3 whose
 * sqlite3 module loads extensions, or when a sanitized build's extension
 * cannot be loaded by them (qlog_sanitized_hosts); else their paths. */
static inline void qlog_hosts(const char *ext, char **sqlite, char **python)
{
	char *err = NULL;
	if (cli_run(CLI("query", "/dev/null", "SELECT 1"), NULL, &err) == 1 &&
	    cli_contains(err, "without SQLite"))
		T_SKIP("built without SQLite (libsqlite3-dev): no extension");
	free(err);
	REQUIRE(access(ext, R_OK) == 0); /* (make builds it with SQLite) */
	qlog_sanitized_hosts();
	const char *s = cli_which("sqlite3");
	if (!s)
		T_SKIP("the sqlite3 shell is missing (Debian: apt-get install sqlite3)");
	*sqlite = strdup(s);
	const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" :
	                                                        cli_which("python3");
	int rc = -1;
	if (py) {
		*python = strdup(py);
		rc = cli_run(((char *const[]){ *python, "-c",
		                              "import sqlite3; sqlite3.connect(':memory:')."
		                              "enable_load_extension", NULL }), NULL, NULL);
	}
	if (rc != 0)
		T_SKIP("no python3 whose sqlite3 module loads extensions (Debian: python3)");
}
#endif

#endif
