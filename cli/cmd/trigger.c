/*
 * trigger.c -- `posixtrace trigger NAME PID|DIR`: raise the named trigger
 * NAME in a flight recorder (`record --flight ... --snapshot-on
 * trigger:NAME`, flight.c): one datagram, the name, to the recorder's
 * abstract socket "posixtrace/flight/PID", PID the recorder's, or read
 * from DIR/.posixtrace-recorder, DIR its -o directory.  The recorder
 * takes it only from its own user (or root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "cmd.h"

static const char trigger_help[] =
"usage: posixtrace trigger NAME PID|DIR\n"
"\n"
"Raise the trigger NAME in the flight recorder whose pid is PID, or that\n"
"writes its snapshots into DIR ('posixtrace record --flight SIZE\n"
"--snapshot-on trigger:NAME -o DIR -- PROGRAM'): it writes a snapshot as\n"
"if the program had called posixtrace_trigger(NAME).  NAME: 1 to 63 bytes.\n"
"The exit status is 0 once the recorder has the request, 1 if there is no\n"
"such recorder.\n"
"\n"
"  -h, --help               this help\n";

static int recorder_of(const char *arg, pid_t *pid)
{
	struct stat st;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		char path[4096], buf[32];
		snprintf(path, sizeof path, "%s/.posixtrace-recorder", arg);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			err_msg("%s: no flight recorder writes here (no %s: %s)", arg, path,
			        n < 0 ? strerror(errno) : "empty");
			return 1;
		}
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
		if (parse_pid(buf, pid)) {
			err_msg("%s: '%s' is not a process id", path, buf);
			return 1;
		}
		return 0;
	}
	if (parse_pid(arg, pid)) {
		err_msg("'%s' is neither a directory nor a process id", arg);
		return 1;
	}
	return 0;
}

/* The trigger's name from the command line: -1 to go on, else the exit
 * status (after the help or a message). */
static int trigger_options(int argc, char **argv, const char **name)
{
	if (want_help(argc, argv)) {
		fputs(trigger_help, stdout);
		return 0;
	}
	if (argc != 3)
		return usage_error(argc < 3 ? "give the trigger's NAME and the recorder's PID or DIR"
		                            : "unexpected argument '%s'", argc > 3 ? argv[3] : "");
	*name = argv[1];
	size_t n = strlen(*name);
	if (n == 0 || n > 63)
		return usage_error("'%s': a trigger's name is 1 to 63 bytes", *name);
	return -1;
}

/* The trigger name sent to the flight recorder pid: 0, or 1 after a message. */
static int trigger_send(const char *name, pid_t pid)
{
	size_t n = strlen(name);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "posixtrace/flight/%d", (int)pid);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		err_msg("socket: %s", strerror(errno));
		return 1;
	}
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	ssize_t w = sendto(s, name, n, 0, (struct sockaddr *)&a,
	                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len));
	int e = errno;
	close(s);
	if (w != (ssize_t)n) {
		err_msg("pid %d: no flight recorder listens for triggers there: %s%s", (int)pid,
		        strerror(e), e == ECONNREFUSED ? " (is it recording with --snapshot-on "
		                                         "trigger:NAME?)" : "");
		return 1;
	}
	return 0;
}

int cmd_trigger(int argc, char **argv)
{
	const char *name = NULL;
	pid_t pid;
	int c;

	if ((c = trigger_options(argc, argv, &name)) >= 0)
		return c;
	if (recorder_of(argv[2], &pid))
		return 1;
	return trigger_send(name, pid);
}
