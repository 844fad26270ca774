/*
 * life_keys.c -- a program that has taken every pthread key before the
 * library's constructor runs (as one that dlopen()s the library late
 * can): the library makes no key of its own then, and must never set a
 * value in a key it did not make (its key variable stays 0, which is the
 * program's first key: the library's first event in each thread set the
 * program's key 0 to 1, and the thread's exit did not unregister it).
 *
 * The keys are taken in .preinit_array, which runs before every
 * constructor of the program and of the (static) library.  Checked: the
 * program holds (nearly) PTHREAD_KEYS_MAX keys and can make no other; in T
 * threads, each key set to its own value, then 1 000 events recorded
 * into a stream of the process, every key still holds its value; the
 * threads end; the main thread reads back all T * 1 000 events, with
 * their sequence numbers in order per thread, and the stream shuts down;
 * a second stream works the same after the first one is gone.
 */
#include <limits.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define T 4
#define N 1000

static pthread_key_t keys[PTHREAD_KEYS_MAX];
static int nkeys;

static void take_every_key(void)
{
	while (nkeys < PTHREAD_KEYS_MAX && pthread_key_create(&keys[nkeys], NULL) == 0)
		nkeys++;
}
__attribute__((section(".preinit_array"), used)) static void (*const take_keys)(void) =
	take_every_key;

static trace_event_id_t ev;
static int thread_bad[T];

static void *thread_main(void *arg)
{
	int me = (int)(intptr_t)arg, bad = 0;
	for (int i = 0; i < nkeys; i++)
		pthread_setspecific(keys[i], (void *)(intptr_t)(0x10000 + i));
	for (uint32_t s = 0; s < N; s++) {
		uint32_t pl[2] = { (uint32_t)me, s };
		posix_trace_event(ev, pl, sizeof pl);
	}
	for (int i = 0; i < nkeys; i++)
		bad += pthread_getspecific(keys[i]) != (void *)(intptr_t)(0x10000 + i);
	thread_bad[me] = bad;
	return NULL;
}

static void one_stream(void)
{
	trace_attr_t a;
	trace_id_t t;
	pthread_t th[T];

	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamsize(&a, 4u << 20);
	REQUIRE(posix_trace_create(0, &a, &t) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_eventid_open("keys", &ev) == 0);
	REQUIRE(posix_trace_start(t) == 0);
	for (int i = 0; i < T; i++)
		REQUIRE(pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(thread_bad[i], 0);
	}
	struct posix_trace_event_info e;
	uint32_t pl[2], next[T] = { 0 };
	size_t len;
	int un, got = 0, order = 1;
	while (posix_trace_trygetnext_event(t, &e, pl, sizeof pl, &len, &un) == 0 && !un) {
		if (e.posix_event_id != ev)
			continue;
		if (len != sizeof pl || pl[0] >= T) {
			order = 0;
			continue;
		}
		order &= pl[1] == next[pl[0]]++;
		got++;
	}
	CHECK_EQ(got, T * N);
	CHECK(order);
	CHECK_EQ(posix_trace_shutdown(t), 0);
}

int main(void)
{
	T_BEGIN(60);
	pthread_key_t k;
	/* (a sanitizer's runtime takes a key or two before the program) */
	CHECK(nkeys > PTHREAD_KEYS_MAX - 8);
	CHECK(pthread_key_create(&k, NULL) != 0);
	one_stream();
	one_stream();
	T_END();
}
