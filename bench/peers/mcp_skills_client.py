"""The official Python MCP SDK's client (PyPI `mcp` 2.x, `mcp.client.Client`)
against `skillkit serve`, in its DEFAULT mode (it probes `server/discover` and
speaks revision 2026-07-28 when the server offers it), then in its legacy mode
(the `initialize` handshake).

Connects over stdio (`--stdio COMMAND ARG...`) or Streamable HTTP (`--http
URL`, with `Authorization: Bearer $SKILLKIT_MCP_TOKEN` when set). It calls the
skills extension's methods through the SDK's generic request (the SDK has no
typed skills API), reads every file of every skill's manifest and checks its
size and sha256 digest itself, collects the cache hints, sends the error
cases, opens a `subscriptions/listen` stream, edits `--edit PATH` (writing
`--edit-text`) and waits for the notifications the change brings. Prints what
it saw as one JSON object, for skillkit-cli/tests/serve_python.rs to check.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import sys
from typing import Any

import mcp_types
from mcp import StdioServerParameters, types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Anything(mcp_types.Result):
    """A result of any shape (the SDK has no skills types)."""

    model_config = {"extra": "allow"}


async def request(client, method, params=None):
    """`method` with `params` through the SDK's generic request: the result
    as a dict, or `{"error": code}`."""
    req = types.Request[dict[str, Any] | None, str](method=method, params=params)
    try:
        result = await client.session.send_request(req, Anything)
    except Exception as e:  # the SDK raises MCPError for an error response
        error = getattr(e, "error", None)
        return {"error": getattr(error, "code", None), "message": str(e)}
    return result.model_dump(by_alias=True, exclude_none=True)


async def modern(client, args):
    out = {"version": client.session.protocol_version}
    caps = client.session.server_capabilities
    extensions = (caps.model_dump(by_alias=True).get("extensions") or {}) if caps else {}
    out["extension"] = extensions.get("io.modelcontextprotocol/skills")

    skills, cursor = [], None
    while True:
        page = await request(client, "skills/list", {"cursor": cursor} if cursor else None)
        skills += page["skills"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    out["skills"] = skills
    # Every file of every manifest, read and checked here.
    verified = []
    for skill in skills:
        if skill["resources"] == "dynamic":
            continue
        for entry in skill["resources"]:
            read = await client.read_resource(entry["uri"])
            content = read.contents[0]
            if getattr(content, "text", None) is not None:
                data = content.text.encode("utf-8")
            else:
                data = base64.b64decode(content.blob)
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            verified.append(
                {"uri": entry["uri"], "ok": digest == entry["digest"] and len(data) == entry["size"]}
            )
    out["verified"] = verified
    got = await request(client, "skills/get", {"uri": skills[0]["uri"]})
    out["get_matches"] = got.get("skill") == skills[0]
    out["directory"] = [
        r["uri"]
        for r in (
            await request(
                client, "resources/directory/read", {"uri": skills[0]["uri"].removesuffix("/SKILL.md")}
            )
        )["resources"]
    ]
    hints = {}
    for method, params in [
        ("tools/list", None),
        ("prompts/list", None),
        ("resources/list", None),
        ("skills/list", None),
        ("skills/get", {"uri": skills[0]["uri"]}),
        ("resources/read", {"uri": skills[0]["uri"]}),
    ]:
        result = await request(client, method, params)
        hints[method] = [result.get("ttlMs"), result.get("cacheScope")]
    out["cache_hints"] = hints
    out["errors"] = {
        "unknown_skill": (await request(client, "skills/get", {"uri": "skill://no/such/SKILL.md"}))["error"],
        "no_uri": (await request(client, "skills/get", {}))["error"],
        "bogus_cursor": (await request(client, "skills/list", {"cursor": "bogus"}))["error"],
        "unknown_method": (await request(client, "skills/frobnicate", {}))["error"],
    }
    out["prompts"] = sorted(p.name for p in (await client.list_prompts()).prompts)

    # subscriptions/listen: the change made while connected reaches the client.
    async with client.listen(
        tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
    ) as sub:
        out["honored"] = sub.honored.model_dump(by_alias=True, exclude_none=True)
        with open(args.edit, "w") as f:
            f.write(args.edit_text)
        events = set()

        async def take():
            async for event in sub:
                events.add(type(event).__name__)
                if {"PromptsListChanged", "ResourcesListChanged"} <= events:
                    return

        try:
            await asyncio.wait_for(take(), 120)
        except asyncio.TimeoutError:
            pass
        out["events"] = sorted(events)
    return out


async def legacy(client):
    skills = await request(client, "skills/list")
    return {
        "version": client.session.protocol_version,
        "skills": [s["uri"] for s in skills["skills"]],
        "tools": sorted(t.name for t in (await client.list_tools()).tools),
        "unknown_method": (await request(client, "skills/frobnicate", {}))["error"],
    }


def server(args, http):
    if args.http:
        return streamable_http_client(args.http, http_client=http)
    command, *rest = args.stdio
    return StdioServerParameters(command=command, args=rest)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    parser.add_argument("--edit", required=True)
    parser.add_argument("--edit-text", required=True)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    token = os.environ.get("SKILLKIT_MCP_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    out = {}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(server(args, http)) as client:
            out["default"] = await modern(client, args)
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(server(args, http), mode="legacy") as client:
            out["legacy"] = await legacy(client)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    asyncio.run(main())
