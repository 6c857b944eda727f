#!/usr/bin/env bash
# Builds NCCL's own example tuner plugin (plugins/tuner/example of an NCCL checkout, outside
# this repository) as its Makefile does, for plugin_example_csv_test:
#   build_nccl_example_tuner.sh NCCL_SOURCE_DIR OUT.so
#   CCLTUNE_NCCL_EXAMPLE_TUNER=OUT.so ctest -R plugin_example_csv_test
set -euo pipefail
src=$1/plugins/tuner/example
[ -f "$src/plugin.c" ] || { echo "no $src/plugin.c (give an NVIDIA/nccl checkout)"; exit 2; }
cc -I"$src/nccl" -fPIC -shared -o "$2" -Wl,-soname,libnccl-tuner-example.so "$src/plugin.c"
echo "built $2"
