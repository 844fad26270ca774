/*
 * export_chrome.c -- the log as Chrome Trace Event Format JSON (loads in
 * chrome://tracing and ui.perfetto.dev).
 *
 * Every trace event is an instant event, thread scoped: {"ph":"i","s":"t"}
 * with "ts" in microseconds since the first event (nanosecond digits kept),
 * "pid", "tid" (the thread's index in its process), "cat" ("user" or
 * "posix_trace" for system events) and "args": the data as "text" or
 * "hex", its length, the address and its symbol.  Metadata events name
 * each process (its program) and thread.
 */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The payload, whole, as "text" or "hex" JSON members. */
static void put_data(FILE *f, const struct tlog *l, const struct tev *e)
{
	const unsigned char *d = l->data + e->data;
	char desc[512];
	int text = 0;

	fmt_data(desc, 2, d, e->len, e->len, &text);
	if (e->id < 16 && e->id != POSIX_TRACE_UNNAMED_USEREVENT) {
		fmt_event_data(desc, sizeof desc, l, e);
		char *j = malloc(2 * sizeof desc + 8);
		if (j) {
			json_str(j, 2 * sizeof desc + 8, desc);
			fprintf(f, ",\"text\":%s", j);
			free(j);
		}
		return;
	}
	if (text) {
		size_t n = e->len;
		while (n && !d[n - 1])
			n--;
		char *s = malloc(n + 1), *j = malloc(6 * n + 8);
		if (s && j) {
			memcpy(s, d, n);
			s[n] = 0;
			json_str(j, 6 * n + 8, s);
			fprintf(f, ",\"text\":%s", j);
		}
		free(s);
		free(j);
	}
	if (e->len) { /* always: text or not, the bytes are the payload */
		fputs(",\"hex\":\"", f);
		for (uint32_t i = 0; i < e->len; i++)
			fprintf(f, "%02x", d[i]);
		fputc('"', f);
	}
}

static void label(char *out, size_t cap, struct symz *z, int32_t pid)
{
	const char *exe = z && pid ? symz_exe(z, pid) : NULL;
	const char *b = exe ? strrchr(exe, '/') : NULL;

	if (pid == 0)
		snprintf(out, cap, "reader (synthesized events)");
	else if (exe)
		snprintf(out, cap, "%s %d", b ? b + 1 : exe, (int)pid);
	else
		snprintf(out, cap, "pid %d", (int)pid);
}

int export_chrome(const struct tlog *l, struct symz *z, FILE *f)
{
	char name[TRACE_NAME_MAX] = "", buf[600], tmp[32], j[300];
	struct progress p;
	uint64_t t0 = l->nev ? l->ev[0].ts : 0;

	for (size_t i = 0; i < l->nev; i++)
		t0 = l->ev[i].ts < t0 ? l->ev[i].ts : t0;
	posix_trace_attr_getname(&l->attr, name);
	json_str(j, sizeof j, name);
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace_name\":%s,", j);
	json_str(j, sizeof j, l->path);
	fprintf(f, "\"log\":%s,\"events\":%zu,\"lost\":%llu,\"lost_exact\":%s,\"gaps\":%llu},\n"
	           "\"traceEvents\":[\n", j, l->nev, (unsigned long long)tlog_lost_total(l),
	        l->lost_final ? "true" : "false", (unsigned long long)l->overflows);
	int first = 1;
	for (size_t i = 0; i < l->npr; i++) {
		label(buf, sizeof buf, z, l->pr[i].pid);
		json_str(j, sizeof j, buf);
		fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		           "\"args\":{\"name\":%s}}",
		        first ? "" : ",\n", (int)l->pr[i].pid, j);
		fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		           "\"args\":{\"sort_index\":%zu}}", (int)l->pr[i].pid, i);
		first = 0;
	}
	for (size_t i = 0; i < l->nth; i++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
		           "\"args\":{\"name\":\"thread %u (0x%llx)\"}}",
		        (int)l->th[i].pid, l->th[i].idx, l->th[i].idx,
		        (unsigned long long)l->th[i].tid);
	progress_begin(&p, "export chrome", l->nev);
	for (size_t i = 0; i < l->nev; i++) {
		const struct tev *e = &l->ev[i];
		const struct tthread *th = &l->th[e->thread];
		uint64_t rel = e->ts - t0;
		json_str(j, sizeof j, tlog_name(l, e->id, tmp, sizeof tmp));
		fprintf(f, ",\n{\"name\":%s,\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%llu.%03llu,"
		           "\"pid\":%d,\"tid\":%u,\"args\":{\"id\":%u,\"len\":%u",
		        j, e->id < 16 && e->id != POSIX_TRACE_UNNAMED_USEREVENT ? "posix_trace" : "user",
		        (unsigned long long)(rel / 1000), (unsigned long long)(rel % 1000),
		        (int)th->pid, th->idx, e->id, e->len);
		put_data(f, l, e);
		if (e->trunc == POSIX_TRACE_TRUNCATED_RECORD)
			fputs(",\"truncated\":true", f);
		if (e->addr) {
			fprintf(f, ",\"addr\":\"0x%llx\"", (unsigned long long)e->addr);
			const char *s = z ? symz_lookup(z, th->pid, e->ts, e->addr) : "";
			if (s[0] && strncmp(s, "0x", 2)) {
				json_str(buf, sizeof buf, s);
				fprintf(f, ",\"symbol\":%s", buf);
			}
		}
		fputs("}}", f);
		progress_update(&p, i);
	}
	fputs("\n]}\n", f);
	progress_end(&p);
	return 0;
}
