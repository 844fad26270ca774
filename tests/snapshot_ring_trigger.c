/*
 * snapshot_ring_trigger.c -- posixtrace_trigger() seen by the flight
 * recorder's follower (src/control/snapshot.c), in process.
 *
 *  3. posixtrace_trigger(): the follower sees the system event with the
 *     name as payload, cut at 63 bytes; with no stream running it does
 *     nothing.  A callback that returns non-zero ends the poll there: two
 *     threads' triggers, one a poll, in order, then none.
 * Every snapshot read back has its summary checked against its events
 * (snapring_util.h).
 */
#include "t.h"
#include "snapring_util.h"

static int stop_at_one(void *arg, const struct pt_ext_fev *e)
{
	struct fw *w = arg;
	on_ev(w, e);
	return 1;
}

static void *trig_thread(void *arg)
{
	posixtrace_trigger(arg);
	return NULL;
}

static void part3(void)
{
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64] = { 0 };
	struct pt_ext_follow *f;
	struct fw fw = { { 0 }, 0, 0, 0, "" };
	char longname[100];

	posixtrace_trigger("nothing runs"); /* no stream: nothing, no crash */
	posixtrace_trigger(NULL);
	start_stream(1u << 20);
	want[PT_EXT_TRIGGER / 64] |= 1ull << (PT_EXT_TRIGGER % 64);
	REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	posixtrace_trigger("slow-disk");
	CHECK_EQ(pt_ext_follow_poll(f, on_ev, &fw), 1);
	CHECK_EQ(fw.trig, 1);
	CHECK(strcmp(fw.name, "slow-disk") == 0);
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	posixtrace_trigger(longname);
	CHECK_EQ(pt_ext_follow_poll(f, on_ev, &fw), 1);
	CHECK_EQ(strlen(fw.name), 63);
	/* stopped after one: two writers (two chunks), one a poll */
	pthread_t th;
	posixtrace_trigger("first");
	REQUIRE(pthread_create(&th, NULL, trig_thread, "second") == 0);
	pthread_join(th, NULL);
	fw.trig = 0;
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 1);
	CHECK_EQ(fw.trig, 1);
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 1);
	CHECK_EQ(fw.trig, 2);
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 0);
	char nm[TRACE_EVENT_NAME_MAX + 1];
	CHECK_RC(posix_trace_eventid_get_name(trid, PT_EXT_TRIGGER, nm), 0);
	CHECK(strcmp(nm, "posixtrace_trigger") == 0);
	pt_ext_follow_close(f);
	posix_trace_shutdown(trid);
}

int main(void)
{
	T_BEGIN(120);
	part3();
	T_END();
}
