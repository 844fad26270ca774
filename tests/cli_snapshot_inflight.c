/*
 * cli_snapshot_inflight.c -- a snapshot holds the events stamped in its
 * window even when their writer is held inside posix_trace_event() at the
 * window's end (`record --flight`, src/control/snapshot.c, settle): the copy
 * waits for the writer's in-flight mark to clear.  (It waited a fixed
 * 2 ms after the window's end, and a writer preempted inside the call
 * longer than that had its event left out.)
 *
 * The program is this test again ("app"): a thread records WARM "held"
 * events from one call site (payload: a sequence number), then one more
 * whose payload is a page made PROT_NONE, so the copy into the chunk
 * faults after the event was stamped; its SIGSEGV handler waits until
 * the main thread has raised the trigger "inflight", then HOLD_MS more,
 * makes the page readable and returns: stamped before the trigger,
 * committed well after it.  The recorder (--before 1s --after 0, its
 * bound for a writer in flight 10 s: POSIXTRACE_LATE_WAIT_MS) writes one
 * snapshot.
 *
 * Checked: one snapshot, one trigger; it holds the WARM + 1 held events,
 * in order, the last the held one, stamped before the trigger.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"

#define WARM    5
#define HOLD_MS 50

static trace_event_id_t id_held;
static atomic_int faulted, triggered;

__attribute__((noinline)) static void emit(const void *p, size_t n)
{
	posix_trace_event(id_held, p, n);
}

/* The held event's fault (t_held_init): until the trigger, then HOLD_MS more. */
static void hold(void)
{
	atomic_store(&faulted, 1);
	for (int i = 0; i < 20000 && !atomic_load(&triggered); i++)
		t_nap_ms(1);
	t_nap_ms(HOLD_MS);
}

static void *held_writer(void *arg)
{
	uint64_t seq = 0;
	(void)arg;
	for (; seq < WARM; seq++)
		emit(&seq, sizeof seq);
	const void *page = t_held_page(&seq, sizeof seq);
	if (!page)
		return NULL;
	emit(page, sizeof seq); /* stamped, then held in the copy */
	return NULL;
}

static int app(void)
{
	pthread_t th;
	alarm(60);
	if (t_held_init(hold) != 0 ||
	    posix_trace_eventid_open("held", &id_held) != 0 ||
	    pthread_create(&th, NULL, held_writer, NULL) != 0)
		return 2;
	while (!atomic_load(&faulted))
		t_nap_ms(1);
	posixtrace_trigger("inflight");
	atomic_store(&triggered, 1);
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "app"))
		return app();
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("inflight");
	char *err = NULL;
	char *env[] = { (char *)"POSIXTRACE_LATE_WAIT_MS=10000", NULL };
	int rc = cli_run_env(CLI("record", "--flight", "16M", "--snapshot-on", "trigger:inflight",
	                         "--before", "1s", "-o", (char *)dir, "--", argv[0], "app"),
	                     NULL, &err, env);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_count_logs(dir), 1);
	CHECK(cli_contains(err, "1 trigger, 1 snapshot written"));
	if (rc || !cli_contains(err, "1 snapshot written"))
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);

	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char path[600];
	snprintf(path, sizeof path, "%s/%s-1.ptlog", dir, base);
	int fd = open(path, O_RDONLY);
	trace_id_t l;
	if (fd < 0) {
		CHECK(!"the snapshot is there");
		T_END();
	}
	REQUIRE(posix_trace_open(fd, &l) == 0);
	struct posix_trace_event_info e;
	uint64_t seq, next = 0, held_ts = 0, trig_ts = 0;
	size_t len;
	int unav, trig = 0, order = 1;
	while (posix_trace_getnext_event(l, &e, &seq, sizeof seq, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1] = "";
		posix_trace_eventid_get_name(l, e.posix_event_id, nm);
		uint64_t ts = (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)e.posix_timestamp.tv_nsec;
		if (!strcmp(nm, "held")) {
			order &= len == sizeof seq && seq == next;
			next++;
			held_ts = ts;
		} else if (!strcmp(nm, "posixtrace_trigger")) {
			trig++;
			trig_ts = ts;
		}
	}
	posix_trace_close(l);
	close(fd);
	CHECK_EQ(trig, 1);
	CHECK_EQ(next, WARM + 1); /* the held one too */
	CHECK(order);
	CHECK(held_ts < trig_ts);
	T_END();
}
