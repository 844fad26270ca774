/*
 * golden_app.c -- a deterministic instrumented program: one thread, no
 * fork, the same events with the same payloads in the same order on every
 * run.  tests/cli_golden.c records it and compares `posixtrace show` with
 * tests/golden/show.txt; tests/cli_tty.c interrupts it from a terminal.
 *
 *   posixtrace record -- build/examples/golden_app [--sleep SECONDS]
 *
 * It prints "golden_app pid N" first.  With --sleep it then prints
 * "golden_app: events recorded" once its events are recorded and sleeps
 * (at most SECONDS, or until a signal).
 *
 * Each event is recorded from a line of its own, in functions that are
 * never inlined and never end with the call (a call in tail position
 * would report the caller's caller), so that the symbolized locations are
 * the same with any compiler and optimization level.  Changing a line
 * here changes tests/golden/show.txt: regenerate it with
 * GOLDEN_UPDATE=1 build/tests/cli_golden.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static trace_event_id_t ev_start, ev_greeting, ev_packet, ev_step, ev_mark, ev_quote,
	ev_long, ev_blob;
static volatile int sink; /* touched after each call: no tail calls */
static volatile int nsteps = 3; /* arguments the compiler cannot propagate */
static volatile unsigned char first = 1, second = 2;

/* Before main(): `record` traces the program from its first event. */
__attribute__((constructor)) static void golden_init(void)
{
	static const char msg[] = "constructor";
	posix_trace_eventid_open("golden_start", &ev_start);
	posix_trace_event(ev_start, msg, sizeof msg - 1);
	sink++;
}

static NOINLINE void open_types(void)
{
	posix_trace_eventid_open("greeting", &ev_greeting);
	posix_trace_eventid_open("packet", &ev_packet);
	posix_trace_eventid_open("step", &ev_step);
	posix_trace_eventid_open("mark", &ev_mark);
	posix_trace_eventid_open("quote", &ev_quote);
	posix_trace_eventid_open("long_text", &ev_long);
	posix_trace_eventid_open("blob", &ev_blob);
	sink++;
}

/* text: a C string with its NUL, and one without */
static NOINLINE void greet(void)
{
	static const char hello[] = "hello, world";
	posix_trace_event(ev_greeting, hello, sizeof hello);
	sink++;
	posix_trace_event(ev_greeting, "bye", 3);
	sink++;
}

/* binary: 16 bytes, spelled out (no struct padding, no byte order) */
static NOINLINE void send_packet(unsigned char seq)
{
	unsigned char pkt[16] = { 0xde, 0xad, 0xbe, 0xef, seq, 0x00, 0x01, 0x02,
	                          0x7f, 0x80, 0xff, 0x00, 0x10, 0x20, 0x30, 0x40 };
	posix_trace_event(ev_packet, pkt, sizeof pkt);
	sink++;
}

/* a loop: the same call site, a 4-byte counter */
static NOINLINE void steps(int n)
{
	for (int i = 0; i < n; i++) {
		unsigned char b[4] = { (unsigned char)i, 0, 0, 0 };
		posix_trace_event(ev_step, b, sizeof b);
		sink++;
	}
}

int main(int argc, char **argv)
{
	static const char quoted[] = "tab\there \"quoted\" back\\slash\nnewline";
	static const char long_text[] =
		"The quick brown fox jumps over the lazy dog; then it does it again, twice.";
	static unsigned char blob[1500]; /* more than the default max-data-size, 1024 */
	int sleep_s = argc > 2 && !strcmp(argv[1], "--sleep") ? atoi(argv[2]) : 0;

	printf("golden_app pid %d\n", (int)getpid());
	fflush(stdout);
	open_types();
	greet();
	send_packet(first);
	steps(nsteps);
	posix_trace_event(ev_mark, NULL, 0);
	sink++;
	posix_trace_event(ev_quote, quoted, sizeof quoted - 1);
	sink++;
	posix_trace_event(ev_long, long_text, sizeof long_text - 1);
	sink++;
	for (size_t i = 0; i < sizeof blob; i++)
		blob[i] = (unsigned char)i;
	posix_trace_event(ev_blob, blob, sizeof blob);
	sink++;
	send_packet(second);
	posix_trace_event(ev_mark, NULL, 0);
	sink++;
	if (sleep_s > 0) {
		printf("golden_app: events recorded\n");
		fflush(stdout);
		sleep((unsigned)sleep_s);
	}
	return 0;
}
