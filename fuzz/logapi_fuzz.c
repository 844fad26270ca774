/*
 * logapi_fuzz.c -- libFuzzer target for a log read through the library's
 * calls, as every command of posixtrace reads one: posix_trace_open() on
 * the input (in a memfd), its attributes (the creation time among them),
 * each event with the counts of what was lost after it (pt_ext_losses,
 * whose cap is computed from the header's creation time), the map's
 * entries, threads, types and processes, the summary, a seek, and
 * posix_trace_close().  Linked with the whole library built with
 * PT_LOG_FUZZ_NOCRC (checksums ignored), so that a mutated header or
 * block reaches the arithmetic behind the checks; with UBSan, an
 * overflow in any of it is a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <trace.h>
#include "fuzz_file.h"
#include "../src/ext.h"

int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts);
pthread_t ptfuzz_thread_self(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts) { return clock_gettime(clk, ts); }
pthread_t ptfuzz_thread_self(void) { return (pthread_t)0x7f0000001000ul; }

static int fd; /* the input: fuzz_file() */

static void losses(trace_id_t t)
{
	struct pt_ext_losses x;
	if (pt_ext_losses(t, &x) == 0 && (x.resume_ok > 1 || x.implausible > 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char buf[TRACE_DATA_MAX];
	static struct pt_ext_obj objs[8];
	static struct pt_ext_thread ths[8];
	static struct pt_ext_type tys[8];
	static struct pt_ext_proc prs[8];
	struct posix_trace_event_info ev;
	trace_attr_t a;
	trace_id_t t;
	size_t len, n;
	int un;

	fd = fuzz_file("logapi_fuzz", data, size, NULL, 0);
	struct pt_ext_summary *s = NULL;
	if (pt_ext_log_summary(fd, &s) == 0)
		pt_ext_summary_free(s);
	if (posix_trace_open(fd, &t) != 0)
		return 0;
	if (posix_trace_get_attr(t, &a) == 0) {
		struct timespec ct;
		size_t sz;
		posix_trace_attr_getcreatetime(&a, &ct);
		posix_trace_attr_getmaxdatasize(&a, &sz);
		posix_trace_attr_destroy(&a);
	}
	losses(t);
	pt_ext_objects(t, 0, objs, 8, &n);
	pt_ext_threads(t, 0, ths, 8, &n);
	pt_ext_types(t, 0, tys, 8, &n);
	pt_ext_procs(t, 0, prs, 8, &n);
	if (pt_ext_log_census(t, &s, &(uint64_t){ 0 }) == 0)
		pt_ext_summary_free(s);
	uint64_t last = 0, k = 0;
	while (posix_trace_getnext_event(t, &ev, buf, sizeof buf, &len, &un) == 0 && !un) {
		last = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		       (uint64_t)ev.posix_timestamp.tv_nsec;
		losses(t);
		if (++k > 1000000)
			abort(); /* more events than an 8 KiB file can hold */
	}
	losses(t);
	uint64_t before;
	if (pt_ext_seek(t, last / 2, &before) == 0)
		while (posix_trace_getnext_event(t, &ev, buf, sizeof buf, &len, &un) == 0 && !un)
			losses(t);
	posix_trace_rewind(t);
	if (posix_trace_close(t) != 0)
		abort();
	return 0;
}
