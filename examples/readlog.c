/*
 * readlog.c -- a post-mortem reader: open a trace log written earlier
 * (by `posixtrace record`, by examples/flight, by any program that used
 * posix_trace_create_withlog) and print its events with their names, with
 * nothing but the POSIX calls:
 *
 *   build/examples/readlog LOG
 *
 * posix_trace_open() gives a trace id for the log; the event types' names
 * come from posix_trace_eventid_get_name(); posix_trace_getnext_event()
 * returns the events one by one, in the order they were recorded, and
 * says when there are no more.  Each line: the time in seconds since the
 * log's first event, the process and thread, the type, and the payload
 * (in quotes when it is text, else in hex).  At the end, the count per
 * type.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#define MAX_TYPES 1024

static void print_data(const unsigned char *d, size_t len)
{
	size_t n = len;

	while (n && d[n - 1] == 0) /* (a C string's NUL is still text) */
		n--;
	int text = n > 0;
	for (size_t i = 0; i < n && text; i++)
		text = isprint(d[i]) != 0;
	if (text) {
		printf(" \"%.*s\"", (int)n, (const char *)d);
		return;
	}
	if (len)
		putchar(' ');
	for (size_t i = 0; i < len; i++)
		printf("%02x", d[i]);
}

int main(int argc, char **argv)
{
	static unsigned long count[MAX_TYPES];
	struct posix_trace_event_info ev;
	unsigned char data[4096];
	char name[TRACE_EVENT_NAME_MAX + 1]; /* (the most characters, and the NUL) */
	trace_id_t trid;
	size_t len;
	int none = 0, rc, fd;
	long long first = -1;

	if (argc != 2) {
		fprintf(stderr, "usage: readlog LOG\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDONLY | O_CLOEXEC)) < 0) {
		perror(argv[1]);
		return 1;
	}
	if ((rc = posix_trace_open(fd, &trid)) != 0) {
		fprintf(stderr, "readlog: %s: %s\n", argv[1], strerror(rc));
		return 1;
	}
	for (;;) {
		rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &none);
		if (rc) {
			fprintf(stderr, "readlog: posix_trace_getnext_event: %s\n", strerror(rc));
			break;
		}
		if (none)
			break; /* the end of the log */
		long long ns = ev.posix_timestamp.tv_sec * 1000000000LL + ev.posix_timestamp.tv_nsec;
		if (first < 0)
			first = ns;
		if (posix_trace_eventid_get_name(trid, ev.posix_event_id, name) != 0)
			snprintf(name, sizeof name, "event-%u", (unsigned)ev.posix_event_id);
		printf("%lld.%09lld %d/%lx %s", (ns - first) / 1000000000, (ns - first) % 1000000000,
		       (int)ev.posix_pid, (unsigned long)ev.posix_thread_id, name);
		print_data(data, len);
		putchar('\n');
		if (ev.posix_event_id < MAX_TYPES)
			count[ev.posix_event_id]++;
	}
	printf("--\n");
	for (unsigned id = 0; id < MAX_TYPES; id++)
		if (count[id] && posix_trace_eventid_get_name(trid, id, name) == 0)
			printf("%lu %s\n", count[id], name);
	posix_trace_close(trid);
	close(fd);
	return rc != 0;
}
