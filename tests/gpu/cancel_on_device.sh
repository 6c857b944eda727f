#!/bin/bash
# A tune on GPUs that is cancelled or loses Redis (issue 44), with the nccl backend: the ranks
# sit in NCCL's collectives and CUDA, not in the host backend's sockets. Three cases, each timed
# from the fault to tune's exit, with the processes left read from /proc:
#   redis-lost  `--redis` to a redis-server killed once 2 problems are done: exit 1 within
#               kRedisLostAfterSeconds (10 s) + the 5 s stop grace, its last line naming Redis;
#   sigterm     SIGTERM to tune mid-tune: exit 143, no rank left, nothing published;
#   kill9       kill -9 of tune (private Redis): no rank or redis-server left after 5 s.
#
# On the GPU machine, from the repository root:
#   cmake --build build --target ccltune
#   GPUS=2 bash tests/gpu/cancel_on_device.sh     (BACKEND=host GPUS=4 checks the script on CPUs)
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
GPUS=${GPUS:-2}
work=$OUT/cancel
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
procs_of() { pgrep -f -- "--job-id $1( |$)" | grep -vx "$$" || true; }  # the job's live processes
now() { date +%s.%N; }
wait_progress() {  # wait_progress PORT JOB N: until N problems are done (60 s at most)
  for _ in $(seq 600); do
    local v
    v=$(redis-cli -p "$1" get "ccltune:v1:job:$2:0:progress" 2>/dev/null | cut -d' ' -f1)
    [[ ${v:-0} =~ ^[0-9]+$ ]] && ((${v:-0} >= $3)) && return 0
    sleep 0.1
  done
  return 1
}
# A job long enough to be struck mid-tune: 14 sizes of bf16 all-reduce.
tune_args=(tune --backend "${BACKEND:-nccl}" --ranks "$GPUS" --op allReduce --dtypes bf16 --sizes 1KiB:8MiB:2)

# start_job NAME JOB: a redis-server of its own, then tune on it until 2 problems are done.
# Sets port, redis (its pid), tune (tune's pid).
start_job() {
  port=$(free_port)
  redis-server --port "$port" --save '' --appendonly no >"$work/$1.redis.log" 2>&1 &
  redis=$!
  sleep 0.5
  ccltune "${tune_args[@]}" --job-id "$2" --redis "redis://127.0.0.1:$port/0" >"$work/$1.log" 2>&1 &
  tune=$!
  wait_progress "$port" "$2" 2 || fail "$1: no progress"
}

# end_job NAME JOB WHAT: waits for tune (t0: the fault's time), prints what it took and what is left.
end_job() {
  wait "$tune"
  rc=$?
  echo "$1: exit $rc $(awk "BEGIN {printf \"%.1f\", $(now) - $t0}") s after $3; $(procs_of "$2" | wc -l) processes left"
  tail -1 "$work/$1.log"
}

case_redis_lost() {
  start_job redis-lost gpu-lost
  kill -9 "$redis"
  t0=$(now)
  end_job redis-lost gpu-lost "Redis was killed"
  [[ $rc == 1 ]] || fail "redis-lost: exit $rc"
  tail -1 "$work/redis-lost.log" | grep -q "lost the Redis cache at redis://127.0.0.1:$port/0" || fail "redis-lost: Redis not named"
}

case_sigterm() {
  start_job sigterm gpu-term
  kill -TERM "$tune"
  t0=$(now)
  end_job sigterm gpu-term SIGTERM
  sleep 5  # a rank living on would publish within this
  local results
  results=$(redis-cli -p "$port" --scan --pattern 'ccltune:v1:result:*' | wc -l)
  echo "sigterm: results in Redis: $results"
  [[ $rc == 143 ]] || fail "sigterm: exit $rc"
  [[ $(procs_of gpu-term | wc -l) == 0 ]] || fail "sigterm: processes left"
  [[ $results == 0 ]] || fail "sigterm: published"
  kill "$redis"
}

case_kill9() {
  local t0 server
  CCLTUNE_CACHE_DIR=$work/kill9-cache ccltune "${tune_args[@]}" --job-id gpu-nine >"$work/kill9.log" 2>&1 &
  local tune=$!
  for _ in $(seq 300); do (($(procs_of gpu-nine | wc -l) > GPUS)) && break; sleep 0.1; done
  sleep 3
  server=$(sed -n 's/^redis-server pid \([0-9]*\) .*/\1/p' "$work/kill9-cache/redis/lock")
  kill -9 "$tune"
  t0=$(now)
  for _ in $(seq 50); do
    [[ $(procs_of gpu-nine | wc -l) == 0 ]] && ! kill -0 "$server" 2>/dev/null && break
    sleep 0.1
  done
  echo "kill9: $(awk "BEGIN {printf \"%.1f\", $(now) - $t0}") s after kill -9: $(procs_of gpu-nine | wc -l) ranks left; redis-server $(kill -0 "$server" 2>/dev/null && echo alive || echo gone)"
  [[ $(procs_of gpu-nine | wc -l) == 0 ]] || fail "kill9: ranks left"
  ! kill -0 "$server" 2>/dev/null || fail "kill9: redis-server left"
}

command -v nvidia-smi >/dev/null && nvidia-smi -L | head -"$GPUS"
case_redis_lost
case_sigterm
case_kill9
[[ $fails == 0 ]] && echo "PASSED: cancel and Redis loss on $GPUS GPUs" || { echo "FAILED: $fails"; exit 1; }
