"""A skills server written with the official Python MCP SDK (mcp 2.x `MCPServer`,
FastMCP before 2.0) that knows nothing of the skills extension: every
ROOT/<skill>/SKILL.md is served as the resource skill://KIT/<skill>/SKILL.md,
read from disk at each resources/read, and each read is appended to
ROOT/reads.log. tests/tests/mcp_provider.rs starts it on stdio:

    python skills_server.py ROOT KIT
"""

import pathlib
import sys

from mcp.server.mcpserver import MCPServer

root = pathlib.Path(sys.argv[1])
kit = sys.argv[2]
server = MCPServer("python-skills")


def serve(path: pathlib.Path) -> None:
    uri = f"skill://{kit}/{path.parent.name}/SKILL.md"

    @server.resource(uri, name=path.parent.name, mime_type="text/markdown")
    def read() -> str:
        with open(root / "reads.log", "a", encoding="utf-8") as log:
            log.write(uri + "\n")
        return path.read_text(encoding="utf-8")


for skill in sorted(root.glob("*/SKILL.md")):
    serve(skill)

server.run()
