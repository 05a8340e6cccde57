#!/bin/sh
# Runs `fmtcheck ARGS...` (the CLI path comes first): passes when it prints
# exactly one line on stderr, "fmtcheck: [OPTION: ]no GPU found: ...", nothing on
# stdout, and exits 2. Exits 77 (skipped) when a GPU answered instead.
cli=$1; shift
out=$("$cli" "$@" 2>/tmp/fmtcheck-no-gpu.$$); rc=$?
err=$(cat /tmp/fmtcheck-no-gpu.$$); rm -f /tmp/fmtcheck-no-gpu.$$
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then
  echo "SKIPPED: a GPU is present; 'fmtcheck $*' ran (exit $rc)"; exit 77
fi
lines=$(printf '%s\n' "$err" | wc -l)
case "$err" in
  "fmtcheck: no GPU found: "* | "fmtcheck: --device cuda: no GPU found: "*) ;;
  *) echo "FAIL: stderr was '$err'"; exit 1 ;;
esac
[ $rc -eq 2 ] || { echo "FAIL: exit $rc, expected 2"; exit 1; }
[ "$lines" -eq 1 ] || { echo "FAIL: $lines lines on stderr"; exit 1; }
[ -z "$out" ] || { echo "FAIL: stdout '$out'"; exit 1; }
echo "PASS: $err"
