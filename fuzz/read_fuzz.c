/*
 * read_fuzz.c -- libFuzzer target for the reading commands over a log
 * (cli/cmd, cli/read, cli/enrich, cli/write: what `posixtrace info`,
 * `stats`, `show` and `export` make of a log): the input is a log file, as
 * hostile as a log can be, and each command runs over it as a user would
 * run it: info; stats --json; show --processes; export to chrome, perfetto,
 * html and ctf.  Where log_fuzz and query_fuzz stop at the tables, this
 * reaches what the commands build on them: process identities (births.c),
 * the summary or the events' totals, spans, the exports' pid keys and
 * tracks.  Seeded with the log fuzzers' corpus (fuzz/corpus).
 *
 * Checked: no crash, hang, leak or undefined behaviour, and every command
 * ends with status 0 (read) or 1 (an error said).  What the commands print
 * goes to /dev/null; the sanitizers' reports and libFuzzer's own lines to
 * the standard error the target was started with.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_file.h"
#include "../cli/cmd/cmd.h"

void __sanitizer_set_report_fd(void *fd);

static char out_dir[64] = "/tmp/read_fuzz.XXXXXX";
static int null_fd = -1, err_fd = -1;

/* (at the end of the run: the exports' files and the directory) */
static void clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "read_fuzz: %s left\n", out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	if (!mkdtemp(out_dir)) {
		perror("read_fuzz: mkdtemp");
		abort();
	}
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	err_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
	if (null_fd < 0 || err_fd < 0) {
		perror("read_fuzz: /dev/null");
		abort();
	}
	__sanitizer_set_report_fd((void *)(intptr_t)err_fd);
	atexit(clean);
	/* (no terminal: the commands' widths and colours as in a pipe) */
	setenv("COLUMNS", "100", 1);
	setenv("NO_COLOR", "1", 1);
	unsetenv("DEBUGINFOD_URLS"); /* (no download for a build-id the log names) */
	return 0;
}

/* One command over the log: its argv as `posixtrace` hands it over (the
 * command's name first, --all and --t0 taken out) */
static void run(int (*cmd)(int, char **, const struct tlog_front *), int all, char **argv)
{
	struct tlog_front front = { .all = all };
	int argc = 0;

	while (argv[argc])
		argc++;
	optind = 0; /* (glibc: getopt starts again) */
	fflush(stdout);
	fflush(stderr);
	dup2(null_fd, 1);
	dup2(null_fd, 2);
	int rc = cmd(argc, argv, &front);
	fflush(stdout);
	fflush(stderr);
	dup2(err_fd, 2);
	if (rc != 0 && rc != 1) {
		fprintf(stderr, "read_fuzz: %s ended with status %d\n", argv[0], rc);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char log[64], chrome[96], pf[96], html[96], ctf[96];

	fuzz_file("read_fuzz", data, size, log, sizeof log);
	snprintf(chrome, sizeof chrome, "%s/t.json", out_dir);
	snprintf(pf, sizeof pf, "%s/t.pftrace", out_dir);
	snprintf(html, sizeof html, "%s/t.html", out_dir);
	snprintf(ctf, sizeof ctf, "%s/t.ctf", out_dir);
	/* (the first byte picks --all: the recorder's own process kept) */
	int all = size > 0 && (data[0] & 1);
	run(cmd_info, all, (char *[]){ "info", log, NULL });
	run(cmd_stats, all, (char *[]){ "stats", "--json", log, NULL });
	run(cmd_stats, all, (char *[]){ "stats", "--ascii", "--width", "100", log, NULL });
	run(cmd_show, all, (char *[]){ "show", "--processes", log, NULL });
	run(cmd_export, all, (char *[]){ "export", "-f", "chrome", "--force", "-o", chrome, log, NULL });
	run(cmd_export, all, (char *[]){ "export", "-f", "perfetto", "--force", "-o", pf, log, NULL });
	run(cmd_export, all, (char *[]){ "export", "-f", "html", "--force", "-o", html, log, NULL });
	run(cmd_export, all, (char *[]){ "export", "-f", "ctf", "--force", "-o", ctf, log, NULL });
	return 0;
}
