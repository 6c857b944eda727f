#!/usr/bin/env bash
# Builds tests/plugin/fuzz with clang's libFuzzer and fuzzes the plugin's record parser for
# FUZZ_SECONDS (default 20) from the seed corpus. Exit 77 (ctest: skipped) with a message
# when no clang with libFuzzer is installed (Debian: clang-14 libclang-rt-14-dev).
# Usage: run_fuzz.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
seconds=${FUZZ_SECONDS:-20}
cxx=""
for c in clang++-14 clang++; do
  if command -v "$c" >/dev/null; then cxx=$(command -v "$c"); break; fi
done
if [[ -z "$cxx" ]]; then
  echo "SKIP: no clang++ found; install clang-14 libclang-rt-14-dev to fuzz the record parser"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  >"$probe/p.cc"
if ! "$cxx" -fsanitize=fuzzer "$probe/p.cc" -o "$probe/p" 2>"$probe/err"; then
  echo "SKIP: $cxx cannot link libFuzzer (install libclang-rt-14-dev): $(head -c 300 "$probe/err")"
  exit 77
fi
cmake -S "$src/tests/plugin/fuzz" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCCLTUNE_SOURCE_DIR="$src" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
# One compile at a time: ctest counts this test as one of its two heavy slots.
cmake --build "$build" -j1 >"$build.build.log" 2>&1 || { tail -50 "$build.build.log"; exit 1; }
# libFuzzer adds what it finds to the first corpus dir: a scratch copy, seeds stay as they are.
corpus="$probe/corpus"
mkdir -p "$corpus"
cp "$src"/tests/plugin/fuzz_corpus/* "$corpus/"
cd "$probe"
"$build/fuzz_record_parser" -max_total_time="$seconds" -max_len=262144 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
echo "fuzzed the record parser for ${seconds}s: no crash"
