#!/usr/bin/env bash
# Builds every libFuzzer target (clang, AddressSanitizer + UndefinedBehaviorSanitizer) and runs
# each for SECONDS, from its committed corpus (tests/fuzz/<target>_corpus and the real files
# named below); prints per target the executions, the coverage and what was found.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (default 60 seconds per target, every target)
#
# An input that crashes, leaks, trips a sanitizer, takes more than 1 s (-timeout=1) or more than
# 2 GB (-rss_limit_mb=2048) fails the run; libFuzzer saves it as FUZZ_DIR/<target>/crash-* (or
# timeout-*, leak-*, oom-*). New inputs the fuzzer finds go to FUZZ_DIR/<target>/corpus (outside
# the tree: copy the interesting ones into tests/fuzz/<target>_corpus, which ctest replays).
# Knobs (environment): FUZZ_DIR (build-fuzz), CXX (clang++-14), TORCH_INCLUDE (the venv's
# torch/include: error.cpp reads the LibTorch version from its headers, nothing links LibTorch).
# Some readers share their file with code that needs LibTorch: those targets are linked with lld,
# which drops the functions no harness reaches (DROP_UNUSED below).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
shift || true
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
CXX=${CXX:-clang++-14}

if ! command -v "$CXX" >/dev/null || ! command -v ld.lld-14 >/dev/null ||
   ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  echo "[fuzz] installing clang-14, lld-14 and libclang-rt-14-dev (libFuzzer and the sanitizers)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 lld-14 libclang-rt-14-dev >/dev/null
fi
VENV=${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}
TORCH_INCLUDE=${TORCH_INCLUDE:-$(ls -d "$VENV"/lib/python3*/site-packages/torch/include 2>/dev/null | head -1)}
[ -d "$TORCH_INCLUDE" ] || { echo "[fuzz] no LibTorch headers at '$TORCH_INCLUDE': run scripts/setup.sh first" >&2; exit 1; }
# LibTorch's include folder holds fmt 12, which would shadow the fmt Debian's spdlog was built with:
# a folder holding only the system's fmt comes first (as CMake's shardkit-fmt-shim does).
FMT_SHIM="$FUZZ_DIR/fmt-shim"
mkdir -p "$FMT_SHIM"
[ -e "$FMT_SHIM/fmt" ] || ln -sfn /usr/include/fmt "$FMT_SHIM/fmt"
FLAGS=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Icore/include -Icore/src -isystem "$FMT_SHIM"
       -isystem "$TORCH_INCLUDE" -isystem "$TORCH_INCLUDE/torch/csrc/api/include")

# Each target: its sources and libraries, its seed folders, the largest input.
declare -A SOURCES LIBS SEEDS MAXLEN
SOURCES[safetensors]="core/src/safetensors/file.cpp core/src/safetensors/header_parser.cpp core/src/safetensors/dtype.cpp
  core/src/safetensors/utf8.cpp core/src/safetensors/serialize.cpp"
LIBS[safetensors]="-lboost_json"
SEEDS[safetensors]="tests/data/act-reference tests/data/lerobot-tiny-v3"
MAXLEN[safetensors]=65536
# Every piece of the DCP machinery but the folder reader and writer (those need LibTorch).
SOURCES[dcp_metadata]="-Icheckpoint_formats/dcp_common/include $(ls checkpoint_formats/dcp_common/*.cpp |
  grep -vE '/(folder_load|folder_save|folder_plan|item_reader|object_item)\.cpp$' | tr '\n' ' ')"
SEEDS[dcp_metadata]="tests/fixtures/dcp"
MAXLEN[dcp_metadata]=16384
SOURCES[chat_template]="-Iplugins/datasets/text $(ls plugins/datasets/text/chat_template/*.cpp | tr '\n' ' ')"
LIBS[chat_template]="-lboost_json"
MAXLEN[chat_template]=8192
SOURCES[tokenizer_json]="-Iplugins/datasets/text $(ls plugins/datasets/text/tokenizer/*.cpp | tr '\n' ' ')
  core/src/common/files.cpp core/src/common/publish_file.cpp"
LIBS[tokenizer_json]="-lpcre2-8 -lutf8proc -lboost_json"
MAXLEN[tokenizer_json]=16384
SOURCES[config_files]="core/src/config/config_file.cpp core/src/config/config_yaml.cpp core/src/config/json_reader.cpp
  core/src/config/suggest.cpp core/src/common/comma_list.cpp"
# toml++ is compiled in, header-only, with its internal assertions off (-DNDEBUG), as in the
# release library the project links.
LIBS[config_files]="-DNDEBUG -lyaml-cpp -lboost_json"
MAXLEN[config_files]=8192
SOURCES[lerobot_info]="-Iplugins/datasets/lerobot plugins/datasets/lerobot/dataset_info.cpp plugins/datasets/lerobot/json_file.cpp
  core/src/common/files.cpp core/src/common/publish_file.cpp"
LIBS[lerobot_info]="-lboost_json"
MAXLEN[lerobot_info]=8192
# The readers below share their files with code that needs LibTorch (tensors, the communicator):
# each function gets a section of its own and lld drops those the harness never reaches, so no
# LibTorch symbol is needed. A harness that reaches one fails the link ("undefined symbol").
DROP_UNUSED="-ffunction-sections -fdata-sections -fuse-ld=lld-14 -Wl,--gc-sections"
# stats.json before its tensors are made (parse_stats; read_stats makes them).
SOURCES[lerobot_stats]="-Iplugins/datasets/lerobot plugins/datasets/lerobot/stats_file.cpp
  plugins/datasets/lerobot/json_file.cpp"
LIBS[lerobot_stats]="$DROP_UNUSED -lboost_json"
MAXLEN[lerobot_stats]=16384
# The JSON files of a checkpoint's training_state/ that a resume reads.
SOURCES[training_state]="-Iapps/shardkit-train/src $(printf 'apps/shardkit-train/src/%s.cpp ' checkpoint_io log_window \
  loss_scaler ema_state_file base_model_record) core/src/common/files.cpp core/src/common/publish_file.cpp
  core/src/common/json_text.cpp"
LIBS[training_state]="$DROP_UNUSED -lboost_json"
MAXLEN[training_state]=8192
# A Hugging Face config.json through --policy.path into the Llama-layout families' options, and a
# PEFT adapter_config.json; the configuration machinery as config_files builds it.
SOURCES[hf_config]="-Iapps/shardkit-train/src -Ipolicies/llama $(printf 'apps/shardkit-train/src/%s.cpp ' \
  saved_policy_config adapter_start config_provenance) policies/llama/llama_config.cpp policies/llama/hf_config_json.cpp
  $(ls core/src/config/*.cpp | tr '\n' ' ') core/src/common/files.cpp core/src/common/publish_file.cpp
  core/src/common/comma_list.cpp core/src/common/json_text.cpp core/src/safetensors/utf8.cpp
  core/src/safetensors/serialize.cpp"
LIBS[hf_config]="$DROP_UNUSED -DNDEBUG -lyaml-cpp -lboost_json"
MAXLEN[hf_config]=8192
# What shardkit-run reads that its workers wrote: their error files and their output.
SOURCES[launcher_messages]="-Iapps/shardkit-run apps/shardkit-run/error_file.cpp apps/shardkit-run/rank_output.cpp"
LIBS[launcher_messages]="-lboost_json"
MAXLEN[launcher_messages]=8192
# Dataset files read through Arrow/Parquet: the pyarrow wheel's prebuilt libraries (no sanitizers or
# coverage inside them: a crash in the decoder is caught, but only shardkit's code guides the fuzzer).
# Arrow's default memory pool is set to the system's (ARROW_DEFAULT_MEMORY_POOL below), so that
# AddressSanitizer and the RSS limit see what the decoder allocates.
PYARROW=$(ls -d "$VENV"/lib/python3*/site-packages/pyarrow 2>/dev/null | head -1 || true)
TORCH_LIB=$(dirname "$TORCH_INCLUDE")/lib
ARROW_LIBS="-isystem $PYARROW/include $(ls "$PYARROW"/libparquet.so.[0-9]* "$PYARROW"/libarrow.so.[0-9]* 2>/dev/null |
  tr '\n' ' ' || true) -Wl,-rpath,$PYARROW"
NEEDS_ARROW=" text_documents lerobot_parquet "
# A text dataset's .jsonl, .csv, .txt and .parquet files (--dataset.path).
SOURCES[text_documents]="-Iplugins/datasets/text plugins/datasets/text/documents.cpp plugins/datasets/text/parquet_documents.cpp
  plugins/datasets/text/python_literal.cpp core/src/common/files.cpp core/src/common/publish_file.cpp"
LIBS[text_documents]="$ARROW_LIBS -lboost_json"
SEEDS[text_documents]="tests/fuzz/text_documents_corpus"
MAXLEN[text_documents]=16384
# A LeRobot dataset's tasks, episodes and data tables through the plugin's readers; the frames are
# LibTorch tensors, so this target links LibTorch (uninstrumented, as Arrow).
SOURCES[lerobot_parquet]="-Iplugins/datasets/lerobot -DSHARDKIT_TINY_DATASETS=\"$PWD/tests/data/lerobot-tiny-v3\"
  $(printf 'plugins/datasets/lerobot/%s.cpp ' parquet_file episode_table task_table frame_table dataset_info json_file)
  core/src/common/files.cpp core/src/common/publish_file.cpp"
LIBS[lerobot_parquet]="$ARROW_LIBS -L$TORCH_LIB -ltorch_cpu -lc10 -Wl,-rpath,$TORCH_LIB -lboost_json"
SEEDS[lerobot_parquet]="tests/data/lerobot-tiny-v3"
MAXLEN[lerobot_parquet]=262144
ALL=(safetensors dcp_metadata chat_template tokenizer_json config_files lerobot_info lerobot_stats training_state
     hf_config launcher_messages text_documents lerobot_parquet)

# Harnesses that hand readers a path write each input to a file under TMPDIR: in memory
# (/dev/shm) where the machine has it, so that a disk's file creation does not set the pace.
SCRATCH=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && SCRATCH=/dev/shm

TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
mkdir -p "$FUZZ_DIR"
failed=0
report="| target | seconds | executions | exec/s | coverage (edges) | features | corpus | result |
|---|---|---|---|---|---|---|---|"
for t in "${TARGETS[@]}"; do
  [ -n "${SOURCES[$t]:-}" ] || { echo "[fuzz] unknown target '$t' (targets: ${ALL[*]})" >&2; exit 2; }
  if [ -z "$PYARROW" ] && [[ "$NEEDS_ARROW" == *" $t "* ]]; then
    echo "[fuzz] skipping $t: no pyarrow (Arrow's C++ SDK) in $VENV; scripts/setup.sh installs it" >&2
    report+=$'\n'"| $t | | | | | | | skipped: no pyarrow in the venv |"
    continue
  fi
  dir="$FUZZ_DIR/$t"
  mkdir -p "$dir/corpus"
  echo "[fuzz] building $t"
  # shellcheck disable=SC2086
  if ! "$CXX" "${FLAGS[@]}" tests/fuzz/${t}_fuzz.cpp ${SOURCES[$t]} core/src/common/error.cpp ${LIBS[$t]:-} \
      -o "$dir/$t" > "$dir/build.log" 2>&1; then
    tail -20 "$dir/build.log"
    report+=$'\n'"| $t | | | | | | | FAILED: does not build (see $dir/build.log) |"
    failed=1
    continue
  fi
  echo "[fuzz] running $t for $SECS s"
  seeds=(tests/fuzz/${t}_corpus)
  for s in ${SEEDS[$t]:-}; do seeds+=("$s"); done
  result=ok
  # -seed_inputs reads the committed corpus and real files without writing into them.
  (cd "$dir" && TMPDIR="$SCRATCH" ARROW_DEFAULT_MEMORY_POOL=system ./"$t" -max_total_time="$SECS" -timeout=1 -rss_limit_mb=2048 -max_len="${MAXLEN[$t]}" \
      -print_final_stats=1 -artifact_prefix=./ corpus $(printf '../../%s ' "${seeds[@]}")) > "$dir/fuzz.log" 2>&1 ||
    { result="FAILED: $(ls "$dir" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -1)"; failed=1; }
  runs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$dir/fuzz.log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec:/ {print $2}' "$dir/fuzz.log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$dir/fuzz.log" | tail -1 || true)  # none: failed at once
  report+=$'\n'"| $t | $SECS | ${runs:-?} | ${rate:-?} | $(echo "$cov" | awk '{print $2}') | $(echo "$cov" | awk '{print $4}') | $(echo "$cov" | awk '{print $6}') | $result |"
  [ "$result" = ok ] || tail -30 "$dir/fuzz.log"
done
echo "$report"
exit $failed
