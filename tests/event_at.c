/*
 * event_at.c -- posixtrace_event_at(): an event recorded through a helper
 * is attributed to the helper's caller.  This test, run as a program
 * (--program), records through a helper, emit(), called from two
 * functions, caller_a() and caller_b(): emit() records "wrapped" with
 * posixtrace_event_at(..., __builtin_return_address(0)) and "plain" with
 * posix_trace_event(), both with that return address as their payload
 * (the witness).  Recorded by `posixtrace record` and read back with
 * posix_trace_open(): every "wrapped" event's posix_prog_address is its
 * payload, exactly (its caller's site); every "plain" one's is not (it is
 * emit()'s own); "direct", recorded with a NULL site from main(), has
 * main's own site, as posix_trace_event() would.  `show` names the two
 * callers (built without libdw, the command names code by file and
 * offset only: then each event is shown at "event_at+0xOFF", OFF its
 * site less one load bias, page-aligned, the same for every event).
 * Then the exported symbol's version (POSIXTRACE_0.6).
 */
#include <dlfcn.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define N 50

static trace_event_id_t ev_wrapped, ev_plain, ev_direct;

__attribute__((noinline)) static void emit(int i)
{
	void *ra = __builtin_return_address(0);
	(void)i;
	posixtrace_event_at(ev_wrapped, &ra, sizeof ra, ra);
	posix_trace_event(ev_plain, &ra, sizeof ra);
	__asm__ volatile("" ::: "memory"); /* (no tail call: emit stays a frame) */
}

__attribute__((noinline)) static void caller_a(int i)
{
	emit(i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void caller_b(int i)
{
	volatile int k = i + 1; /* (not caller_a's code: never folded into it) */
	emit(k - 1);
	__asm__ volatile("" ::: "memory");
}

/* Built without libdw: how many of show's lines (out) give the site of
 * their event (site[i], in the same order) as "@ event_at+0xOFF", the
 * site less the program's load bias: one for all, page-aligned. */
static int at_offsets(const char *out, const uintptr_t *site, int n)
{
	char line[1024];
	int i = 0, ok = 0;
	uintptr_t bias = 0;
	for (const char *p = out ? out : ""; cli_next_line(&p, line, sizeof line) == 0; i++) {
		const char *at = strstr(line, "@ event_at+0x");
		unsigned long long off;
		if (i >= n || !at || sscanf(at, "@ event_at+0x%llx", &off) != 1)
			continue;
		if (i == 0)
			bias = site[0] - (uintptr_t)off;
		ok += bias % 4096 == 0 && site[i] == bias + (uintptr_t)off;
	}
	return i == n ? ok : -1;
}

static int program(void)
{
	posix_trace_eventid_open("wrapped", &ev_wrapped);
	posix_trace_eventid_open("plain", &ev_plain);
	posix_trace_eventid_open("direct", &ev_direct);
	for (int i = 0; i < N; i++) {
		caller_a(i);
		caller_b(i);
	}
	posixtrace_event_at(ev_direct, "d", 1, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	char self[4096], *out = NULL;
	struct cli_ev *ev;

	if (argc == 2 && !strcmp(argv[1], "--program"))
		return program();
	T_BEGIN(60);
	cli_setup();
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	const char *log = cli_path("at.ptlog");
	REQUIRE(cli_run(CLI("record", "-o", (char *)log, "--", self, "--program"), NULL, NULL) == 0);
	int n = cli_read_log(log, &ev);
	int wrapped = 0, wrapped_ok = 0, plain = 0, plain_other = 0, direct = 0;
	void *sites[2] = { NULL, NULL };
	uintptr_t w_at[2 * N] = { 0 }, p_at[2 * N] = { 0 }; /* each one's site, in order */
	for (int i = 0; i < n; i++) {
		void *ra = NULL;
		if (ev[i].len == sizeof ra)
			memcpy(&ra, ev[i].data, sizeof ra);
		if (!strcmp(ev[i].name, "wrapped")) {
			if (wrapped < 2 * N)
				w_at[wrapped] = (uintptr_t)ev[i].info.posix_prog_address;
			wrapped++;
			wrapped_ok += ev[i].info.posix_prog_address == ra && ra;
			if (!sites[0] || sites[0] == ra)
				sites[0] = ra;
			else
				sites[1] = ra;
		} else if (!strcmp(ev[i].name, "plain")) {
			if (plain < 2 * N)
				p_at[plain] = (uintptr_t)ev[i].info.posix_prog_address;
			plain++;
			plain_other += ev[i].info.posix_prog_address != ra && ev[i].info.posix_prog_address;
		} else if (!strcmp(ev[i].name, "direct")) {
			direct += ev[i].info.posix_prog_address != NULL;
		}
	}
	CHECK_EQ(wrapped, 2 * N);
	CHECK_EQ(wrapped_ok, 2 * N);
	CHECK(sites[0] && sites[1] && sites[0] != sites[1]); /* two callers, two sites */
	CHECK_EQ(plain, 2 * N);
	CHECK_EQ(plain_other, 2 * N);
	CHECK_EQ(direct, 1);
	free(ev);
	/* show names the callers, not the helper (file+offset only: each at
	 * its own site, the callers' for wrapped, the helper's for plain) */
	int dwarf = cli_has_libdw();
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "wrapped"), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), 2 * N);
	/* (the compiler may suffix the names: caller_a.isra.0) */
	if (dwarf) {
		CHECK(cli_contains(out, "@ caller_a") && cli_contains(out, "@ caller_b"));
		CHECK(!cli_contains(out, "@ emit"));
	} else {
		CHECK_EQ(at_offsets(out, w_at, 2 * N), 2 * N);
	}
	free(out);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "plain"), &out, NULL), 0);
	if (dwarf)
		CHECK(cli_contains(out, "@ emit") && !cli_contains(out, "@ caller_"));
	else
		CHECK_EQ(at_offsets(out, p_at, 2 * N), 2 * N);
	free(out);
	/* the shared library exports it, at its version */
	void *h = dlopen(PT_BUILD_DIR "/libposixtrace.so", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		CHECK(dlvsym(h, "posixtrace_event_at", "POSIXTRACE_0.6") != NULL);
		CHECK(dlvsym(h, "posixtrace_event_at", "POSIXTRACE_0.5") == NULL);
		dlclose(h);
	}
	T_END();
}
