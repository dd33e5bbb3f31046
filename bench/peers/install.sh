#!/bin/sh
# install.sh [VENV]: a virtualenv with the peer tools of peers.py, from
# PyPI through pip (default VENV: bench/peers/.venv). Versions pinned to
# those measured in docs/performance.md.
set -eu
venv=${1:-$(dirname "$0")/.venv}
python3 -m venv "$venv"
"$venv/bin/pip" install -q datasketch==2.0.0 rensa==0.5.0
echo "installed into $venv: run $venv/bin/python $(dirname "$0")/peers.py LLVM_DOCS_DIR"
