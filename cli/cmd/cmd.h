/*
 * cmd.h -- the top layer of the posixtrace command (cli/cmd/): the
 * commands (main.c dispatches to cmd_*()), the target process they launch
 * or attach to (target.c) and, with attach --tree, its descendants
 * (proctree.c), live's and top's set-up (live.c) and record's closing
 * summary (summary.c).
 * Below it: write.h.
 */
#ifndef POSIXTRACE_CLI_CMD_H
#define POSIXTRACE_CLI_CMD_H

#include "../write/write.h"

/* ------------------------------------------------------------ commands */
int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_query(int argc, char **argv);  /* query_cmd.c, on cli/query/ */
/* The reading commands: each also gets --all and --t0, which main.c takes
 * for all of them alike (front; read.h, struct tlog_front). */
int cmd_show(int argc, char **argv, const struct tlog_front *front);
int cmd_info(int argc, char **argv, const struct tlog_front *front);
int cmd_stats(int argc, char **argv, const struct tlog_front *front);
int cmd_export(int argc, char **argv, const struct tlog_front *front);
int cmd_live(int argc, char **argv, const struct tlog_front *front);
int cmd_top(int argc, char **argv, const struct tlog_front *front);
int cmd_view(int argc, char **argv, const struct tlog_front *front); /* view.c */

/* ------------------------------------------------------------ view_peer.c */
/* The user owning the client end of a loopback TCP connection to server
 * (both IPv4): 0 with *uid, or -1 (not found: the client is gone). */
struct sockaddr;
int view_peer_uid(const struct sockaddr *client, socklen_t len, const struct sockaddr *server,
                  uid_t *uid);

/* ------------------------------------------------------------ live.c */
/* The target of live and top: a PID, or the program after "--" (prog:
 * its argv, else NULL).  live_args() checks them (0, or EXIT_USAGE after
 * a message; *pid from pid_arg); live_start() starts the program paused
 * (or checks the pid), makes and starts the stream, lets the program
 * go: 0, or the exit status after a message. */
struct target;
int live_args(const char *pid_arg, const char *extra, char **prog, const char *verb, pid_t *pid);
int live_start(struct target *t, char **prog, pid_t *pid, const char *name, int policy,
               size_t size, int inherit, const char *exclude, const char *what,
               trace_id_t *trid);
/* ------------------------------------------------------------ target.c */
struct target {
	pid_t pid;
	int child;        /* we launched it (and can wait for it) */
	int go_fd;        /* write end: releases the paused child */
	int exec_fd;      /* read end: EOF when exec succeeded, else errno */
	int pidfd;
	int exited, status;
	char join[256];   /* launched: the streams its tree joins (POSIXTRACE_JOIN), or "" */
};
int target_launch(struct target *t, char **argv);
int target_release(struct target *t);         /* 0, or the exec errno */
int target_attach(struct target *t, pid_t pid);
int target_check_library(pid_t pid, const char *what);  /* 1: it has none (said) */
void target_check_privileged(char **argv, const char *what); /* warns if setuid... */
int target_poll(struct target *t);            /* 1 once the target has ended */
void target_forward(struct target *t, int sig);
int target_exit_code(const struct target *t);
/* The exit status for a program that could not be executed (errno e), as
 * shells give it: 127 not found, 126 found but not executable. */
int exec_status(int e);
void signals_block(void);
void signals_unblock(void); /* in the main thread, once the other threads exist */
int signals_take(uint64_t timeout_ns, int *from_tty); /* a signal, or 0 (waits up to timeout_ns) */

/* ------------------------------------------------------------ proctree.c */
/* A process's line of /proc/PID/stat: 0, or -1 when it cannot be
 * read (also target.c's look at a process that is not its child) */
struct pstat {
	pid_t pid, ppid;
	char state; /* R, S, D, Z (a zombie), X (dead)... */
	unsigned long long start;
	char comm[17];
};
int read_stat(pid_t pid, struct pstat *ps);
/* attach --tree: the running descendants of root, each asked to join the
 * stream trid when it uses the library (ptree_poll, once per look). */
struct ptree;
struct ptree *ptree_new(pid_t root); /* NULL: no such process, or no memory */
void ptree_poll(struct ptree *t, trace_id_t trid);
/* frees t; how many were asked to join, were in already, could not be asked */
void ptree_free(struct ptree *t, unsigned *joined, unsigned *inherited, unsigned *refused);

/* ------------------------------------------------------------ logspans.c */
/* The spans of a (spans_make), the log at path read into l as f says
 * (its totals alone if totals: tlog_totals_as, else tlog_load_as), and the
 * spans checked against it: 0, or the exit status after a message,
 * nothing held. */
int spans_load(const struct span_args *a, struct spans **sp, struct tlog *l, const char *path,
               int totals, const struct tlog_front *f);

/* ------------------------------------------------------------ lineedit.c */
/* A line typed at the terminal (stdin and stderr both one), with editing
 * and this process's history.  ledit_read: 1 and *line (malloc'd, no
 * newline), 0 at the end of input (Ctrl-D), 2 when the line was dropped
 * (Ctrl-C), -1 on an error (the terminal as it was in every case). */
struct ledit { char **h; size_t n, cap; };
int ledit_usable(void);
int ledit_read(struct ledit *le, const char *prompt, char **line);
void ledit_add(struct ledit *le, const char *s);   /* (not an empty line, nor the last again) */
void ledit_free(struct ledit *le);
/* ------------------------------------------------------------ flight.c */
/* record/attach --flight SIZE --snapshot-on TRIGGER ... (flight.c's
 * comment).  flight_option(): one of its options by long name (0, or
 * EXIT_USAGE after a message); flight_check() once all are parsed.
 * flight_start() once the stream runs (NULL after a message), then
 * flight_step() every few ms; flight_end(): (final: the last window, the
 * summary) 1 if a snapshot could not be written. */
#define FLIGHT_TRIGGERS 16
struct flight_opts {
	size_t size;                    /* 0: no --flight */
	const char *on[FLIGHT_TRIGGERS];
	int non, before_set;
	uint64_t before_ns, after_ns, every_ns;
	unsigned max;
};
struct flight;
int flight_duration(const char *s, uint64_t *ns);
int flight_option(struct flight_opts *f, const char *opt, const char *arg);
int flight_check(struct flight_opts *f);
int flight_prepare(const char *dir);
struct flight *flight_start(const struct flight_opts *o, trace_id_t trid, const char *dir,
                            const char *name);
void flight_step(struct flight *fl);
uint64_t flight_wait_ns(struct flight *fl); /* until a snapshot is due; UINT64_MAX: none */
int flight_end(struct flight *fl, int final);
unsigned flight_taken(struct flight *fl);
extern const char flight_help[];
int cmd_trigger(int argc, char **argv); /* trigger.c */

/* ------------------------------------------------------------ summary.c */
/* 1 when the recording lost events no policy asked for (tlog_lost_unasked:
 * a full disk, a stalled stream), or cannot be read back: record and
 * attach then exit EXIT_LOST rather than 0 */
int print_summary(FILE *f, const char *log_path, pid_t root);
#define EXIT_LOST 3

/* ------------------------------------------------------------ parts.c */
/* record/attach --rotate: -o names a directory of parts NAME-N.ptlog */
int rotate_parse(const char *s, uint64_t *size, uint64_t *period_ns, const char **why);
void parts_name(char *buf, size_t cap, const char *prog, pid_t pid);
int parts_prepare(const char *dir, const char *name, int force, int *dirfd, int *made);
int parts_create(int dirfd, const char *dir, const char *name, unsigned n);
void parts_abandon(int dirfd, const char *dir, const char *name, int made);
int parts_summary(FILE *f, const char *dir, const char *name, pid_t root,
                  const struct pt_ext_rotate_stats *rs);

#endif
