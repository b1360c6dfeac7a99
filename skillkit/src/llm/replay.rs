//! Replaying a recorded response body through a [`Decoder`]: the adapters'
//! `replay`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use crate::llm::sse::{Decoder, FromSse};
use crate::llm::{Event, EventStream, Streamable};

/// The events of a recorded response body, decoded as a live one is.
pub(crate) fn replay<E, I>(body: I) -> EventStream
where
    E: Streamable + FromSse + Send + 'static,
    I: IntoIterator,
    I::IntoIter: Send + 'static,
    I::Item: AsRef<[u8]>,
{
    Box::pin(Replay::<E, I::IntoIter> {
        decoder: Decoder::new(),
        body: Some(body.into_iter()),
        pending: VecDeque::new(),
    })
}

struct Replay<E: Streamable, I> {
    decoder: Decoder<E>,
    /// `None` once the body is read to its end.
    body: Option<I>,
    /// Events decoded and not yet yielded; its buffer is reused for every
    /// piece of the body.
    pending: VecDeque<Event>,
}

// Nothing is pinned: the stream is plain data.
impl<E: Streamable, I> Unpin for Replay<E, I> {}

impl<E, I> Stream for Replay<E, I>
where
    E: Streamable + FromSse,
    I: Iterator,
    I::Item: AsRef<[u8]>,
{
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.pending.pop_front() {
                return Poll::Ready(Some(event));
            }
            if this.decoder.has_ended() {
                return Poll::Ready(None);
            }
            let Some(body) = &mut this.body else {
                return Poll::Ready(None);
            };
            // Empty: back to a `Vec` (and later to a deque) without copying.
            let mut events = Vec::from(std::mem::take(&mut this.pending));
            match body.next() {
                Some(bytes) => this.decoder.feed(bytes.as_ref(), &mut events),
                None => {
                    this.body = None;
                    this.decoder.finish(&mut events);
                }
            }
            this.pending = VecDeque::from(events);
        }
    }
}
