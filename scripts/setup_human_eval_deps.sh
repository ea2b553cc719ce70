#!/usr/bin/env bash
# Dependencies of styleval's human-evaluation extra (src/styleval/human) and of its tests, on Debian 12.
# Idempotent: a second run only checks what is there. Run from anywhere; installs into the project's .venv.
#   Debian: postgresql (tests start a private server), chromium + chromium-driver (browser tests)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "setup_human_eval_deps.sh: $PY not found; run scripts/install.sh first" >&2; exit 1; }

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || need_apt+=(postgresql)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "setup_human_eval_deps.sh: please install Debian packages: ${need_apt[*]} (needs root);" \
         "the tests that need them are skipped meanwhile" >&2
  fi
fi

# The PyPI side (web stack, PostgreSQL driver, Selenium) is the package's `human` and `test` extras,
# installed by scripts/install.sh with `pip install -e .[all]`.
