/*
 * cli_span_key.c -- spans keyed by a described field, tried as a user
 * would from `stats --help`: this test run as a program (--program) is a
 * job queue: a thread "producer" records "enqueue" (job:u32, prio:u8: a
 * struct with 3 bytes of padding, filled with junk that changes with each
 * job) for JOBS jobs, and two threads "worker-0", "worker-1" take them and
 * record "job/begin" (job:u32, worker:u32) and "job/end" (job:u32,
 * status:i32).  Then:
 *  - stats --span enqueue,job/begin,qwait,key=job pairs every enqueue with
 *    its job's begin across threads: JOBS complete, none incomplete
 *    (the first 8 bytes would hold the junk: ',key' alone pairs by them);
 *  - that --span takes job/begin from the built-in span job: a note says
 *    so, and job/end becomes a plain event (no "job" span of JOBS
 *    incomplete ones); without --span, the built-in job span has JOBS;
 *  - a key field that a type does not describe is refused (exit 1, its
 *    fields named); an empty one is a usage error;
 *  - the Chrome export draws a flow (ph s, then f) from each enqueue to
 *    its begin on another thread, JOBS of them, each id once each way;
 *    the Perfetto export's enqueue events carry flow_ids and the begins
 *    terminating_flow_ids, the same JOBS ids (decoded by protoc when it is
 *    installed).
 */
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "pf_util.h"

#define JOBS 200

/* ------------------------------------------------ the traced program */
static trace_event_id_t ev_enq, ev_begin, ev_end;
static unsigned queue[JOBS], qhead, qtail, done_producing;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "producer");
	for (unsigned i = 0; i < JOBS; i++) {
		struct { uint32_t job; uint8_t prio; } e;
		memset(&e, (int)(0x5a + i), sizeof e); /* junk in the padding */
		e.job = 1000 + i;
		e.prio = (uint8_t)(i % 3);
		posix_trace_event(ev_enq, &e, sizeof e);
		pthread_mutex_lock(&qlock);
		queue[qtail++] = e.job;
		pthread_cond_signal(&qcond);
		pthread_mutex_unlock(&qlock);
	}
	pthread_mutex_lock(&qlock);
	done_producing = 1;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	return NULL;
}

static void *worker(void *arg)
{
	char name[16];
	uint32_t me = (uint32_t)(uintptr_t)arg;
	snprintf(name, sizeof name, "worker-%u", me);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (qhead == qtail && !done_producing)
			pthread_cond_wait(&qcond, &qlock);
		if (qhead == qtail) {
			pthread_mutex_unlock(&qlock);
			return NULL;
		}
		uint32_t job = queue[qhead++];
		pthread_mutex_unlock(&qlock);
		struct { uint32_t job, worker; } b = { job, me };
		posix_trace_event(ev_begin, &b, sizeof b);
		struct { uint32_t job; int32_t status; } e = { job, job % 7 ? 0 : -1 };
		posix_trace_event(ev_end, &e, sizeof e);
	}
}

static int program(void)
{
	pthread_t p, w[2];
	posix_trace_eventid_open("enqueue", &ev_enq);
	posix_trace_eventid_open("job/begin", &ev_begin);
	posix_trace_eventid_open("job/end", &ev_end);
	posixtrace_eventid_describe(ev_enq, "job:u32, prio:u8");
	posixtrace_eventid_describe(ev_begin, "job:u32, worker:u32");
	posixtrace_eventid_describe(ev_end, "job:u32, status:i32");
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	return 0;
}

/* ------------------------------------------------ the checks */
static long long num_after(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* The ids after key ("\"id\":" in the lines with ph), each once: how many
 * lines, and whether every id of one list is in the other. */
static int ids_of(const char *s, const char *ph, unsigned long long *ids, int cap)
{
	char line[2048];
	int n = 0;
	for (const char *p = s; p && cli_next_line(&p, line, sizeof line) == 0;) {
		const char *i = strstr(line, "\"id\":");
		if (!strstr(line, ph) || !strstr(line, "\"name\":\"qwait\"") || !i)
			continue;
		if (n < cap)
			ids[n] = strtoull(i + 5, NULL, 10);
		n++;
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char self[4096], *out = NULL, *err = NULL;

	if (argc == 2 && !strcmp(argv[1], "--program"))
		return program();
	T_BEGIN(120);
	cli_setup();
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	const char *log = cli_path("jobs.ptlog");
	REQUIRE(cli_run(CLI("record", "-o", (char *)log, "--", self, "--program"), NULL, NULL) == 0);

	/* keyed by the field: every wait pairs, across threads */
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--json", "--span",
	                     "enqueue,job/begin,qwait,key=job"), &out, &err), 0);
	const char *q = out ? strstr(out, "{\"name\":\"qwait\"") : NULL;
	CHECK(q != NULL);
	CHECK_EQ(num_after(q, "\"count\":"), JOBS);
	CHECK_EQ(num_after(q, "\"incomplete\":"), 0);
	/* job/begin is the --span's: job/end is a plain event, said */
	CHECK(out && !strstr(out, "{\"name\":\"job\""));
	CHECK(cli_contains(err, "takes 'job/begin' from the built-in span") &&
	      cli_contains(err, "'job/end' is a plain event"));
	free(out);
	free(err);
	/* without it, the built-in span has every job */
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--json"), &out, &err), 0);
	q = out ? strstr(out, "{\"name\":\"job\"") : NULL;
	CHECK(q != NULL);
	CHECK_EQ(num_after(q, "\"count\":"), JOBS);
	CHECK_EQ(num_after(q, "\"incomplete\":"), 0);
	CHECK(!cli_contains(err, "note:"));
	free(out);
	free(err);
	/* errors */
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--span", "enqueue,job/begin,qwait,key=nosuch"),
	                 &out, &err), 1);
	CHECK(cli_contains(err, "type 'enqueue' has no field 'nosuch' (its fields: job, prio)"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--span", "enqueue,job/begin,qwait,key="), &out,
	                 &err), 2);
	CHECK(cli_contains(err, "key=FIELD needs a field name"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("stats", "--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "key=FIELD"));
	free(out);

	/* Chrome: a flow from each enqueue to its begin, on another thread */
	const char *js = cli_path("jobs.json");
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", (char *)log, "-o", (char *)js, "--span",
	                     "enqueue,job/begin,qwait,key=job"), NULL, NULL), 0);
	out = cli_slurp(js);
	static unsigned long long s_ids[JOBS + 8], f_ids[JOBS + 8];
	int ns = ids_of(out, "\"ph\":\"s\"", s_ids, JOBS + 8);
	int nf = ids_of(out, "\"ph\":\"f\"", f_ids, JOBS + 8);
	CHECK_EQ(ns, JOBS);
	CHECK_EQ(nf, JOBS);
	if (ns == JOBS && nf == JOBS) {
		qsort(s_ids, JOBS, sizeof s_ids[0], cmp_u64);
		qsort(f_ids, JOBS, sizeof f_ids[0], cmp_u64);
		int same = !memcmp(s_ids, f_ids, sizeof s_ids[0] * JOBS), dup = 0;
		for (int i = 1; i < JOBS; i++)
			dup += s_ids[i] == s_ids[i - 1];
		CHECK(same);
		CHECK_EQ(dup, 0);
	}
	free(out);

	/* Perfetto: flow_ids on the enqueues, terminating_flow_ids on the begins */
	if (!(protoc = cli_which("protoc")) || find_schema()) {
		printf("note: protoc or a schema missing: the Perfetto flows not checked\n");
		T_END();
	}
	const char *pf = cli_path("jobs.pftrace"), *txt = cli_path("jobs.txt");
	CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--no-compress", (char *)log, "-o",
	                     (char *)pf, "--span", "enqueue,job/begin,qwait,key=job"), NULL, NULL), 0);
	char cmd[2400];
	snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' '%s' < '%s' > '%s'",
	         protoc, schema_dir, schema_file, pf, txt);
	CHECK_EQ(system(cmd), 0);
	out = cli_slurp(txt);
	int nfl = 0, nterm = 0;
	unsigned long long sum_s = 0, sum_t = 0;
	char line[512];
	for (const char *p = out; p && cli_next_line(&p, line, sizeof line) == 0;) {
		const char *t = line + strspn(line, " ");
		unsigned long long v;
		if (sscanf(t, "flow_ids: %llu", &v) == 1)
			nfl++, sum_s += v;
		else if (sscanf(t, "terminating_flow_ids: %llu", &v) == 1)
			nterm++, sum_t += v;
	}
	CHECK_EQ(nfl, JOBS);
	CHECK_EQ(nterm, JOBS);
	CHECK(sum_s == sum_t && sum_s > 0);
	free(out);
	T_END();
}
