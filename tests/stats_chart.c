/*
 * stats_chart.c -- `posixtrace stats`' activity chart puts each event in
 * its column exactly: column c of C holds the events at offsets x from
 * the trace's first event with x * C / (span + 1) == c.  stats finds the
 * column from the last event's (a 128-bit division only when it moves);
 * this checks it at every column's edges.  A log written by hand holds,
 * for each column, one event at its first nanosecond and one at its last
 * (two a column, the first and last of the trace among them), for spans
 * whose columns are a whole number of nanoseconds wide and spans whose
 * are not, down to 1 ns a column; `stats --ascii` must then draw every
 * column alike (an event one column off would leave a column of 1 and
 * one of 3).
 */
#include "logfmt_util.h"
#include "cli_util.h"

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

/* the first offset in column c of cols, the trace spanning span ns */
static uint64_t col_start(uint64_t c, unsigned cols, uint64_t span)
{
	unsigned __int128 v = (unsigned __int128)c * (span + 1);
	return (uint64_t)((v + cols - 1) / cols);
}

/* A log at path of the two edges of each of cols columns over span ns */
static void write_log(const char *path, unsigned cols, uint64_t span)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct pt_attr_img a = mkattr(64);
	struct pt_logw w;

	REQUIRE(fd >= 0);
	a.log_policy = POSIX_TRACE_APPEND;
	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	CHECK_RC(pt_logw_name(&w, 17, "tick"), 0);
	for (uint64_t c = 0; c < cols; c++) {
		uint64_t lo = col_start(c, cols, span), hi = col_start(c + 1, cols, span) - 1;
		CHECK_RC(pt_logw_event(&w, T0 + lo, 1000, 0x1000, 0, 17, 0, NULL, 0), 0);
		CHECK_RC(pt_logw_event(&w, T0 + hi, 1000, 0x1000, 0, 17, 0, NULL, 0), 0);
	}
	CHECK_RC(pt_logw_finish(&w, &ST), 0);
	pt_logw_free(&w);
	close(fd);
}

/* The chart's row of "tick" in stats' output: its cells, or NULL */
static char *row_of(const char *out, char *line, size_t cap)
{
	const char *s = strstr(out, "activity over time");
	if (!s)
		return NULL;
	while (cli_next_line(&s, line, cap) == 0)
		if (!strncmp(line, "tick", 4)) {
			char *b = strchr(line, '|'), *e = strrchr(line, '|');
			if (!b || e == b)
				return NULL;
			*e = 0;
			return b + 1;
		}
	return NULL;
}

int main(void)
{
	/* (width, span): columns of 1 ns; whole and ragged widths; a span of
	 * 2^40 ns and more, whose offsets times the columns pass 64 bits */
	static const struct { int width; uint64_t span; } cases[] = {
		{ 110, 96 },           /* 97 columns of exactly 1 ns */
		{ 110, 97 * 1000 - 1 },
		{ 110, 1000003 },
		{ 80, 123456789 },
		{ 200, 999999937 },
		{ 133, (1ull << 40) + 12345 },
		{ 61, (1ull << 62) / 7 },
	};
	char line[4096], w[16];

	T_BEGIN(60);
	cli_setup();
	const char *path = cli_path("chart.ptlog");
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		unsigned cols = (unsigned)cases[k].width - 13; /* (a 10-column name: "tick") */
		write_log(path, cols, cases[k].span);
		snprintf(w, sizeof w, "%d", cases[k].width);
		char *out = NULL;
		CHECK_EQ(cli_run(CLI("stats", "--ascii", "--width", w, (char *)path), &out, NULL), 0);
		char *row = out ? row_of(out, line, sizeof line) : NULL;
		REQUIRE(row);
		size_t n = strlen(row), same = 0;
		for (size_t i = 0; i < n; i++)
			same += row[i] == row[0] && row[0] != ' ';
		printf("span %llu ns over %u columns: %zu of %zu alike ('%c')\n",
		       (unsigned long long)cases[k].span, cols, same, n, row[0]);
		CHECK_EQ(n, cols);
		CHECK_EQ(same, n);
		if (same != n)
			fprintf(stderr, "row: |%s|\n", row);
		free(out);
	}
	T_END();
}
