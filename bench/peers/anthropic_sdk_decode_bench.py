#!/usr/bin/env python3
"""How fast the official Anthropic Python SDK turns a streamed answer into its
accumulated final message, in process (no network): the peer figure of the
Rust bench `cargo bench -p skill-kit --bench llm_decode`.

The SDK's HTTP client gets an in-memory transport (`httpx2.MockTransport`) that
answers with the bytes of tests/fixtures/llm/anthropic/bench_long.sse, in
1460-byte pieces like the Rust bench's network-sized case. Each run does
`client.messages.stream(...)` then `get_final_message()`: SSE parsing, event
models and snapshot accumulation, which is what SkillKit's decoder replaces.

Prints MB/s (best and median of the runs), and the ratio to the Rust figure
when criterion's estimates exist under target/criterion.
"""

import argparse
import json
import pathlib
import statistics
import sys
import time

import anthropic
import httpx2

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/llm/anthropic/bench_long.sse"
RUST_ESTIMATES = ROOT / "target/criterion/llm_decode/anthropic_sse_1460b_chunks/new/estimates.json"
CHUNK = 1460


def client_for(body: bytes) -> anthropic.Anthropic:
    def handler(request):
        pieces = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               stream=httpx2.ByteStream(b"") if not pieces else _Pieces(pieces))
    return anthropic.Anthropic(api_key="sk-bench", base_url="http://bench.invalid",
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
                               max_retries=0)


class _Pieces(httpx2.SyncByteStream):
    def __init__(self, pieces):
        self.pieces = pieces

    def __iter__(self):
        yield from self.pieces


def once(client) -> None:
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=16000,
                                messages=[{"role": "user", "content": "Hi"}]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use" and len(message.content) == 4, message.stop_reason


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    body = FIXTURE.read_bytes()
    client = client_for(body)
    once(client)  # warm up imports and caches
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        once(client)
        times.append(time.perf_counter() - start)
    mb = len(body) / 1e6
    result = {
        "sdk": f"anthropic {anthropic.__version__}",
        "bytes": len(body),
        "runs": args.runs,
        "python_best_mb_s": round(mb / min(times), 2),
        "python_median_mb_s": round(mb / statistics.median(times), 2),
    }
    if RUST_ESTIMATES.exists():
        estimates = json.loads(RUST_ESTIMATES.read_text())
        rust_seconds = estimates["mean"]["point_estimate"] / 1e9
        result["rust_mean_mb_s"] = round(mb / rust_seconds, 1)
        result["ratio_rust_over_python_best"] = round(result["rust_mean_mb_s"] / result["python_best_mb_s"], 1)
    else:
        result["rust"] = "no criterion estimates yet: run cargo bench -p skill-kit --bench llm_decode"
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
