/*
 * cli_filter.c -- one identity for a thread, and the filters a person can
 * write, tried as a user would from --help: this test run as a program
 * (--program) records, from three named threads (alpha-0, alpha-1, beta),
 * JOBS "job" events described "id:u32, status:i32, ratio:f64, name:string"
 * and writes each thread's kernel TID and pthread_t to a file (the
 * witness).  Then:
 *  - show --thread PID/TID (as show prints it), --tid TID, --thread NAME,
 *    --name GLOB and --thread 0xPTHREAD each give exactly that thread's
 *    events; stats, info and the span report name the same PID/TID and
 *    name; stats --json says tid (kernel), name and pthread_t; export
 *    --format chrome and live take the same filters;
 *  - --type globs, --where on typed fields (numbers, float, string glob,
 *    &&, ||, !, parentheses), each count checked against the same
 *    predicate evaluated here on what the program recorded;
 *  - errors: an unknown field or a type mismatch (exit 1, naming it),
 *    bad syntax and hostile expressions (exit 2, never a crash), a
 *    pthread_t given to --tid, a thread that is not in the log;
 *  - a float payload field printed shortest round-trip (ratio=0.1).
 */
#include <fnmatch.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "cli_util.h"

#define JOBS 50
static const char *const tnames[3] = { "alpha-0", "alpha-1", "beta" };

struct job { uint32_t id; int32_t status; double ratio; char name[16]; };

static void job_of(int i, struct job *j)
{
	j->id = (uint32_t)i;
	j->status = i % 5 == 0 ? -1 : i % 3;
	j->ratio = i / 10.0;
	snprintf(j->name, sizeof j->name, "%s-%d", i % 2 ? "task" : "other", i);
}

/* ------------------------------------------------ the traced program */
static trace_event_id_t ev_job;
static FILE *witness;
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	pthread_setname_np(pthread_self(), tnames[me]);
	pthread_mutex_lock(&wlock);
	fprintf(witness, "%s %ld %#llx\n", tnames[me], (long)syscall(SYS_gettid),
	        (unsigned long long)pthread_self());
	pthread_mutex_unlock(&wlock);
	pthread_barrier_wait(&bar); /* all alive at once: no pthread_t reused */
	for (int i = 0; i < JOBS; i++) {
		struct job j;
		unsigned char buf[sizeof j];
		job_of(i, &j);
		/* laid out as the description says: u32, i32, f64, then the string */
		size_t n = strlen(j.name) + 1;
		memcpy(buf, &j.id, 4);
		memcpy(buf + 4, &j.status, 4);
		memcpy(buf + 8, &j.ratio, 8);
		memcpy(buf + 16, j.name, n);
		posix_trace_event(ev_job, buf, 16 + n);
	}
	pthread_barrier_wait(&bar);
	return NULL;
}

static int program(const char *wpath)
{
	pthread_t t[3];
	witness = fopen(wpath, "w");
	if (!witness)
		return 1;
	posix_trace_eventid_open("job", &ev_job);
	posixtrace_eventid_describe(ev_job, "id:u32, status:i32, ratio:f64, name:string");
	pthread_barrier_init(&bar, NULL, 3);
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	fclose(witness);
	return 0;
}

/* ------------------------------------------------ the checks */
static const char *log_path;
static int pid;
static struct { char name[16]; long tid; char pt[32]; char who[48]; } th[3];

/* The lines `show LOG ARGS...` prints (exit status into *rc). */
static int show_count(int *rc, char *const *args, char **err)
{
	char *argv[16] = { (char *)cli_bin, "show", (char *)log_path };
	int k = 3;
	for (; *args && k < 15; args++)
		argv[k++] = *args;
	argv[k] = NULL;
	char *out = NULL;
	*rc = cli_run(argv, &out, err);
	int n = out ? cli_nlines(out) : -1;
	free(out);
	return n;
}

#define SHOW(rc, ...) show_count(rc, (char *const[]){ __VA_ARGS__, NULL }, NULL)

/* The count of a thread's (or all threads') jobs that pred keeps. */
static int expect(int (*pred)(const struct job *), int threads)
{
	int n = 0;
	for (int i = 0; i < JOBS; i++) {
		struct job j;
		job_of(i, &j);
		n += pred(&j);
	}
	return n * threads;
}

static int p_neg(const struct job *j) { return j->status < 0; }
static int p_and(const struct job *j) { return j->status == 2 && j->ratio >= 2.5; }
static int p_glob(const struct job *j) { return fnmatch("task-1*", j->name, 0) == 0; }
static int p_not(const struct job *j) { return !(j->status >= 0) || j->id == 3; }
static int p_mix(const struct job *j) { return (j->id < 10 || j->id > 40) && j->name[0] != 'o'; }
static int p_ratio(const struct job *j) { return j->ratio == 0.1; }

static void where_is(const char *expr, int (*pred)(const struct job *), int threads,
                     const char *thread)
{
	int rc;
	int n = thread ? SHOW(&rc, "--where", (char *)expr, "--thread", (char *)thread)
	               : SHOW(&rc, "--where", (char *)expr);
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, expect(pred, threads));
	if (n != expect(pred, threads))
		fprintf(stderr, "--where '%s': %d lines, %d expected\n", expr, n,
		        expect(pred, threads));
}

static void refused(const char *expr, int code, const char *says)
{
	char *err = NULL;
	int rc;
	show_count(&rc, (char *const[]){ "--where", (char *)expr, NULL }, &err);
	CHECK_EQ(rc, code);
	CHECK(err && cli_contains(err, says));
	if (!err || !cli_contains(err, says))
		fprintf(stderr, "--where '%.60s': %s\n", expr, err ? err : "(nothing)");
	free(err);
}

int main(int argc, char **argv)
{
	char *out = NULL, *err = NULL, buf[512];
	int rc;

	if (argc == 3 && !strcmp(argv[1], "--program"))
		return program(argv[2]);
	T_BEGIN(120);
	cli_setup();
	log_path = cli_path("jobs.ptlog");
	const char *wpath = cli_path("witness.txt");
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	REQUIRE(cli_run(CLI("record", "-o", (char *)log_path, "--", self, "--program",
	                    (char *)wpath), NULL, NULL) == 0);
	/* who the threads were, from the program itself */
	char *w = cli_slurp(wpath);
	REQUIRE(w);
	for (int i = 0; i < 3; i++) {
		char nm[16], pt[32];
		long tid;
		REQUIRE(cli_line(w, i, buf, sizeof buf) == 0);
		REQUIRE(sscanf(buf, "%15s %ld %31s", nm, &tid, pt) == 3);
		int k = nm[0] == 'b' ? 2 : nm[6] - '0';
		snprintf(th[k].name, sizeof th[k].name, "%s", nm);
		snprintf(th[k].pt, sizeof th[k].pt, "%s", pt);
		th[k].tid = tid;
	}
	free(w);
	/* the program's pid: show's first job line */
	CHECK_EQ(cli_run(CLI("show", (char *)log_path, "--type", "job"), &out, NULL), 0);
	REQUIRE(out && cli_line(out, 0, buf, sizeof buf) == 0);
	REQUIRE(sscanf(buf, "%*s %*s %d/", &pid) == 1);
	CHECK_EQ(cli_nlines(out), 3 * JOBS);
	free(out);
	for (int i = 0; i < 3; i++)
		snprintf(th[i].who, sizeof th[i].who, "%d/%ld", pid, th[i].tid);

	/* ---- 1. one identity: what show prints, every command takes */
	for (int i = 0; i < 3; i++) {
		char tid[24];
		snprintf(tid, sizeof tid, "%ld", th[i].tid);
		CHECK_EQ(SHOW(&rc, "--thread", th[i].who), JOBS);
		CHECK_EQ(rc, 0);
		CHECK_EQ(SHOW(&rc, "--tid", tid), JOBS);
		CHECK_EQ(SHOW(&rc, "--thread", tid), JOBS);
		CHECK_EQ(SHOW(&rc, "--thread", th[i].name), JOBS);
		CHECK_EQ(SHOW(&rc, "--thread", th[i].pt), JOBS);
		CHECK_EQ(SHOW(&rc, "--name", th[i].name, "--type", "job"), JOBS);
		/* and each line says the thread so: PID/TID NAME */
		CHECK_EQ(cli_run(CLI("show", (char *)log_path, "--tid", tid), &out, NULL), 0);
		snprintf(buf, sizeof buf, " %s ", th[i].who);
		CHECK(cli_contains(out, buf) && cli_contains(out, th[i].name));
		free(out);
		/* stats: the events of that thread, its name in the table and JSON */
		CHECK_EQ(cli_run(CLI("stats", (char *)log_path, "--thread", th[i].who, "--json"), &out,
		                 NULL), 0);
		CHECK(cli_contains(out, "\"events\":50,"));
		snprintf(buf, sizeof buf, "{\"pid\":%d,\"thread\":\"%s\",\"tid\":%ld,\"name\":\"%s\","
		         "\"pthread_t\":\"%s\",\"count\":50,", pid, th[i].who, th[i].tid, th[i].name,
		         th[i].pt);
		CHECK(cli_contains(out, buf));
		if (!cli_contains(out, buf))
			fprintf(stderr, "stats --json lacks %s:\n%s\n", buf, out);
		free(out);
		CHECK_EQ(cli_run(CLI("stats", (char *)log_path), &out, NULL), 0);
		snprintf(buf, sizeof buf, "\n%-14s %-16s %7d ", th[i].who, th[i].name, JOBS);
		CHECK(cli_contains(out, buf));
		free(out);
		CHECK_EQ(cli_run(CLI("info", (char *)log_path), &out, NULL), 0);
		snprintf(buf, sizeof buf, "\n  %-14s  %-16s  %s ", th[i].who, th[i].name, th[i].pt);
		CHECK(cli_contains(out, buf));
		free(out);
	}
	CHECK_EQ(SHOW(&rc, "--name", "alpha-*"), 2 * JOBS);
	CHECK_EQ(SHOW(&rc, "--thread", "alpha-0,beta"), 2 * JOBS);
	CHECK_EQ(SHOW(&rc, "--pid", "1", "--thread", "beta"), 0); /* no process 1 */
	CHECK_EQ(rc, 1);
	/* export takes them too: beta's jobs alone */
	const char *js = cli_path("beta.json");
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", (char *)log_path, "-o", (char *)js, "--name",
	                     "beta", "--type", "job"), NULL, NULL), 0);
	out = cli_slurp(js);
	snprintf(buf, sizeof buf, "\"tid\":%ld", th[2].tid);
	int jobs = 0, others = 0;
	for (const char *s = out; s && cli_next_line(&s, buf + 100, sizeof buf - 100) == 0;)
		if (strstr(buf + 100, "\"name\":\"job\"") && strstr(buf + 100, "\"ph\":\"i\""))
			*(strstr(buf + 100, buf) ? &jobs : &others) += 1;
	CHECK_EQ(jobs, JOBS);
	CHECK_EQ(others, 0);
	free(out);

	/* live takes them too: a run of the program, beta's failed jobs only */
	CHECK_EQ(cli_run(CLI("live", "--name", "beta", "--where", "status<0", "--", self, "--program",
	                     (char *)cli_path("witness2.txt")), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), expect(p_neg, 1));
	CHECK(cli_contains(out, " beta ") && !cli_contains(out, "alpha"));
	free(out);

	/* ---- 2. filters a person can write */
	CHECK_EQ(SHOW(&rc, "--type", "j*"), 3 * JOBS);
	CHECK_EQ(SHOW(&rc, "--type", "posix_trace_*", "--exclude", "posix_trace_flush*"), 2);
	where_is("status<0", p_neg, 3, NULL);
	where_is("status == 2 && ratio >= 2.5", p_and, 3, NULL);
	where_is("name==\"task-1*\"", p_glob, 3, NULL);
	where_is("!(status>=0) || id==3", p_not, 1, th[1].who);
	where_is("(id<10 || id>40) && name!='o*'", p_mix, 3, NULL);
	where_is("ratio==0.1", p_ratio, 3, NULL);
	/* a float as babeltrace2 prints it: the shortest text that reads back */
	CHECK_EQ(cli_run(CLI("show", (char *)log_path, "--where", "id==1", "--thread", "beta"),
	                 &out, NULL), 0);
	CHECK(cli_contains(out, " ratio=0.1 ") && cli_contains(out, "name=\"task-1\""));
	free(out);
	/* errors a person can read */
	refused("nosuch>1", 1, "no event type of");
	refused("nosuch>1", 1, "has a field 'nosuch' (its fields: id, status, ratio, name)");
	refused("name<3", 1, "field 'name' of 'job' is a string");
	refused("status==\"x\"", 1, "field 'status' of 'job' is a number (i32)");
	refused("status=1", 2, "write '=='");
	refused("status<", 2, "expected a number");
	refused("(status<1", 2, "expected ')'");
	refused("status<1)", 2, "a ')' with no '('");
	refused("status<1 & id>2", 2, "write '&&'");
	refused("name==\"abc", 2, "no closing");
	refused("", 2, "expected a comparison");
	refused("status<99999999999999999999999", 2, "too large");
	/* hostile: deep nesting, a huge expression, many nodes: refused, no crash */
	static char deep[20000];
	memset(deep, '(', 3000);
	strcpy(deep + 3000, "id<1");
	refused(deep, 2, "nested more than");
	memset(deep, 'a', sizeof deep - 1);
	deep[sizeof deep - 1] = 0;
	refused(deep, 2, "longer than");
	size_t o = 0;
	for (int i = 0; i < 600 && o + 10 < 4000; i++)
		o += (size_t)snprintf(deep + o, sizeof deep - o, "%sid<%d", i ? "||" : "", i);
	refused(deep, 2, "more than");
	refused("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!id<1", 2,
	        "nested more than");
	/* threads: a pthread_t is not a kernel TID; a thread not in the log */
	show_count(&rc, (char *const[]){ "--tid", th[0].pt, NULL }, &err);
	CHECK_EQ(rc, 2);
	CHECK(cli_contains(err, "--thread"));
	free(err);
	snprintf(buf, sizeof buf, "%d/1", pid);
	show_count(&rc, (char *const[]){ "--thread", buf, NULL }, &err);
	CHECK_EQ(rc, 1);
	CHECK(cli_contains(err, "no thread ") && cli_contains(err, buf));
	free(err);
	show_count(&rc, (char *const[]){ "--name", "gamma", NULL }, &err);
	CHECK_EQ(rc, 1);
	CHECK(cli_contains(err, "no thread named 'gamma'"));
	free(err);
	/* the help says it all */
	CHECK_EQ(cli_run(CLI("show", "--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "--where EXPR") && cli_contains(out, "--name GLOB") &&
	      cli_contains(out, "PID/TID"));
	free(out);
	T_END();
}
