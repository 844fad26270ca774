#!/bin/sh
# run.sh -- driver for the posixtrace vs LTTng-UST comparison (make bench-lttng).
#
#   sh bench/lttng/run.sh --check CC   print why the comparison cannot run
#                                      (nothing if it can), always exit 0
#   sh bench/lttng/run.sh BINARY [ARGS] run BINARY (lttng_cmp) with a private
#                                      LTTNG_HOME under /tmp and a scratch
#                                      directory on tmpfs, starting
#                                      lttng-sessiond --daemonize --no-kernel
#                                      if no session daemon answers, and
#                                      stopping (only) that daemon at the end
set -u

if [ "${1:-}" = --check ]; then
	cc=${2:-cc}
	for c in lttng lttng-sessiond; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "$c not found (Debian package lttng-tools)"
			exit 0
		fi
	done
	if ! printf '%s\n' '#include <lttng/tracepoint.h>' '#include <lttng/ust-version.h>' \
		'#if LTTNG_UST_MAJOR_VERSION * 100 + LTTNG_UST_MINOR_VERSION < 213' \
		'#error lttng-ust older than 2.13' '#endif' |
		$cc -E -x c - >/dev/null 2>&1; then
		echo "lttng-ust >= 2.13 development headers not found (Debian package liblttng-ust-dev)"
		exit 0
	fi
	exit 0
fi

bin=${1:?usage: run.sh --check CC | run.sh BINARY [ARGS]}
shift

home=$(mktemp -d /tmp/ptbench-lttng-home.XXXXXX) || exit 1
LTTNG_HOME=$home
export LTTNG_HOME
scratch=
if [ -n "${KEEP_DIR:-}" ]; then
	scratch=$(mktemp -d "$KEEP_DIR/ptbench-lttng.XXXXXX") || exit 1
fi
[ -n "$scratch" ] || for d in /dev/shm /run/user/"$(id -u)" /tmp; do
	if [ "$(stat -f -c %T "$d" 2>/dev/null)" = tmpfs ] &&
		scratch=$(mktemp -d "$d/ptbench-lttng.XXXXXX" 2>/dev/null); then
		break
	fi
	scratch=
done
[ -n "$scratch" ] || scratch=$(mktemp -d /tmp/ptbench-lttng.XXXXXX) || exit 1

# a pid that exists and is not a zombie
alive() {
	[ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'
}

started=
prefix=ptbench-$$
cleanup() {
	# sessions an interrupted run left behind (only ours: named $prefix-N)
	for s in $(lttng list 2>/dev/null | grep -o "$prefix-[0-9]*" | sort -u); do
		lttng destroy "$s" >/dev/null 2>&1
	done
	if [ -n "$started" ]; then
		kill -TERM "$started" 2>/dev/null
		i=0
		while alive "$started" && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if alive "$started"; then
			# seen when the traced process died with a session active:
			# the daemon hangs in its shutdown
			echo "run.sh: lttng-sessiond $started ignored SIGTERM for 10 s: SIGKILL" >&2
			kill -KILL "$started" 2>/dev/null
		else
			echo "run.sh: stopped the lttng-sessiond it started (pid $started)" >&2
		fi
	fi
	rm -rf "$home" "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if lttng list >/dev/null 2>&1; then
	echo "run.sh: using the session daemon already running" >&2
else
	if ! lttng-sessiond --daemonize --no-kernel; then
		echo "run.sh: lttng-sessiond --daemonize --no-kernel failed" >&2
		exit 1
	fi
	if [ "$(id -u)" = 0 ]; then rundir=/var/run/lttng; else rundir=$LTTNG_HOME/.lttng; fi
	pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null)
	if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != lttng-sessiond ]; then
		echo "run.sh: started lttng-sessiond but cannot find its pid in $rundir" >&2
		exit 1
	fi
	started=$pid
	echo "run.sh: started lttng-sessiond (pid $pid)" >&2
fi

"$bin" -d "$scratch" -s "$prefix" "$@"
