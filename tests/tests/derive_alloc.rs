//! `list_kits` on an embedded kit copies no skill text: the bytes it allocates
//! do not depend on how long the skills are.
//!
//! A counting global allocator measures the bytes allocated by this thread
//! while `list_kits` runs, for two kits of the same shape: one with one-line
//! bodies, one with 30 KB bodies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use skillkit::{Kit, KitProvider, ToolExecution, ToolOutcome};

struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.with(|n| n.set(n.get() + layout.size()));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Kit)]
#[kit(path = "fixtures/kits/small", name = "kit")]
struct Small;

#[derive(Kit)]
#[kit(path = "fixtures/kits/large", name = "kit")]
struct Large;

impl skillkit::EmbeddedKit for Small {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok("small")
    }
}

impl skillkit::EmbeddedKit for Large {
    async fn execute(&self, _: ToolExecution) -> ToolOutcome {
        ToolOutcome::ok("large")
    }
}

/// Runs `future` to completion on this thread (it never waits on anything).
fn run<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// The bytes allocated while listing the kits of `provider`.
fn bytes_allocated_by_list_kits(provider: &impl KitProvider) -> usize {
    let before = ALLOCATED.with(Cell::get);
    let kits = run(provider.list_kits()).unwrap();
    let after = ALLOCATED.with(Cell::get);
    drop(kits);
    after - before
}

#[test]
fn list_kits_allocates_the_same_for_short_and_long_skills() {
    // Build both kits first: that one-time construction is not what we measure.
    let body_bytes: usize = Large::embedded_kit()
        .skills
        .iter()
        .map(|s| s.body.as_text().map_or(0, str::len))
        .sum();
    assert!(body_bytes > 50_000, "the large kit has long bodies");
    assert_eq!(Small::embedded_kit().skills.len(), 2);

    let small = bytes_allocated_by_list_kits(&Small);
    let large = bytes_allocated_by_list_kits(&Large);
    assert!(small > 0, "the counting allocator sees list_kits");
    assert_eq!(small, large, "allocated bytes do not depend on skill text");
    assert!(large < 2_000, "{large} bytes allocated");
}
