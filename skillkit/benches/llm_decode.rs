//! Decoding a recorded-format Anthropic SSE answer into universal events:
//! SSE framing, JSON, and the Streamable conversion, in MB/s, through the
//! public API (`Anthropic::replay`, the decoding a live `stream` uses).
//!
//! The Python SDK's figure for the same bytes comes from
//! `bench/peers/anthropic_sdk_decode_bench.py` (see `bench/peers/README-llm.md`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use futures::executor::block_on;
use skillkit::llm::anthropic::Anthropic;
use skillkit::llm::sse::{Decoder, Frame, FromSse};
use skillkit::llm::{Accumulator, Event, LlmError, Streamable};

/// The events of `body` read in pieces of `chunk` bytes.
fn decode(body: &'static [u8], chunk: usize) -> usize {
    block_on(Anthropic::replay(body.chunks(chunk)).count())
}

/// A vendor event that is never made: decoding with it is the SSE framing
/// alone (each frame's data is looked at and dropped).
enum FramingOnly {}

impl FromSse for FramingOnly {
    fn from_sse(frame: Frame<'_>) -> Result<Option<Self>, LlmError> {
        black_box(frame.data.len());
        Ok(None)
    }
}

#[derive(Default)]
struct Nothing;

impl Accumulator for Nothing {
    fn finish(&mut self, _: &mut Vec<Event>) {}
}

impl Streamable for FramingOnly {
    type Accumulator = Nothing;
    fn stream(self, _: &mut Nothing, _: &mut Vec<Event>) {
        match self {}
    }
}

fn framing(body: &[u8], chunk: usize) -> usize {
    let mut decoder = Decoder::<FramingOnly>::new();
    let mut events = Vec::new();
    for piece in body.chunks(chunk) {
        decoder.feed(piece, &mut events);
    }
    decoder.finish(&mut events);
    events.len()
}

fn bench(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/llm/anthropic/bench_long.sse"
    );
    let body = std::fs::read(path).expect("run bench/peers/make_anthropic_bench_fixture.py");
    let body: &'static [u8] = body.leak();
    // The answer must decode completely, or the figure means nothing.
    let events: Vec<Event> = block_on(Anthropic::replay([body]).collect());
    assert!(
        matches!(events.last(), Some(Event::Done { .. })),
        "the bench fixture must decode to Done"
    );

    let mut group = c.benchmark_group("llm_decode");
    group.throughput(Throughput::Bytes(body.len() as u64));
    // Network-sized reads (a TCP segment), and one 64 KiB read at a time.
    for chunk in [1460, 65536] {
        group.bench_function(format!("anthropic_sse_{chunk}b_chunks"), |b| {
            b.iter(|| decode(black_box(body), chunk))
        });
    }
    // The SSE framing alone, to see what the JSON and conversion cost on top.
    group.bench_function("sse_framing_only_1460b_chunks", |b| {
        b.iter(|| framing(black_box(body), 1460))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
