"""The official MCP Python SDK's 2.x `Client`, in its default mode, against a
server started `--runs` times over stdio (`--stdio COMMAND ARG...`): each time
it opens `subscriptions/listen` as its first request, and only once that is
acknowledged writes a new `SKILL.md` under `--kit` (a skill of its own per
run), then waits up to `--wait` seconds for `notifications/resources/list_changed`.
Prints one JSON object: how many runs, how many missed the change, and the
slowest wait, for skillkit-cli/tests/serve_python.rs to check.
"""

import argparse
import asyncio
import json
import os
import sys
import time

from mcp import StdioServerParameters
from mcp.client.client import Client


async def one(args, run):
    command, *rest = args.stdio
    async with Client(StdioServerParameters(command=command, args=rest)) as client:
        async with client.listen(resources_list_changed=True) as sub:
            folder = os.path.join(args.kit, "skills", f"new-{run}")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "SKILL.md"), "w") as f:
                f.write(f"---\nname: new-{run}\ndescription: Added in run {run}.\n---\nNew.\n")
            start = time.monotonic()

            async def take():
                async for event in sub:
                    if type(event).__name__ == "ResourcesListChanged":
                        return True

            try:
                await asyncio.wait_for(take(), args.wait)
                return time.monotonic() - start
            except asyncio.TimeoutError:
                return None


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kit", required=True)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--wait", type=float, default=15)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER, required=True)
    args = parser.parse_args()
    waits = [await one(args, run) for run in range(args.runs)]
    seen = [w for w in waits if w is not None]
    json.dump(
        {
            "runs": len(waits),
            "missed": len(waits) - len(seen),
            "slowest": max(seen) if seen else None,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    asyncio.run(main())
