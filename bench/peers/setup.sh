#!/usr/bin/env bash
# Creates bench/peers/.venv with the Python peers the comparison scripts use.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.venv"
"$here/.venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
