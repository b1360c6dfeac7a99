"""A small MCP server on stdio, written with the official Python SDK (PyPI
`mcp`, `MCPServer`), for the agent's MCP tool tests (tests/tests/agent_mcp.rs):
it counts the calls that reach it and the `tools/list` requests it answers,
and adds a tool on request, announcing it with
`notifications/tools/list_changed`.

Tools: `bump` (counts a call), `count` (says `bumps=N lists=M`), `add_tool`
(adds `fresh`, which answers `fresh!`, and notifies the client).
"""

import anyio

from mcp.server.mcpserver import Context, MCPServer


class Counting(MCPServer):
    lists = 0

    async def list_tools(self):
        Counting.lists += 1
        return await super().list_tools()


server = Counting("counting")
bumps = 0


@server.tool()
def bump() -> str:
    """Counts one call."""
    global bumps
    bumps += 1
    return f"bumped to {bumps}"


@server.tool()
def count() -> str:
    """Says how many calls of `bump` and `tools/list` requests reached the server."""
    return f"bumps={bumps} lists={Counting.lists}"


def fresh() -> str:
    """A tool added while the server runs."""
    return "fresh!"


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool `fresh` and tells the client the tool list changed."""
    server.add_tool(fresh)
    await ctx.session.send_tool_list_changed()
    # The notification goes out before this answer; the pause lets the
    # client handle it before the answer wakes the caller.
    await anyio.sleep(0.2)
    return "added fresh"


if __name__ == "__main__":
    server.run()
