#!/usr/bin/env bash
# Creates bench/peers/.venv with the Python peers the comparison scripts and
# the agreement tests use (tests/tests/llm_sdk_agreement.rs and
# skillkit-cli/tests/serve_python.rs, tests/tests/mcp_provider.rs and
# skillkit-cli/tests/mcp_skills.rs (skills_server.py) find that interpreter;
# CI runs this script, then the tests with SKILLKIT_REQUIRE_PEERS=1), installs
# the npm peers into bench/peers/node_modules (server-everything, the official
# TypeScript SDK's example MCP server, for tests/tests/agent_mcp.rs; pinned
# here and in package-lock.json), then installs PostgreSQL where it can
# (bench/setup-postgres.sh) for the SQL provider's PostgreSQL tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
    "$python" -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$here/.venv/bin/python" -c 'import anthropic, mcp.client.stdio; from importlib.metadata import version; print("bench/peers ready: anthropic", anthropic.__version__, "mcp", version("mcp"))'
# The npm peers (needs node and npm), pinned here and in package-lock.json:
# server-everything (the official TypeScript SDK's example server, for
# tests/tests/agent_mcp.rs) and the official TypeScript MCP SDK (its client,
# for skillkit-cli/tests/serve_typescript.rs, driven by mcp_client.mjs).
npm install --prefix "$here" --no-audit --no-fund --save-exact --loglevel=error \
    @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/sdk@1.32.2
test -x "$here/node_modules/.bin/mcp-server-everything"
node -e 'console.log("bench/peers ready: @modelcontextprotocol/sdk", require(process.argv[1]).version)' "$here/node_modules/@modelcontextprotocol/sdk/package.json"
# OpenSSH's ssh-keygen, for the test that signatures agree with it
# (skillkit-cli/tests/project.rs).
if ! command -v ssh-keygen >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client >/dev/null
    else
        echo "ssh-keygen not found: install openssh-client" >&2
    fi
fi
# PostgreSQL's programs, for the SQL provider's PostgreSQL tests.
"$here/../setup-postgres.sh"
