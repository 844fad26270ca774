/*
 * docs_walk.c -- a newcomer who follows docs/architecture.md, and the
 * format pages written the same way, finds every name they give (issue
 * 53, item 5).
 *
 * Every name in backquotes that is a path from the top of the tree
 * (`src/producer/event.c`, `cli/read/`), optionally followed by a colon and
 * an identifier (`src/producer/event.c:posix_trace_event`), must be a file
 * (a folder, for a path ending in '/'), and the identifier must be defined
 * in that file: a function body, a macro, or a struct, union or enum with
 * its members.  A declaration, a call or a mention in a comment is not a
 * definition.  A name in backquotes that ends in .c or .h but is not such
 * a path fails too, so that a page cannot name a file a reader has to
 * guess the folder of.
 *
 * design.md's maps of src/ and cli/ (its tables: a layer, its files) name
 * files that are there, and every .c file of the two trees.
 *
 * Then the checker itself: on a copy of a known file, a definition is
 * found, a declaration, a call and a comment are not, and a page with one
 * name broken fails, and so does a map.
 */
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static char src[1024];

/* the pages checked, each of them written with whole paths */
static const char *const pages[] = { "docs/architecture.md", "docs/shm-format.md" };

/* A C file with comments, string and character literals blanked (same
 * length, newlines kept), so that what is left is code only. */
static char *code_only(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n + 1);
	REQUIRE(o);
	memcpy(o, s, n + 1);
	for (size_t i = 0; i < n;) {
		if (s[i] == '/' && s[i + 1] == '*') {
			size_t j = i + 2;
			while (j < n && !(s[j] == '*' && s[j + 1] == '/'))
				j++;
			j = j < n ? j + 2 : n;
			for (size_t k = i; k < j; k++)
				if (o[k] != '\n')
					o[k] = ' ';
			i = j;
		} else if (s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				o[i++] = ' ';
		} else if (s[i] == '"' || s[i] == '\'') {
			char q = s[i++];
			while (i < n && s[i] != q && s[i] != '\n') {
				if (s[i] == '\\' && i + 1 < n)
					o[i++] = ' ';
				o[i++] = ' ';
			}
			i++;
		} else {
			i++;
		}
	}
	return o;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* p just past a '(' (or another opener); the matching closer, or NULL */
static const char *close_of(const char *p, char open, char close)
{
	int depth = 1;
	for (; *p; p++)
		if (*p == open)
			depth++;
		else if (*p == close && --depth == 0)
			return p;
	return NULL;
}

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* Whether code (code_only's) defines name: "#define name", "struct name {"
 * (union, enum), or name at file scope followed by its parameters and a
 * body (attributes between the two allowed). */
static int defines(const char *code, const char *name)
{
	size_t nl = strlen(name);
	int depth = 0;

	for (const char *p = code; *p; p++) {
		if (p == code || p[-1] == '\n') { /* a directive: its whole (continued) line */
			const char *q = p;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '#') {
				q = skip_space(q + 1);
				if (strncmp(q, "define", 6) == 0 && isspace((unsigned char)q[6])) {
					q = skip_space(q + 6);
					if (strncmp(q, name, nl) == 0 && !ident_char(q[nl]))
						return 1;
				}
				while (*q && !(*q == '\n' && q[-1] != '\\'))
					q++;
				if (!*q)
					return 0;
				p = q; /* at its newline */
				continue;
			}
		}
		if (*p == '{')
			depth++;
		else if (*p == '}')
			depth -= depth > 0;
		if (strncmp(p, name, nl) != 0 || (p > code && ident_char(p[-1])) || ident_char(p[nl]))
			continue;
		const char *q = skip_space(p + nl);
		/* a tag with its members, at any depth (a struct in a struct) */
		if (*q == '{') {
			const char *e = p;
			while (e > code && isspace((unsigned char)e[-1]))
				e--;
			const char *b = e;
			while (b > code && ident_char(b[-1]))
				b--;
			if ((e - b == 6 && strncmp(b, "struct", 6) == 0) ||
			    (e - b == 5 && strncmp(b, "union", 5) == 0) ||
			    (e - b == 4 && strncmp(b, "enum", 4) == 0))
				return 1;
		}
		if (depth != 0 || *q != '(')
			continue;
		const char *r = close_of(q + 1, '(', ')');
		if (!r)
			return 0;
		for (r = skip_space(r + 1); strncmp(r, "__attribute__", 13) == 0;) {
			const char *a = skip_space(r + 13);
			if (*a != '(' || !(a = close_of(a + 1, '(', ')')))
				return 0;
			r = skip_space(a + 1);
		}
		if (*r == '{')
			return 1;
	}
	return 0;
}

/* Whether the file rel (from the top of the tree) defines name. */
static int file_defines(const char *rel, const char *name)
{
	char p[2048];
	snprintf(p, sizeof p, "%s/%s", src, rel);
	char *s = cli_slurp(p);
	if (!s)
		return 0;
	char *c = code_only(s);
	int r = defines(c, name);
	free(c);
	free(s);
	return r;
}

static int is_path_token(const char *t)
{
	static const char *const tops[] = { "src/", "cli/", "include/", "tests/", "docs/",
		                            "bench/", "fuzz/", "examples/" };
	for (size_t i = 0; i < sizeof tops / sizeof *tops; i++)
		if (strncmp(t, tops[i], strlen(tops[i])) == 0)
			return 1;
	return 0;
}

/* A name that looks like a C file or one in a folder (foo.c, foo.h, with or
 * without ":name"). */
static int looks_like_file(const char *t)
{
	const char *colon = strchr(t, ':');
	size_t n = colon ? (size_t)(colon - t) : strlen(t);
	for (size_t i = 0; i < n; i++)
		if (!ident_char(t[i]) && !strchr("./-", t[i]))
			return 0;
	return n > 2 && t[n - 2] == '.' && (t[n - 1] == 'c' || t[n - 1] == 'h');
}

/* Checks every name of a page's text; how many failed.  *named: how many
 * names were checked, *funcs: how many of them with a function. */
static int check_page(const char *page, const char *text, int *named, int *funcs)
{
	int bad = 0;
	*named = 0, *funcs = 0;
	for (const char *p = strchr(text, '`'); p; p = strchr(p + 1, '`')) {
		const char *e = strchr(p + 1, '`');
		if (!e)
			break;
		size_t n = (size_t)(e - p - 1);
		char tok[512];
		if (n == 0 || n >= sizeof tok || memchr(p + 1, '\n', n) || memchr(p + 1, ' ', n)) {
			p = e;
			continue;
		}
		memcpy(tok, p + 1, n);
		tok[n] = 0;
		p = e; /* the next name starts after this one's closing quote */
		if (!is_path_token(tok)) {
			if (looks_like_file(tok)) {
				fprintf(stderr, "%s: `%s`: give the file's path from the top of the tree\n",
				        page, tok);
				bad++;
			}
			continue;
		}
		char *colon = strchr(tok, ':');
		const char *fn = NULL;
		if (colon) {
			*colon = 0;
			fn = colon + 1;
			int ok = *fn && !isdigit((unsigned char)*fn);
			for (const char *c = fn; *c; c++)
				ok &= ident_char(*c);
			if (!ok) {
				fprintf(stderr, "%s: `%s:%s`: not a file:function name\n", page, tok, fn);
				bad++;
				continue;
			}
		}
		(*named)++;
		char path[2048];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", src, tok);
		size_t tl = strlen(tok);
		int dir = tl && tok[tl - 1] == '/';
		if (stat(path, &st) != 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
			fprintf(stderr, "%s: `%s`: no such %s\n", page, tok, dir ? "folder" : "file");
			bad++;
			continue;
		}
		if (fn) {
			(*funcs)++;
			if (dir || !file_defines(tok, fn)) {
				fprintf(stderr, "%s: `%s:%s`: %s is not defined in %s\n", page, tok, fn,
				        fn, tok);
				bad++;
			}
		}
	}
	return bad;
}

/* design.md's map of root ("src" or "cli"): the section "## The map of
 * root/", a table whose rows give a layer (`shm/`) in their first cell, or
 * none for the row's above, and files in their second (`pool.c`, or a
 * path from the top: `src/ext.h`).  Every file it names must be there,
 * and every .c file of root's folders named (a header is the layer's
 * prose's).  How many failed; *named: the files named. */
static int map_quiet; /* (the self-test's broken map: counted, not told) */

static int check_map(const char *design, const char *root, int *named)
{
	char title[64], layer[64] = "", path[2048];
	int bad = 0;

	*named = 0;
	snprintf(title, sizeof title, "\n## The map of %s/\n", root);
	const char *sec = strstr(design, title);
	if (!sec) {
		fprintf(stderr, "design.md: no section \"%s\"\n", title + 1);
		return 1;
	}
	const char *end = strstr(sec + 1, "\n## ");
	size_t len = end ? (size_t)(end - sec) : strlen(sec);
	char *t = strndup(sec, len), *save = NULL;
	char **seen = NULL;
	size_t nseen = 0;
	REQUIRE(t);
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "| ", 2) != 0 || strncmp(line, "| layer", 7) == 0)
			continue;
		char *c1 = line + 1, *c2 = strchr(c1, '|'), *c3 = c2 ? strchr(c2 + 1, '|') : NULL;
		if (!c3)
			continue;
		*c2 = 0, *c3 = 0;
		char *q = strchr(c1, '`');
		if (q && strchr(q + 1, '`')) { /* a new layer */
			size_t n = (size_t)(strchr(q + 1, '`') - q - 1);
			snprintf(layer, sizeof layer, "%.*s", (int)n, q + 1);
		}
		for (char *f = strchr(c2 + 1, '`'); f; f = strchr(f + 1, '`')) {
			char *e = strchr(f + 1, '`');
			if (!e)
				break;
			size_t n = (size_t)(e - f - 1);
			int file = n > 2 && (strncmp(e - 2, ".c", 2) == 0 || strncmp(e - 2, ".h", 2) == 0 ||
			                     (n > 5 && strncmp(e - 5, ".html", 5) == 0));
			if (file) {
				char rel[512];
				if (memchr(f + 1, '/', n))
					snprintf(rel, sizeof rel, "%.*s", (int)n, f + 1);
				else
					snprintf(rel, sizeof rel, "%s/%s%.*s", root, layer, (int)n, f + 1);
				snprintf(path, sizeof path, "%s/%s", src, rel);
				(*named)++;
				if (access(path, R_OK) != 0) {
					if (!map_quiet)
						fprintf(stderr, "design.md, the map of %s/: `%.*s`: no %s\n", root,
						        (int)n, f + 1, rel);
					bad++;
				}
				REQUIRE((seen = realloc(seen, (nseen + 1) * sizeof *seen)));
				REQUIRE((seen[nseen++] = strdup(rel)));
			}
			f = e;
		}
	}
	/* every .c file of root/LAYER/ named */
	snprintf(path, sizeof path, "%s/%s", src, root);
	DIR *d = opendir(path);
	REQUIRE(d);
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		char sub[sizeof path + 260];
		snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
		DIR *d2 = opendir(sub);
		if (!d2)
			continue;
		for (struct dirent *fe; (fe = readdir(d2));) {
			size_t n = strlen(fe->d_name);
			if (n < 3 || strcmp(fe->d_name + n - 2, ".c") != 0)
				continue;
			char rel[600];
			snprintf(rel, sizeof rel, "%s/%s/%s", root, de->d_name, fe->d_name);
			int found = 0;
			for (size_t i = 0; i < nseen && !found; i++)
				found = strcmp(seen[i], rel) == 0;
			if (!found) {
				if (!map_quiet)
					fprintf(stderr, "design.md, the map of %s/: %s is not in it\n",
					        root, rel);
				bad++;
			}
		}
		closedir(d2);
	}
	closedir(d);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	free(t);
	return bad;
}

/* The checker finds what it should on a file of the tree, and a page with
 * one broken name fails. */
static void self_test(void)
{
	/* event.c: posix_trace_event defined (attributes before its
	 * name), pt_pool_acquire only called; layout.h: a macro, a struct
	 * and a static inline function; trace.h: posix_trace_event both
	 * declared and defined as a macro */
	CHECK(file_defines("src/producer/event.c", "posix_trace_event"));
	CHECK(!file_defines("src/producer/event.c", "pt_pool_acquire"));
	CHECK(file_defines("src/ring/pool.c", "pt_pool_acquire"));
	CHECK(file_defines("src/shm/layout.h", "PT_REC_W1"));
	CHECK(file_defines("src/shm/layout.h", "pt_chunk"));
	CHECK(file_defines("src/shm/layout.h", "pt_rec_w0"));
	CHECK(!file_defines("src/shm/layout.h", "pt_hd"));
	CHECK(file_defines("include/trace.h", "posix_trace_event"));
	CHECK(!file_defines("include/trace.h", "posix_trace_getnext_event"));

	const char *c1 = "/* int f(void) { } */\nint g(void);\nstatic int h(int a)\n{\n\treturn f(a);\n}\n"
	                 "const char *s = \"k(void) {\";\n";
	char *c = code_only(c1);
	CHECK(defines(c, "h"));
	CHECK(!defines(c, "f")); /* a comment and a call */
	CHECK(!defines(c, "g")); /* a declaration */
	CHECK(!defines(c, "k")); /* in a string */
	free(c);

	int named, funcs;
	char page[512];
	snprintf(page, sizeof page, "`src/producer/event.c:posix_trace_event`, `src/ring/`, "
	                            "`src/shm/layout.h`");
	CHECK_EQ(check_page("(good)", page, &named, &funcs), 0);
	CHECK_EQ(named, 3);
	CHECK_EQ(funcs, 1);
	fprintf(stderr, "(expected: four complaints about a page broken on purpose)\n");
	snprintf(page, sizeof page, "`src/producer/event.c:posix_trace_evnt` `src/producer/evnt.c` "
	                            "`src/rng/` `event.c:posix_trace_event`");
	CHECK_EQ(check_page("(broken)", page, &named, &funcs), 4);

	/* a map with a file that is not there, and without the rest */
	const char *map = "x\n## The map of src/\n\n| layer | file | what |\n|---|---|---|\n"
	                  "| `ring/` | `pool.c`, `pol.c` | the pool |\n| | `ring.h` | its header |\n"
	                  "\n## Next\n";
	map_quiet = 1;
	int bad = check_map(map, "src", &named);
	map_quiet = 0;
	CHECK_EQ(named, 3);
	CHECK(bad > 1);
}

int main(void)
{
	T_BEGIN(30);
	t_source_dir(src, sizeof src); /* here (tests/run.sh), else above the build */
	self_test();
	for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
		char p[2048];
		snprintf(p, sizeof p, "%s/%s", src, pages[i]);
		char *text = cli_slurp(p);
		if (!text)
			fprintf(stderr, "cannot read %s\n", p);
		CHECK(text);
		if (!text)
			continue;
		int named, funcs;
		CHECK_EQ(check_page(pages[i], text, &named, &funcs), 0);
		/* (a page that names nothing would pass anything) */
		CHECK(named >= 10);
		if (strcmp(pages[i], "docs/architecture.md") == 0)
			CHECK(funcs >= 20);
		free(text);
	}
	/* design.md's maps name every file of src/ and cli/, and only those */
	char p[2048];
	snprintf(p, sizeof p, "%s/docs/design.md", src);
	char *design = cli_slurp(p);
	REQUIRE(design);
	for (int i = 0; i < 2; i++) {
		const char *root = i ? "cli" : "src";
		int named;
		CHECK_EQ(check_map(design, root, &named), 0);
		CHECK(named >= 40);
	}
	free(design);
	T_END();
}
