#!/usr/bin/env bash
# The unit passes of `npm test`, each a lane, the lanes at the same time (each lane one jest process in band, so two
# lanes keep a 2-core runner busy without putting two specs on one core):
#   unit — every unit spec (src/**/*.spec.ts) in the machine's zone;
#   tz   — the src/schedules specs again under each zone in TZ_PASS_ZONES, one zone after the other (a zone-dependent
#          bug shows under one of two zones on either side of UTC, one of them with a half-hour offset).
# Usage: bash test/unit-passes.sh unit tz (npm test), or one lane (npm run test:unit / test:tz run it alone).
# Each lane's output is printed whole, under its name, once it is done; fails if any lane fails.
set -uo pipefail
ZONES="${TZ_PASS_ZONES:-America/New_York Asia/Kolkata}"
export NODE_OPTIONS=--experimental-vm-modules

lane() {
  case "$1" in
    unit) npx jest --config jest.config.js --runInBand ;;
    tz)
      for zone in $ZONES; do
        echo "== src/schedules with TZ=$zone =="
        TZ="$zone" npx jest --config jest.config.js --runInBand src/schedules || return 1
      done
      ;;
    *) echo "unknown lane $1 (unit, tz)" >&2 && return 2 ;;
  esac
}

if (($# == 1)); then
  lane "$1"
  exit
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
pids=()
for name in "$@"; do
  lane "$name" >"$dir/$name.log" 2>&1 &
  pids+=($!)
done
failed=()
for index in "${!pids[@]}"; do
  name="${*:index+1:1}"
  wait "${pids[$index]}" || failed+=("$name")
  echo "==== lane $name ===="
  cat "$dir/$name.log"
done
if ((${#failed[@]} > 0)); then
  echo "failed lanes: ${failed[*]}" >&2
  exit 1
fi
