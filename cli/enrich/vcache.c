/*
 * vcache.c -- where `posixtrace view` keeps the indexes it builds
 * (vindex.c), and when it removes them (docs/posixtrace.1, FILES):
 *
 *   where  $XDG_CACHE_HOME/posixtrace ($XDG_CACHE_HOME an absolute path),
 *          else $HOME/.cache/posixtrace: a directory of the user's own,
 *          mode 0700 (made so), not a symbolic link, open to nobody else,
 *          reached from $XDG_CACHE_HOME or $HOME (the user's own) without
 *          following any link (openat, O_NOFOLLOW), each directory the
 *          user's;
 *          any other: no cache (the index is built at each start);
 *   named  view-DEV-INO.idx, by the log file's device and inode (hex):
 *          one entry per log file.  An entry begins with the log's
 *          identity (device, inode, size, modification time) and its
 *          absolute path, then the index (vindex.c's format);
 *   used   only for that very file (the four must match);
 *   removed  at each start of `view` (vcache_sweep), the entries
 *          - stale: the path is gone, names another file, or the file
 *            changed since (size or modification time);
 *          - unused for VCACHE_AGE_DAYS days (an entry is touched when used);
 *          - over the cap (VCACHE_MAX_DEFAULT in all, or
 *            POSIXTRACE_VIEW_CACHE_MAX): the least recently used first,
 *            never the one of the log being viewed; an index larger than
 *            the cap is not kept at all;
 *          - unreadable (not an entry: another format, cut short);
 *          - temporary files of a start that was killed, after an hour;
 *   how    entries 0600, written to a temporary file and renamed into
 *          place; nothing is followed: every file is opened relative to
 *          the directory with O_NOFOLLOW and removed with unlinkat (which
 *          removes a link itself); only the user's own regular files
 *          named as above are read or removed.
 *
 * An entry is untrusted input like a log: vindex.c checks every size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "enrich.h"

#define VCACHE_MAX_DEFAULT (256ull << 20)
#define VCACHE_AGE_DAYS 30
#define VCACHE_TMP_AGE_S 3600
#define PT_ALIGN8(n) (((uint64_t)(n) + 7u) & ~(uint64_t)7u)
static const char vc_magic[8] = "PTVCACH1";

struct vc_head {
	char magic[8];
	struct vkey key;
	uint32_t pathlen, pad;
};

void vkey_of(struct vkey *k, const struct stat *sb)
{
	memset(k, 0, sizeof *k);
	k->dev = sb->st_dev;
	k->ino = sb->st_ino;
	k->size = (uint64_t)sb->st_size;
	k->mtime_s = (uint64_t)sb->st_mtim.tv_sec;
	k->mtime_ns = (uint64_t)sb->st_mtim.tv_nsec;
}

static void entry_name(char *buf, size_t cap, const struct vkey *k)
{
	snprintf(buf, cap, "view-%llx-%llx.idx", (unsigned long long)k->dev,
	         (unsigned long long)k->ino);
}

static uint64_t cap_bytes(void)
{
	static int said;
	const char *e = getenv("POSIXTRACE_VIEW_CACHE_MAX");
	size_t v;

	if (!e || !*e)
		return VCACHE_MAX_DEFAULT;
	if (parse_size(e, &v) != 0) {
		if (!said++)
			err_msg("POSIXTRACE_VIEW_CACHE_MAX: '%s' is not a size (like 256M); "
			        "taking %lluM", e, (unsigned long long)(VCACHE_MAX_DEFAULT >> 20));
		return VCACHE_MAX_DEFAULT;
	}
	return v;
}

/* The directory name under at, never through a link: made (0700) if
 * create and missing; kept only if it is this user's (and, if private,
 * no other may enter it).  Its descriptor, or -1 with errno (ELOOP: a
 * link; EPERM: another user's, or a private one open to others).  Who
 * else may write in at does not matter: nothing is followed, and what
 * they could put there is not this user's. */
static int sub_dir(int at, const char *name, int create, int private)
{
	struct stat sb;

	if (create && mkdirat(at, name, 0700) != 0 && errno != EEXIST)
		return -1;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || sb.st_uid != geteuid() || (private && (sb.st_mode & 077))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int vcache_dir(int create)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *base, *sub = xdg && xdg[0] == '/' ? NULL : ".cache";
	char dir[PATH_MAX];
	int n, e;

	if (xdg && xdg[0] == '/')
		base = xdg;
	else if (home && home[0] == '/')
		base = home;
	else
		return -1;
	n = snprintf(dir, sizeof dir, "%s%s%s/posixtrace", base, sub ? "/" : "", sub ? sub : "");
	if (n < 0 || (size_t)n >= sizeof dir)
		return -1;
	/* The base (the home or $XDG_CACHE_HOME) must be this user's (root
	 * running with another user's HOME gets no cache); below it nothing
	 * is followed, each component made and checked through its parent's
	 * descriptor (a link there is refused, whoever planted it). */
	if (create && !sub)
		(void)mkdir(base, 0700); /* (as $HOME/.cache would be) */
	int b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1, mid = -1;
	struct stat sb;
	if (b >= 0 && (fstat(b, &sb) != 0 || sb.st_uid != geteuid())) {
		close(b);
		b = -1;
		errno = EPERM;
	}
	if (b >= 0 && sub)
		mid = sub_dir(b, sub, create, 0);
	if (b >= 0 && (!sub || mid >= 0))
		fd = sub_dir(sub ? mid : b, "posixtrace", create, 1);
	e = errno;
	if (mid >= 0)
		close(mid);
	if (b >= 0)
		close(b);
	if (fd >= 0)
		return fd;
	if (create && e != ELOOP && e != ENOTDIR && e != EPERM)
		err_msg("cannot make the directory %s: %s; the index is not kept", dir, strerror(e));
	else if (create) /* (a link, another user's, open to others) */
		err_msg("%s is not a private directory of this user (mode 0700, reached through "
		        "directories of the user's, no link); the index is not kept", dir);
	return -1;
}

int vcache_read(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

/* The entry `name` in dir, open if it is the user's own regular file
 * (never through a link), with its head and path checked; -1 if not. */
static int open_entry(int dir, const char *name, struct vc_head *h, char *path, size_t pcap,
                      struct stat *sb)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode) || sb->st_uid != geteuid() ||
	    vcache_read(fd, h, sizeof *h) || memcmp(h->magic, vc_magic, sizeof vc_magic) ||
	    h->pathlen >= pcap || h->pathlen >= PATH_MAX ||
	    (uint64_t)sb->st_size < sizeof *h + h->pathlen ||
	    vcache_read(fd, path, h->pathlen) || memchr(path, 0, h->pathlen)) {
		close(fd);
		return -1;
	}
	path[h->pathlen] = 0;
	return fd;
}

int vcache_open(int dir, const struct vkey *k, uint64_t *len)
{
	char name[64], path[PATH_MAX];
	struct vc_head h;
	struct stat sb;

	entry_name(name, sizeof name, k);
	int fd = open_entry(dir, name, &h, path, sizeof path, &sb);
	if (fd < 0)
		return -1;
	uint64_t at = PT_ALIGN8(sizeof h + h.pathlen);
	if (memcmp(&h.key, k, sizeof *k) || (uint64_t)sb.st_size < at ||
	    lseek(fd, (off_t)at, SEEK_SET) != (off_t)at) {
		close(fd);
		return -1;
	}
	*len = (uint64_t)sb.st_size - at;
	(void)futimens(fd, NULL); /* used: the last to go when over the cap */
	return fd;
}

static int write_all(int fd, const void *p, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = write(fd, (const char *)p + done, n - done);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

void vcache_store(int dir, const struct vkey *k, const char *log, const struct iovec *iov,
                  size_t niov)
{
	static const char zero[8];
	char name[64], tmp[96], *abs = realpath(log, NULL);
	struct vc_head h;
	uint64_t total = 0;

	memset(&h, 0, sizeof h);
	memcpy(h.magic, vc_magic, sizeof vc_magic);
	h.key = *k;
	/* (no absolute path: kept without, removed by age or the cap only) */
	h.pathlen = abs && strlen(abs) < PATH_MAX ? (uint32_t)strlen(abs) : 0;
	size_t pad = PT_ALIGN8(sizeof h + h.pathlen) - (sizeof h + h.pathlen);
	for (size_t i = 0; i < niov; i++)
		total += iov[i].iov_len;
	if (sizeof h + h.pathlen + pad + total > cap_bytes()) {
		free(abs);
		return; /* larger than the whole cache may be */
	}
	entry_name(name, sizeof name, k);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", name, (long)getpid());
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(abs);
		return; /* (no cache: the next start builds it again) */
	}
	int bad = write_all(fd, &h, sizeof h) || write_all(fd, abs, h.pathlen) ||
	          write_all(fd, zero, pad);
	for (size_t i = 0; i < niov && !bad; i++)
		bad = write_all(fd, iov[i].iov_base, iov[i].iov_len);
	free(abs);
	if (close(fd) != 0 || bad || renameat(dir, tmp, dir, name) != 0)
		unlinkat(dir, tmp, 0);
}

struct live { char name[64]; uint64_t size; struct timespec used; };

static int by_use(const void *a, const void *b)
{
	const struct live *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* Whether the entry (its head read) is of a log that is gone or changed. */
static int stale(const struct vc_head *h, const char *path)
{
	struct stat sb;
	struct vkey now;

	if (!path[0])
		return 0; /* (no path kept: age and the cap only) */
	if (stat(path, &sb) != 0)
		return errno == ENOENT || errno == ENOTDIR;
	vkey_of(&now, &sb);
	return memcmp(&now, &h->key, sizeof now) != 0;
}

size_t vcache_sweep(int dir, const struct vkey *keep)
{
	char keepname[64], path[PATH_MAX];
	struct live *v = NULL;
	size_t n = 0, cap = 0, removed = 0;
	uint64_t total = 0, max = cap_bytes();
	time_t now = time(NULL);
	int dfd = dup(dir);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	keepname[0] = 0;
	if (keep)
		entry_name(keepname, sizeof keepname, keep);
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;
		size_t len = strlen(nm);
		struct stat sb;
		if (strncmp(nm, "view-", 5) || len >= sizeof v->name ||
		    fstatat(dir, nm, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != geteuid())
			continue; /* not ours: left alone */
		if (strstr(nm, ".idx.tmp.")) { /* a start killed while writing it */
			if (now - sb.st_mtim.tv_sec > VCACHE_TMP_AGE_S)
				removed += unlinkat(dir, nm, 0) == 0;
			continue;
		}
		if (len < 9 || strcmp(nm + len - 4, ".idx"))
			continue;
		struct vc_head h;
		int fd = open_entry(dir, nm, &h, path, sizeof path, &sb);
		int keep_it = !strcmp(nm, keepname);
		if (fd >= 0)
			close(fd);
		if (!keep_it && (fd < 0 || stale(&h, path) ||
		                 now - sb.st_mtim.tv_sec > (time_t)VCACHE_AGE_DAYS * 86400)) {
			removed += unlinkat(dir, nm, 0) == 0;
			continue;
		}
		total += (uint64_t)sb.st_size;
		if (keep_it)
			continue;
		if (n == cap) {
			struct live *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		memcpy(v[n].name, nm, len + 1);
		v[n].size = (uint64_t)sb.st_size;
		v[n].used = sb.st_mtim;
		n++;
	}
	closedir(d);
	if (total > max && n) {
		qsort(v, n, sizeof *v, by_use);
		for (size_t i = 0; i < n && total > max; i++)
			if (unlinkat(dir, v[i].name, 0) == 0) {
				total -= v[i].size;
				removed++;
			}
	}
	free(v);
	return removed;
}
