#!/bin/sh
# cpu-map: with `nbthread 2` and `cpu-map auto:1/1-2 0-1`, one thread runs
# on CPU 0 only and the other on CPU 1 only, as the kernel reports in
# /proc/<pid>/task/*/status. Skipped on a machine with one CPU.
. "$(dirname "$0")/lib.sh"
if [ "$(nproc)" -lt 2 ]; then
	echo "cpu-map: skipped (one CPU)"
	exit 0
fi
port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    cpu-map auto:1/1-2 0-1
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 1s
frontend fe
    bind 127.0.0.1:$port
    http-request return status 200
CFG
start_sluice
lists=$(cat /proc/"$sl_pid"/task/*/status | sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' | sort | tr '\n' ' ')
if echo "$lists" | tr ' ' '\n' | grep -qx 0 && echo "$lists" | tr ' ' '\n' | grep -qx 1; then
	echo "cpu-map: threads on CPU 0 and CPU 1 ($lists)"
else
	bad "cpu-map auto:1/1-2 0-1: the threads' CPU lists are: $lists"
fi
exit $fail
