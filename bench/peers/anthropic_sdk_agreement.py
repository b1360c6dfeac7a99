#!/usr/bin/env python3
"""Dump what the official Anthropic Python SDK accumulates from streamed answers.

For each `--case NAME=BASE_URL`, points `anthropic.Anthropic(base_url=...)` at
a local fixture server (the Rust test `tests/tests/llm_sdk_agreement.rs` starts one
per fixture), streams a request with `client.messages.stream(...)`, and takes
`get_final_message()`. Prints one JSON object: NAME -> either

    {"text": ..., "tool_calls": [{"id", "name", "input"}], "stop_reason": ...,
     "usage": {"input_tokens", "output_tokens", "cache_creation_input_tokens",
               "cache_read_input_tokens"}}

or {"error": "<exception class>", "message": "..."} when the SDK raised.

Run `bench/peers/setup.sh` first to install the pinned SDK.
"""

import argparse
import json
import sys

import anthropic


def accumulate(base_url: str) -> dict:
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-agreement-test", max_retries=0)
    try:
        with client.messages.stream(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Hi"}],
        ) as stream:
            message = stream.get_final_message()
    except Exception as error:  # the SDK's verdict is what we compare
        return {"error": type(error).__name__, "message": str(error)}
    usage = message.usage
    return {
        "text": "".join(block.text for block in message.content if block.type == "text"),
        "tool_calls": [
            {"id": block.id, "name": block.name, "input": block.input}
            for block in message.content
            if block.type == "tool_use"
        ],
        "stop_reason": message.stop_reason,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens or 0,
            "cache_read_input_tokens": usage.cache_read_input_tokens or 0,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[], metavar="NAME=BASE_URL")
    args = parser.parse_args()
    results = {}
    for case in args.case:
        name, _, base_url = case.partition("=")
        results[name] = accumulate(base_url)
    json.dump(results, sys.stdout, ensure_ascii=False, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
