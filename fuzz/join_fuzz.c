/*
 * join_fuzz.c -- libFuzzer target for POSIXTRACE_JOIN, the variable a
 * process reads at load to join the streams `posixtrace record` names
 * (src/producer/join.c): one "P.F.I.O.S.B" entry per stream, comma
 * separated.  The input is the variable's value.  No stream exists for
 * it to name (the fuzzer's own pid is refused, another's inode is not
 * guessed), so a value that is not empty joins nothing and fails, and
 * no slot of the control segment is taken.  Linked with the whole library
 * (as stream_fuzz is), its clock and thread ids its own.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../src/producer/producer.h"

int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts);
pthread_t ptfuzz_thread_self(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int ptfuzz_clock_gettime(clockid_t clk, struct timespec *ts) { return clock_gettime(clk, ts); }
pthread_t ptfuzz_thread_self(void) { return (pthread_t)0x7f0000001000ul; }

static unsigned slots_taken(void)
{
	unsigned n = 0;
	for (unsigned s = 0; s < PT_SLOTS; s++)
		n += atomic_load(&pt_ctl->slot[s].ticket) != 0;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char v[4097];
	size_t n = size < sizeof v - 1 ? size : sizeof v - 1;

	memcpy(v, data, n);
	v[n] = 0;
	unsigned before = slots_taken();
	int rc = pt_join(v);
	if ((v[0] ? rc != -1 : rc != 0) || slots_taken() != before)
		abort();
	return 0;
}
