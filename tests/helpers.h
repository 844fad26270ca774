/*
 * helpers.h -- what many tests need, compiled once (tests/helpers.c) and
 * linked into every test program by the Makefile's test rule.
 *
 * A helper here never counts a check (t.h's counters are each test's
 * own): it returns what happened, or stops the test with exit(1) and a
 * message where going on would make no sense (as REQUIRE does).
 *
 *   t_read_full(fd, p, n)     n bytes, retrying short reads and EINTR;
 *                             0, or -1 at end of file or on an error
 *   t_write_full(fd, p, n)    n bytes in one write(2), else the test stops
 *   t_now_s()                 CLOCK_MONOTONIC in seconds
 *   PT_SYS_IDS                event ids below it are system events
 */
#ifndef POSIXTRACE_TEST_HELPERS_H
#define POSIXTRACE_TEST_HELPERS_H

#include <stddef.h>
#include <sys/types.h>

/* The library's name and value (src/shm/layout.h, which helpers.c also
 * includes: a value there other than this one, to the letter, stops the
 * build). */
#define PT_SYS_IDS        16u                    /* ids below are system events */

int t_read_full(int fd, void *p, size_t n);
void t_write_full(int fd, const void *p, size_t n);
double t_now_s(void);

#endif
