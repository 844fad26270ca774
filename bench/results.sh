#!/bin/sh
# results.sh -- the machine-readable file of a `make bench` run.
#
#   sh bench/results.sh begin DIR      start DIR/rows.jsonl afresh (the bench
#                                      programs append their rows to it, see
#                                      bench_json() in bench/bench_util.h) and
#                                      note the date, the commit, the machine
#                                      and the load average before the run
#   sh bench/results.sh end DIR STATUS write DIR/results.json: what `begin`
#                                      noted, the load average after, whether
#                                      every program ran to the end (STATUS 0),
#                                      and every row, one JSON object a line
#
# DIR/results.json:
#   { "date": "...Z", "end": "...Z", "commit": "...", "complete": true,
#     "machine": { "nproc", "model", "kernel", "virt", "hypervisor", "hostname",
#                  "mem_kb", "clocksource" },
#     "load_before": [1, 5, 15 min], "load_after": [...],
#     "rows": [ {"bench": PROGRAM, "case": ROW, "load1": ..., KEY: NUMBER ...}, ... ] }
# bench/plots.sh draws from it.
set -u

# a JSON string of $1 (backslashes and double quotes escaped, control
# characters dropped)
jstr() {
	printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

load() {
	awk '{ printf "[%s, %s, %s]", $1, $2, $3 }' /proc/loadavg 2>/dev/null || printf 'null'
}

cmd=${1:?usage: results.sh begin DIR | end DIR STATUS}
dir=${2:?usage: results.sh begin DIR | end DIR STATUS}
mkdir -p "$dir" || exit 1

case $cmd in
begin)
	: >"$dir/rows.jsonl" || exit 1
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
	[ -n "$model" ] || model=$(uname -m)
	# what runs it: systemd-detect-virt's word (kvm, docker, none...), and
	# whether the CPU says it runs under a hypervisor (a container in a VM
	# is both)
	virt=$(systemd-detect-virt 2>/dev/null) ||
		virt=$(cat /sys/class/dmi/id/product_name 2>/dev/null) || virt=unknown
	hyper=false
	grep -qw hypervisor /proc/cpuinfo 2>/dev/null && hyper=true
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD -- 2>/dev/null || commit="$commit+changes"
	{
		printf '  "date": %s,\n' "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
		printf '  "commit": %s,\n' "$(jstr "$commit")"
		printf '  "machine": { "nproc": %s, "model": %s, "kernel": %s, "virt": %s, ' \
			"$(nproc)" "$(jstr "$model")" "$(jstr "$(uname -r)")" "$(jstr "$virt")"
		printf '"hypervisor": %s, "hostname": %s, "mem_kb": %s, "clocksource": %s },\n' \
			"$hyper" "$(jstr "$(uname -n)")" \
			"$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null || echo null)" \
			"$(jstr "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)")"
		printf '  "load_before": %s,\n' "$(load)"
	} >"$dir/head.json"
	;;
end)
	status=${3:-1}
	[ -r "$dir/head.json" ] || { echo "results.sh: no $dir/head.json (run begin first)" >&2; exit 1; }
	out=$dir/results.json
	{
		printf '{\n'
		cat "$dir/head.json"
		printf '  "end": %s,\n' "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
		printf '  "load_after": %s,\n' "$(load)"
		if [ "$status" = 0 ]; then printf '  "complete": true,\n'; else printf '  "complete": false,\n'; fi
		printf '  "rows": [\n'
		sed '$!s/$/,/' "$dir/rows.jsonl"
		printf '  ]\n}\n'
	} >"$out.tmp" && mv "$out.tmp" "$out" || exit 1
	echo "bench: $(wc -l <"$dir/rows.jsonl") rows in $out"
	;;
*)
	echo "usage: results.sh begin DIR | end DIR STATUS" >&2
	exit 1
	;;
esac
