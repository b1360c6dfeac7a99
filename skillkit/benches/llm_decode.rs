//! Decoding a recorded-format Anthropic SSE answer into universal events:
//! SSE framing, JSON, and the Streamable conversion, in MB/s.
//!
//! The Python SDK's figure for the same bytes comes from
//! `bench/peers/anthropic_sdk_decode_bench.py` (see `bench/peers/README-llm.md`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skillkit::llm::Event;
use skillkit::llm::anthropic::Decoder;
use skillkit::llm::sse::SseDecoder;

fn decode(body: &[u8], chunk: usize) -> usize {
    let mut decoder = Decoder::new();
    let mut events: Vec<Event> = Vec::with_capacity(1024);
    let mut count = 0;
    for piece in body.chunks(chunk) {
        decoder.feed(piece, &mut events);
        count += events.len();
        events.clear();
    }
    decoder.finish(&mut events);
    count + events.len()
}

fn bench(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/llm/anthropic/bench_long.sse"
    );
    let body = std::fs::read(path).expect("run bench/peers/make_anthropic_bench_fixture.py");
    // The answer must decode completely, or the figure means nothing.
    let mut decoder = Decoder::new();
    let mut events = Vec::new();
    decoder.feed(&body, &mut events);
    decoder.finish(&mut events);
    assert!(
        matches!(events.last(), Some(Event::Done { .. })),
        "the bench fixture must decode to Done"
    );

    let mut group = c.benchmark_group("llm_decode");
    group.throughput(Throughput::Bytes(body.len() as u64));
    // Network-sized reads (a TCP segment), and one 64 KiB read at a time.
    for chunk in [1460, 65536] {
        group.bench_function(format!("anthropic_sse_{chunk}b_chunks"), |b| {
            b.iter(|| decode(black_box(&body), chunk))
        });
    }
    // The SSE framing alone, to see what the JSON and conversion cost on top.
    group.bench_function("sse_framing_only_1460b_chunks", |b| {
        b.iter(|| {
            let mut sse = SseDecoder::new();
            let mut frames = 0usize;
            for piece in black_box(&body).chunks(1460) {
                sse.feed(piece, |frame| frames += frame.data.len());
            }
            frames
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
