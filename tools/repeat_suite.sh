#!/usr/bin/env bash
# The whole suite run again and again on a loaded machine, to find tests that fail only sometimes (issue 28).
#
#   tools/repeat_suite.sh [RUNS=10] [BUSY=2] [SUMMARY=repeat_suite.txt]
#
# Runs `make test` (the README's command) RUNS times in a row in this checkout, with BUSY processes spinning
# on the CPU beside it the whole time (2 on a 2-core machine: the suite's workers get about half of it), and
# writes one line per run to SUMMARY (exit status, seconds, load average, pytest's last line) followed by every
# FAILED or ERROR test of that run; each run's whole output stays in repeat_suite.<N>.log. Exits 1 if any run
# failed. Every test named in SUMMARY failed at least once: make it deterministic rather than retrying it.
set -u
RUNS=${1:-10}
BUSY=${2:-2}
SUMMARY=${3:-repeat_suite.txt}
cd "$(dirname "$0")/.."
pids=()
for _ in $(seq 1 "$BUSY"); do
    yes > /dev/null &
    pids+=($!)
done
trap 'kill "${pids[@]}" 2> /dev/null' EXIT
echo "commit $(git rev-parse --short HEAD), $RUNS runs of make test beside $BUSY busy processes, $(nproc) cores, from $(date -u +%FT%TZ)" > "$SUMMARY"
failed=0
for run in $(seq 1 "$RUNS"); do
    started=$(date +%s)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    make test > "repeat_suite.$run.log" 2>&1
    status=$?
    failed=$((failed + (status != 0)))
    last=$(grep -E '^=+ .*(passed|failed|error).* =+$' "repeat_suite.$run.log" | tail -n 1)
    echo "run $run: exit $status, $(($(date +%s) - started)) s, load average before $load, $last" >> "$SUMMARY"
    grep -E '^(FAILED|ERROR) ' "repeat_suite.$run.log" >> "$SUMMARY"
done
echo "$failed of $RUNS runs failed, until $(date -u +%FT%TZ)" >> "$SUMMARY"
cat "$SUMMARY"
[ "$failed" -eq 0 ]
