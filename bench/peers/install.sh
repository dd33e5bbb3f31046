#!/bin/sh
# Creates the venv for bench/peers/run.py with pinned versions of the field's
# near-duplicate tools (see docs/peers.md). Needs PyPI; nothing else here does.
set -eu
VENV=${WINNOW_PEERS_VENV:-$HOME/.cache/winnow/peers-venv}
PY=${PYTHON:-python3}
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q \
	datasketch==2.0.0 \
	rensa==0.5.0 \
	text-dedup==0.4.0 \
	datatrove==0.10.1 \
	spacy==3.8.18 tokenizers==0.23.3 orjson==3.13.0 xxhash==3.5.0
# datatrove's MinHash stage 1 needs spacy (its English word tokenizer, a blank
# pipeline: no model download), tokenizers, orjson (JsonlReader) and xxhash<4
# (xxhash 4 no longer hashes str; datatrove's "processing" extra pins <4).
echo "$VENV"
