/*
 * sec_log.c -- a log whose header says the stream was created at a time
 * that cannot be (issue 47): the cap on its counts of lost events (one
 * event a nanosecond on every CPU since the stream was created,
 * pt_ext_losses) is computed without overflow, and a forged count is
 * still called implausible (docs/security.md, "What a hostile traced
 * process can do").
 *
 * Each log (written here with the log writer, so its checksums hold) has
 * a gap whose count of lost events is FORGED, and a total as large, and
 * a creation time of
 *   past    25e9 s before now: (now - created) * 1e9 overflowed int64, and
 *           wrapped to a cap of some 6.5e18 events a CPU: nothing was
 *           implausible;
 *   min     INT64_MIN seconds (the subtraction itself overflowed);
 *   nsec    now, with nanoseconds of INT64_MAX;
 *   future  INT64_MAX seconds.
 * Each is taken as the second a creation time too new gives: the counts
 * are clamped to a second's worth and called implausible, through the
 * library and in `posixtrace info`; show, stats, export and view's index
 * read it without error.  Built with SANITIZE=undefined (or as the
 * fuzzers are), the overflow itself was reported.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "cli_util.h"
#include "../src/log/log.h"
#include "../src/ext.h"

#define FORGED 1000000000000000ull /* 1e15: more than a second on any machine */
#define ID 300

static void write_log(const char *path, int64_t sec, int64_t nsec)
{
	struct pt_attr_img a;
	struct pt_logw_opt o = { 0 };
	struct pt_logw w;
	uint32_t v = 7;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	REQUIRE(fd >= 0);
	memset(&a, 0, sizeof a);
	strcpy(a.name, "sec_log");
	strcpy(a.version, "test");
	a.max_data = 64;
	a.log_policy = POSIX_TRACE_APPEND;
	a.has_log = 1;
	a.create_sec = sec;
	a.create_nsec = nsec;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	uint64_t t = 1700000000000000000ull;
	CHECK_RC(pt_logw_event(&w, t, 5, 6, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), 0);
	CHECK_RC(pt_logw_event_lost(&w, t + 1000, 5, 6, 0, POSIX_TRACE_RESUME, FORGED), 0);
	CHECK_RC(pt_logw_event(&w, t + 2000, 5, 6, 0x1234, ID, 0, &v, sizeof v), 0);
	w.stream_lost = FORGED;
	CHECK_RC(pt_logw_finish(&w, NULL), 0);
	pt_logw_free(&w);
	close(fd);
}

/* Through the library: the RESUME's count and the total, clamped. */
static void library(const char *path)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t second = 1000000000ull * (uint64_t)(cpus > 0 ? cpus : 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC), resumes = 0;
	trace_id_t t;
	struct posix_trace_event_info ev;
	struct pt_ext_losses x;
	unsigned char buf[64];
	size_t len;
	int un;

	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &t) == 0);
	while (posix_trace_getnext_event(t, &ev, buf, sizeof buf, &len, &un) == 0 && !un) {
		REQUIRE(pt_ext_losses(t, &x) == 0);
		if (ev.posix_event_id == POSIX_TRACE_RESUME) {
			resumes++;
			CHECK(x.resume_ok);
			CHECK_EQ(x.at_resume, second);
			CHECK_EQ(x.implausible, 1);
		}
	}
	REQUIRE(pt_ext_losses(t, &x) == 0);
	CHECK(x.total_ok);
	CHECK_EQ(x.total, second);
	CHECK_EQ(x.implausible, 1);
	CHECK_EQ(resumes, 1);
	posix_trace_close(t);
	close(fd);
}

static void commands(const char *path)
{
	char *out = NULL, *err = NULL;

	CHECK_EQ(cli_run(CLI("info", (char *)path), &out, &err), 0);
	CHECK(cli_contains(out, "implausibly many"));
	CHECK(!cli_contains(out, "1000000000000000"));
	if (!cli_contains(out, "implausibly many"))
		fprintf(stderr, "info %s:\n%s%s\n", path, out, err);
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)path), NULL, NULL), 0);
	CHECK_EQ(cli_run(CLI("stats", (char *)path), NULL, NULL), 0);
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "-o", (char *)cli_path("x.json"),
	                     "--force", (char *)path), NULL, NULL), 0);
}

int main(void)
{
	T_BEGIN(60);
	cli_setup();
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	static const struct { const char *name; int64_t sec, nsec; } logs[] = {
		{ "past.ptlog", 0, 0 },
		{ "min.ptlog", INT64_MIN, 0 },
		{ "nsec.ptlog", 0, INT64_MAX },
		{ "future.ptlog", INT64_MAX, 0 },
	};
	for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
		int64_t sec = logs[i].sec, nsec = logs[i].nsec;
		if (i == 0)
			sec = (int64_t)now.tv_sec - 25000000000ll;
		if (i == 2)
			sec = (int64_t)now.tv_sec;
		const char *path = cli_path(logs[i].name);
		write_log(path, sec, nsec);
		library(path);
		commands(path);
	}
	T_END();
}
