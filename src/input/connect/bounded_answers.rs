//! Bounds on what a server's answers may cost. kube collects a body whole before parsing it,
//! so without a bound a server (or whatever answers at its address) that sends a gigabyte
//! costs twice that in memory, and only the request timeout ends it. A watch's body is a
//! stream of one event per line that lasts minutes, so there each line is bounded instead of
//! the whole. kube's watcher follows `continue` tokens as long as they come, so the pages of
//! each list are counted here too (`PageChains`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};
use kube::client::Body;
use tower::BoxError;

use super::paging::PageChains;
pub(crate) use crate::input::limits::MOST_BODY_BYTES;
pub(crate) use crate::input::read_error::causes::BodyTooLarge;

/// The client's service with every answer's body and every list's pages bounded.
#[derive(Clone)]
pub(crate) struct BoundedAnswers {
    pub client: kube::Client,
    pub limit: u64,
    pub chains: Arc<PageChains>,
}

impl tower::Service<Request<Body>> for BoundedAnswers {
    type Response = Response<Capped>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Capped>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // `client` queues requests itself (kube buffers every client's service).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let this = self.clone();
        let query = request.uri().query().unwrap_or_default();
        let per_line = is_watch(query);
        let counted = match per_line {
            true => Ok(()),
            false => self.chains.request(request.uri().path(), query),
        };
        Box::pin(async move {
            counted?;
            let response = this.client.send(request).await?;
            Ok(response.map(|inner| Capped {
                inner,
                limit: this.limit,
                counted: 0,
                per_line,
            }))
        })
    }
}

fn is_watch(query: &str) -> bool {
    query
        .split('&')
        .any(|pair| pair == "watch=true" || pair == "watch=1")
}

/// A body that fails once it has held more than `limit` bytes (since the last newline when
/// `per_line`).
pub(crate) struct Capped {
    inner: Body,
    limit: u64,
    counted: u64,
    per_line: bool,
}

impl HttpBody for Capped {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        if let Some(data) = frame.data_ref() {
            this.counted = counted_after(this.counted, data, this.per_line);
            if this.counted > this.limit {
                return Poll::Ready(Some(Err(Box::new(BodyTooLarge { limit: this.limit }))));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The bytes counted after `data`: all of them, or those after its last newline.
fn counted_after(counted: u64, data: &[u8], per_line: bool) -> u64 {
    match per_line
        .then(|| data.iter().rposition(|&b| b == b'\n'))
        .flatten()
    {
        Some(newline) => (data.len() - newline - 1) as u64,
        None => counted.saturating_add(data.len() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_answer_counts_every_byte_and_a_watch_each_line() {
        assert_eq!(counted_after(10, b"ab\ncd", false), 15);
        assert_eq!(counted_after(10, b"ab\ncd", true), 2);
        assert_eq!(counted_after(10, b"abcd", true), 14);
        assert_eq!(counted_after(10, b"abcd\n", true), 0);
    }

    #[test]
    fn only_watches_are_bounded_per_line() {
        assert!(is_watch("watch=true&resourceVersion=1"));
        assert!(is_watch("labelSelector=a&watch=1"));
        assert!(!is_watch("limit=500&continue=watch%3Dtrue"));
        assert!(!is_watch(""));
    }
}
