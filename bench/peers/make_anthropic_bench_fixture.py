#!/usr/bin/env python3
"""Writes tests/fixtures/llm/anthropic/bench_long.sse: one long streamed
Anthropic answer in the exact wire format, for the decode benchmarks (Rust
`skillkit/benches/llm_decode.rs` and `anthropic_sdk_decode_bench.py`).

The shape follows a real agent turn: extended thinking, a long text answer in
small deltas (with non-ASCII text and JSON escapes), two tool calls whose
input arrives in fragments, pings, then the stop reason and usage.
Deterministic (fixed seed), so the file only changes when this script does.
"""

import json
import pathlib
import random

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests/fixtures/llm/anthropic/bench_long.sse"
WORDS = ("the skill reads files from the kit and returns their text to the agent, which then "
         "decides what to do next; résumé naïve café 😀 “quotes” \"escaped\" tab\t newline\n "
         "streaming tokens arrive in small pieces over the network").split(" ")


def event(name, obj):
    return f"event: {name}\ndata: {json.dumps(obj, separators=(',', ':'), ensure_ascii=False)}\n\n"


def delta(index, kind, field, value):
    return event("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": {"type": kind, field: value}})


def pieces(rng, count):
    for _ in range(count):
        yield " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + " "


def main():
    rng = random.Random(5)
    out = [event("message_start", {"type": "message_start", "message": {
        "id": "msg_01BenchLong", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-6", "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 2048, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 1024, "output_tokens": 1}}})]
    out.append(event("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
    out += [delta(0, "thinking_delta", "thinking", p) for p in pieces(rng, 600)]
    out.append(delta(0, "signature_delta", "signature", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"))
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(event("content_block_start", {"type": "content_block_start", "index": 1,
                                             "content_block": {"type": "text", "text": ""}}))
    for n, p in enumerate(pieces(rng, 5000)):
        out.append(delta(1, "text_delta", "text", p))
        if n % 100 == 99:
            out.append('event: ping\ndata: {"type": "ping"}\n\n')
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 1}))
    for index, tool_id in ((2, "toolu_01BenchA"), (3, "toolu_01BenchB")):
        out.append(event("content_block_start", {"type": "content_block_start", "index": index,
                                                 "content_block": {"type": "tool_use", "id": tool_id,
                                                                   "name": "write_file", "input": {}}}))
        body = json.dumps({"path": f"notes/{tool_id}.md", "content": "".join(pieces(rng, 300))})
        cuts = sorted(rng.sample(range(1, len(body)), 250))
        for a, b in zip([0] + cuts, cuts + [len(body)]):
            out.append(delta(index, "input_json_delta", "partial_json", body[a:b]))
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(event("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                       "usage": {"output_tokens": 9000}}))
    out.append(event("message_stop", {"type": "message_stop"}))
    OUT.write_text("".join(out), encoding="utf-8", newline="")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
