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
 *   t_proc_kb(file, key)      a "key: N kB" line of a /proc file: N, or -1
 *   t_settled_kb(pid, key)    that line of /proc/PID/status once it holds
 *                             still (the same 3 times, 50 ms apart; 10 s at most)
 *   t_fork_piped(&p)          a child joined by two pipes: 0 in the child,
 *                             its pid in the parent (see below)
 *   t_create_ok(pid, attr)    posix_trace_create() for pid that must work: the
 *                             stream, else the test stops saying why
 *   t_own_started(inherit, size) a started UNTIL_FULL stream of this process
 *   t_next(trid, &ev, p, cap, &len)
 *                             the next event without waiting: 1, or 0 when none
 *   t_drain(trid, buf, cap, max, fn, arg), t_drain_recs(trid, r, max)
 *                             every event there is now, each to a function
 *                             of the test's, or into an array of struct t_rec
 *   t_wit_rec(), t_wit_drain() a witness payload that checks itself, and a
 *                             per-thread tally of a stream's such events
 *   t_listen_loopback(&port)  a TCP socket listening on a free loopback port
 *   t_check32(a, b, c)        a 32-bit check of three numbers (a pure function,
 *                             async-signal-safe)
 *   t_check64(pid, thr, seq)  a 64-bit check of a process, thread and sequence
 *   t_nap_ms(ms)              sleeps ms milliseconds (async-signal-safe)
 *   t_log_create(path, w, max), t_log_entry(w, kind, ...), t_log_close(w, fd)
 *                             a log a test writes itself (src/log/log.h's
 *                             writer): made, an entry of its map, finished
 *   t_cost_setup(self, cap)   a test of instruction budgets (valgrind): skips
 *                             unless it can run here; this program's path
 *   t_callgrind_spawn(out, args), t_callgrind_totals(label, out, n, names, v)
 *                             a program run under callgrind, and its totals
 *   t_held_init(hold), t_held_page(v, n)
 *                             an event held in the copy of its payload (below)
 *   UNDER_TSAN                1 in a ThreadSanitizer build (gcc or clang), else 0
 *   PT_SYS_IDS                event ids below it are system events
 */
#ifndef POSIXTRACE_TEST_HELPERS_H
#define POSIXTRACE_TEST_HELPERS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <trace.h>

/* The library's name and value (src/shm/layout.h, which helpers.c also
 * includes: a value there other than this one, to the letter, stops the
 * build). */
#define PT_SYS_IDS        16u                    /* ids below are system events */

/* ThreadSanitizer's runtime has a thread of its own that the C library did
 * not start (it counts as one of the program's: docs/implementation-
 * defined.md), and it refuses a thread started in a child forked from a
 * multi-threaded process (one whose stream has a flusher thread, say) */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* AddressSanitizer's allocator, in GCC 12's libasan, is not locked across
 * fork(): a child forked while another thread of the parent (a flusher)
 * held its lock can hang in its first pthread_create() or malloc() (seen
 * in about 1 run in 10 of tests/life_edges; glibc's own malloc is forked
 * safely).  The same holds for a child made by clone() without the C
 * library's fork handlers: its exit() runs LeakSanitizer's check, which
 * takes the allocator's lock (seen hanging in about 1 run in 12).  Tests
 * that start a thread or exit() in such a child skip that case. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

int t_read_full(int fd, void *p, size_t n);
void t_write_full(int fd, const void *p, size_t n);
double t_now_s(void);
long t_proc_kb(const char *file, const char *key);
long t_settled_kb(pid_t pid, const char *key);
/* The address space of the library's own mappings in process pid (its
 * memfds, /memfd:posixtrace-...: the control memfd, views of streams),
 * in kB; -1 if its maps cannot be read. */
long t_lib_maps_kb(pid_t pid);
uint32_t t_check32(uint32_t src, uint64_t seq, uint64_t noise);
uint64_t t_check64(uint32_t pid, uint32_t thr, uint64_t seq);

/* A child joined to this process by two pipes, each side left with its own
 * ends only (the others closed): commands go from the parent to the child
 * on p->cmd, replies come back on p->rep.  Returns 0 in the child (p->cmd
 * is then the end it reads, p->rep the end it writes) and the child's pid
 * in the parent (p->cmd the end it writes, p->rep the end it reads); stops
 * the test if pipe(2) or fork(2) fails. */
struct t_pipes { int cmd, rep; };
pid_t t_fork_piped(struct t_pipes *p);

/* A TCP socket listening (backlog 4) on a free port of 127.0.0.1, its
 * port in *port; stops the test if it cannot. */
int t_listen_loopback(unsigned *port);

trace_id_t t_create_ok(pid_t pid, const trace_attr_t *attr);

/* A stream of this process (UNTIL_FULL, size bytes, inherited or not as
 * inherit says), created and started; the test stops on an error. */
trace_id_t t_own_started(int inherit, size_t size);

/* The id of the event type named `name` in trid (a stream or a log), by
 * walking its list of types from where the list stands: 1 and *id if
 * there is one, else 0. */
int t_type_named(trace_id_t trid, const char *name, trace_event_id_t *id);

/* An entry of the map (kind, pid, time, load bias, range lo and hi,
 * flags, path) written into a log by its writer (src/log/log.h,
 * pt_logw_obj): its return code. */
struct pt_logw;
int t_log_entry(struct pt_logw *w, unsigned kind, int32_t pid, uint64_t ts, uint64_t base,
                uint64_t lo, uint64_t hi, unsigned flags, const char *path);
/* A new APPEND log at path, its writer's max data size max_data, into w:
 * its fd (the test stops if it cannot be made); t_log_close(): finished
 * (the writer's return code), freed and closed. */
int t_log_create(const char *path, struct pt_logw *w, unsigned max_data);
int t_log_close(struct pt_logw *w, int fd);

/* posix_trace_trygetnext_event() that must work: 1 with the next event
 * (its payload in p, cap bytes at most, its length in *len), 0 when there
 * is none; stops the test on an error. */
int t_next(trace_id_t trid, struct posix_trace_event_info *ev, void *p, size_t cap, size_t *len);

/* Every event trid has now (t_next()), each passed to fn with arg, its
 * number (0, 1, ...), its payload in buf (cap bytes at most) and its
 * length; how many there were.  More than max stops the test. */
typedef void t_drain_fn(void *arg, int i, const struct posix_trace_event_info *ev,
                        const void *data, size_t len);
int t_drain(trace_id_t trid, void *buf, size_t cap, int max, t_drain_fn *fn, void *arg);

/* The same into r[0..max-1]: each event's id, pid, thread, payload length
 * and payload (T_REC_DATA bytes at most). */
#define T_REC_DATA 512
struct t_rec {
	trace_event_id_t id;
	pid_t pid;
	pthread_t thr;
	size_t len;
	unsigned char data[T_REC_DATA];
};
int t_drain_recs(trace_id_t trid, struct t_rec *r, int max);

/* A user event that checks itself: the recording process, thread number
 * (0..3) and sequence, and a sum of the three. */
struct t_wit { int pid, thr; long long seq; unsigned sum; };
unsigned t_wit_sum(int pid, int thr, long long seq);
void t_wit_rec(trace_event_id_t id, int thr, long long seq);

/* Per-thread tally of the witness events of one pid: count, and how many
 * broke the sequence starting at next[thr] or were malformed; system
 * events and other pids' events are only counted. */
struct t_tally { int n[4], bad, sys, other; long long next[4]; };
void t_wit_drain(trace_id_t trid, pid_t pid, struct t_tally *t);

/* A test of the instruction budgets of the recording's paths, counted by
 * valgrind: skips (exit 77, saying why) unless this is the plain gcc -O2
 * build on x86-64 (the budgets are its) and valgrind is installed; then
 * this program's path into self (cap bytes), to run it under valgrind. */
void t_cost_setup(char *self, size_t cap);

/* valgrind --tool=callgrind --callgrind-out-file=out, then args (a NULL
 * ended list: callgrind's options, the program and its arguments), its
 * standard output and error to /dev/null: the child's pid (the caller
 * waits for it).  Then t_callgrind_totals(): the totals of the n events
 * named (Ir, Dr, ...) in that output, in v; the file is removed (kept
 * with PT_KEEP set in the environment).  0, or -1 with why printed after
 * label. */
pid_t t_callgrind_spawn(const char *out, const char *const *args);
int t_callgrind_totals(const char *label, const char *out, int n, const char *const *names,
                       double *v);

/* Sleeps ms milliseconds, whatever signals come (async-signal-safe). */
void t_nap_ms(long ms);

/* An event held while its payload is copied into the stream: t_held_init()
 * maps a page of its own and takes SIGSEGV (0, or -1 if it cannot);
 * t_held_page(v, n) copies n bytes of v into the page and takes every
 * access to it away: the page (NULL if mprotect fails), to record as an
 * event's payload.  The copy then faults, the handler calls hold() (which
 * may make only async-signal-safe calls, and may never return), gives the
 * page its access back and the copy goes on.  A fault anywhere else is a
 * real crash (SIGSEGV's default action). */
int t_held_init(void (*hold)(void));
void *t_held_page(const void *v, size_t n);

#endif
