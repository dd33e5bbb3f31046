#!/bin/sh
# install.sh [VENV]: a virtualenv with the peer tools of peers.py, from
# PyPI through pip (default VENV: bench/peers/.venv). Versions pinned to
# those measured in docs/performance.md.
set -eu
venv=${1:-$(dirname "$0")/.venv}
python3 -m venv "$venv"
"$venv/bin/pip" install -q datasketch==2.0.0 rensa==0.5.0 datatrove==0.10.1
# datatrove's MinHash steps import these without declaring them; xxhash
# 3.4 because later ones refuse the str datatrove 0.10.1 hashes.
"$venv/bin/pip" install -q regex tokenizers orjson spacy xxhash==3.4.1
echo "installed into $venv: run $venv/bin/python $(dirname "$0")/peers.py LLVM_DOCS_DIR"
