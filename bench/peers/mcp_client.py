"""The official Python MCP SDK (PyPI `mcp`) as a client of `skillkit serve`.

Connects over stdio (`--stdio COMMAND ARG...`) or Streamable HTTP
(`--http URL`, with `Authorization: Bearer $SKILLKIT_MCP_TOKEN` when that is
set), lists the tools, prompts and resources, calls list_skills,
activate_skill and read_skill_file, gets a prompt, reads a resource, and
prints what it saw as one JSON object, for skillkit-cli/tests/serve_python.rs
to compare with what rmcp's client sees.
"""

import argparse
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text_of(result):
    return {
        "is_error": bool(result.is_error),
        "text": "".join(getattr(c, "text", "") for c in result.content),
    }


async def everything(session, args):
    await session.initialize()
    out = {}
    out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
    prompts, cursor = [], None
    while True:
        page = await session.list_prompts(params=_page(cursor))
        prompts += page.prompts
        cursor = page.next_cursor
        if not cursor:
            break
    out["prompts"] = [
        {
            "name": p.name,
            "description": p.description,
            "arguments": [a.name for a in (p.arguments or [])],
        }
        for p in prompts
    ]
    resources, cursor = [], None
    while True:
        page = await session.list_resources(params=_page(cursor))
        resources += page.resources
        cursor = page.next_cursor
        if not cursor:
            break
    out["resources"] = [r.uri if isinstance(r.uri, str) else str(r.uri) for r in resources]
    out["list_skills"] = json.loads(text_of(await session.call_tool("list_skills", {}))["text"])
    out["activate_skill"] = text_of(
        await session.call_tool("activate_skill", {"name": args.skill, "arguments": args.arguments})
    )
    out["read_skill_file"] = text_of(
        await session.call_tool("read_skill_file", {"name": args.skill, "path": args.file})
    )
    out["unknown_skill"] = text_of(await session.call_tool("activate_skill", {"name": "no:such"}))
    prompt = await session.get_prompt(args.skill, {"arguments": args.arguments})
    out["prompt"] = [m.content.text for m in prompt.messages]
    read = await session.read_resource(args.resource)
    out["resource"] = [getattr(c, "text", None) for c in read.contents]
    return out


def _page(cursor):
    from mcp import types

    return types.PaginatedRequestParams(cursor=cursor) if cursor else None


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    parser.add_argument("--skill", required=True)
    parser.add_argument("--arguments", default="")
    parser.add_argument("--file", required=True)
    parser.add_argument("--resource", required=True)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.http:
        token = os.environ.get("SKILLKIT_MCP_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(args.http, http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    out = await everything(session, args)
    else:
        command, *rest = args.stdio
        server = StdioServerParameters(command=command, args=rest)
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                out = await everything(session, args)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    asyncio.run(main())
