/*
 * procid.c -- who a traced process is: its parent's pid and its command
 * line, written into each stream when the stream reaches the process (it
 * attaches one, inherits one at fork, keeps one across exec, joins one
 * its environment names), in the area of the map of loaded code (an
 * entry of kind PT_OBJ_PROC), so that a reader can show the process tree.
 * The command line is taken from the arguments the C library passes to
 * the library's constructor, lifecycle.c (no system call at load); the
 * parent's pid is asked when the entry is written.  An entry says whether
 * the process was in the stream before (its FORK entry just before it, or
 * its image before an exec): a reader tells a new process that was given
 * a gone one's pid from the same process in a new image that way.
 */
#include <string.h>
#include <unistd.h>
#include "producer.h"

static char cmdline[PT_OBJ_PATH]; /* the arguments, space separated, cut to fit */
static uint8_t cmdline_cut;
/* PT_OBJ_F_CONT when this image is an exec of a process its streams knew
 * (inherit.c, pt_inherit_adopt); 0 in a new process (fork) */
static uint8_t after_exec;

void pt_procid_adopted(int yes)
{
	after_exec = yes ? PT_OBJ_F_CONT : 0;
}

/* At load (lifecycle.c, with the arguments the C library gave it). */
void pt_procid_init(int argc, char **argv)
{
	size_t n = 0;

	for (int i = 0; argv && i < argc && argv[i]; i++) {
		size_t l = strlen(argv[i]);
		if (n + (i > 0) + l >= sizeof cmdline) {
			cmdline_cut = PT_OBJ_F_TRUNC;
			l = n + (i > 0) < sizeof cmdline - 1 ? sizeof cmdline - 1 - n - (i > 0) : 0;
		}
		if (i > 0 && n < sizeof cmdline - 1)
			cmdline[n++] = ' ';
		memcpy(cmdline + n, argv[i], l);
		n += l;
		if (cmdline_cut)
			break;
	}
	cmdline[n] = 0;
}

void pt_procid_put(struct pt_view *sl, int cont)
{
	struct pt_obj o;

	memset(&o, 0, sizeof o);
	o.lo = (uint64_t)getppid();
	o.flags = cmdline_cut | (cont ? PT_OBJ_F_CONT : after_exec);
	memcpy(o.path, cmdline, sizeof cmdline);
	pt_objmap_put(sl, &o, pt_pid, PT_OBJ_PROC, pt_now());
}
