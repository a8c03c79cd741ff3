//! A new connection waits here for its request head, holding only the bytes its client has
//! sent, and reaches hyper (an 8 KiB buffer and its timers) once the head is complete. A slow
//! client that trickles a head then costs a socket and a few bytes, so serve can hold
//! thousands of them instead of leaving the connections behind them (a scraper's among them)
//! in the kernel's accept queue: with clients that reconnect as soon as they are closed, that
//! queue holds every client serve does not, and a new connection waits behind all of them.

use std::io::ErrorKind;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::listener::Connection;

/// Past this many bytes without the blank line that ends a head, hyper judges what came (and
/// answers 431 or reads on, by its own limits).
pub(crate) const HEAD_BYTES: usize = 8 * 1024;

/// How a connection's wait for its first request head ended.
#[derive(Debug)]
pub(crate) enum Waited {
    /// The head (and whatever followed it) as sent, for hyper to read first.
    Head(Vec<u8>),
    /// The client went, the head did not arrive by the deadline, or the connection was asked
    /// to make room before a head was complete.
    Gone,
}

/// Reads from `stream` until a complete request head has arrived, `deadline` passes, or the
/// accept loop asks `connection` to close (then what the client has sent by now decides).
pub(crate) async fn wait_for_head(
    stream: &TcpStream,
    connection: &Connection,
    deadline: Instant,
) -> Waited {
    let mut head = Vec::new();
    loop {
        tokio::select! {
            biased;
            ready = stream.readable() => {
                if ready.is_err() {
                    return Waited::Gone;
                }
                match read_available(stream, &mut head) {
                    Available::Complete => return Waited::Head(head),
                    Available::Partial => {}
                    Available::Ended => return Waited::Gone,
                }
            }
            () = connection.asked_to_close() => {
                // Under a flood this task may not have run since the head arrived.
                return match read_available(stream, &mut head) {
                    Available::Complete => {
                        connection.keep();
                        Waited::Head(head)
                    }
                    Available::Partial | Available::Ended => Waited::Gone,
                };
            }
            () = tokio::time::sleep_until(deadline) => return Waited::Gone,
        }
    }
}

enum Available {
    Complete,
    Partial,
    Ended,
}

/// Appends what can be read now without waiting.
fn read_available(stream: &TcpStream, head: &mut Vec<u8>) -> Available {
    let mut chunk = [0u8; 1024];
    loop {
        match stream.try_read(&mut chunk) {
            Ok(0) => return Available::Ended,
            Ok(n) => {
                let searched_from = head.len().saturating_sub(3);
                head.extend_from_slice(&chunk[..n]);
                if head_complete(&head[searched_from..]) || head.len() >= HEAD_BYTES {
                    return Available::Complete;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Available::Partial,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Available::Ended,
        }
    }
}

/// Whether `bytes` hold the blank line that ends an HTTP/1 head (hyper, like Go's server,
/// also takes a bare LF).
pub(crate) fn head_complete(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"\n\n") || bytes.windows(4).any(|w| w == b"\r\n\r\n")
}

/// The connection as hyper reads it: the bytes read while waiting for the head, then the
/// socket.
pub(crate) struct Prefixed {
    prefix: Vec<u8>,
    read: usize,
    io: TokioIo<TcpStream>,
}

impl Prefixed {
    pub(crate) fn new(prefix: Vec<u8>, stream: TcpStream) -> Prefixed {
        Prefixed {
            prefix,
            read: 0,
            io: TokioIo::new(stream),
        }
    }
}

impl Read for Prefixed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let left = &this.prefix[this.read..];
        if left.is_empty() {
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        let n = left.len().min(buf.remaining());
        buf.put_slice(&left[..n]);
        this.read += n;
        if this.read == this.prefix.len() {
            this.prefix = Vec::new();
            this.read = 0;
        }
        Poll::Ready(Ok(()))
    }
}

impl Write for Prefixed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests;
