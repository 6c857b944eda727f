#!/usr/bin/env bash
# check_version.sh BINARY EXPECTED
# `BINARY --version` exits 0 and prints exactly EXPECTED (one line, e.g. "ccltune 0.1.0": the
# CMake project version) on stdout and nothing on stderr: what a packager, an image test or a
# bug report reads.
set -uo pipefail

bin=$1
expected=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("$bin" --version 2>"$err")
code=$?
[[ $code -eq 0 ]] || { echo "FAILED: $bin --version exited $code: $out $(cat "$err")"; exit 1; }
[[ $out == "$expected" ]] || { echo "FAILED: $bin --version printed '$out', not '$expected'"; exit 1; }
[[ ! -s $err ]] || { echo "FAILED: $bin --version wrote to stderr: $(cat "$err")"; exit 1; }
echo "PASSED: $out"
