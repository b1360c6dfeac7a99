#!/usr/bin/env bash
# Creates bench/peers/.venv with the Python peers the comparison scripts and
# the agreement tests use (tests/tests/llm_sdk_agreement.rs and
# skillkit-cli/tests/serve_python.rs find that interpreter;
# CI runs this script, then the tests with SKILLKIT_REQUIRE_PEERS=1), then
# installs PostgreSQL where it can (bench/setup-postgres.sh) for the SQL
# provider's PostgreSQL tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
    "$python" -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$here/.venv/bin/python" -c 'import anthropic, mcp.client.stdio; from importlib.metadata import version; print("bench/peers ready: anthropic", anthropic.__version__, "mcp", version("mcp"))'
# The official TypeScript MCP SDK, pinned, for skillkit-cli/tests/serve_typescript.rs
# (bench/peers/mcp_client.mjs drives it): into bench/peers/node_modules.
npm install --prefix "$here" --no-save --no-audit --no-fund --loglevel=error @modelcontextprotocol/sdk@1.32.2
node -e 'console.log("bench/peers ready: @modelcontextprotocol/sdk", require(process.argv[1]).version)' "$here/node_modules/@modelcontextprotocol/sdk/package.json"
# PostgreSQL's programs, for the SQL provider's PostgreSQL tests.
"$here/../setup-postgres.sh"
