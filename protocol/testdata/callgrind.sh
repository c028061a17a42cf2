#!/usr/bin/env bash
# Instructions per text check and per bare ed25519.Verify, counted by
# callgrind (repeatable whatever else the machine does): each is run 3,000
# and 6,000 times and the difference divided, so start-up costs cancel.
# GOGC=off keeps the collector's work out of the count. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/protocol.test
go test -c -o "$bin" .
count() { # what n [obs]
  GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 REMEM_CALLGRIND=$1 REMEM_CALLGRIND_N=$2 REMEM_CALLGRIND_OBS=${3:-} \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$bin.log" "$bin" -test.run TestCallgrindLoop >/dev/null 2>&1
  grep Collected "$bin.log" | awk '{print $NF}'
}
v=$(( ($(count verify 6000) - $(count verify 3000)) / 3000 ))
c=$(( ($(count check 6000) - $(count check 3000)) / 3000 ))
o=$(( ($(count check 6000 1) - $(count check 3000 1)) / 3000 ))
echo "ed25519.Verify: $v instructions"
awk -v c="$c" -v o="$o" -v v="$v" 'BEGIN { printf "text checks, corpus mix: %d (%.3f×)\ntext checks, observations: %d (%.3f×)\n", c, c/v, o, o/v }'
