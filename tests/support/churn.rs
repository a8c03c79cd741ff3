//! Plain HTTP/1.1 over raw sockets, for tests of serve's listener: a scrape on a connection the
//! test holds (so a closed connection is seen, not retried as a pooled client would), and a
//! bounded load of slow clients that connect, trickle half a request and reconnect at once.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// One GET on `stream`; the status, or `None` when the connection was closed (or nothing
/// answered within 10 s) before a complete answer. `token` is sent as a bearer token.
pub(crate) fn get_on(stream: &mut TcpStream, path: &str, token: Option<&str>) -> Option<u16> {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!("GET {path} HTTP/1.1\r\nHost: k3sdoctor\r\n{auth}\r\n");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    read_answer(stream)
}

/// One GET on a connection of its own, closed after the answer.
pub(crate) fn get_fresh(address: SocketAddr, path: &str, token: Option<&str>) -> Option<u16> {
    let mut stream = TcpStream::connect(address).ok()?;
    get_on(&mut stream, path, token)
}

/// Reads one answer (head and a `Content-Length` body); its status.
fn read_answer(stream: &mut TcpStream) -> Option<u16> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    if head.contains("transfer-encoding: chunked") {
        // Go's servers (node_exporter) stream /metrics: to the last, empty chunk.
        while !seen.ends_with(b"0\r\n\r\n") {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                return None;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        return Some(status);
    }
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = seen.len() - head_end;
    while body < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        body += n;
    }
    Some(status)
}

/// Whether the peer has closed a kept-alive `stream` while it was idle, as an HTTP client's
/// connection pool notices (Go's reads in the background) before it sends the next request.
pub(crate) fn closed_while_idle(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let closed = match stream.peek(&mut byte) {
        Ok(_) => true,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).is_err() || closed
}

/// Whether the peer has closed `stream` (end of file or a reset) within `limit`.
pub(crate) fn closed_by_peer(stream: &mut TcpStream, limit: Duration) -> bool {
    let _ = stream.set_read_timeout(Some(limit));
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

/// `clients` slow clients on their own threads' runtime until dropped: each connects, sends
/// half a request head a few bytes at a time (as a slow or hostile client does) and, when
/// closed or after about a second, reconnects at once.
pub(crate) struct Churn {
    stop: Arc<AtomicBool>,
    connects: Arc<AtomicU64>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Churn {
    pub(crate) fn start(address: SocketAddr, clients: usize) -> Churn {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the slow clients");
        let stop = Arc::new(AtomicBool::new(false));
        let connects = Arc::new(AtomicU64::new(0));
        for client in 0..clients {
            let (stop, connects) = (stop.clone(), connects.clone());
            runtime.spawn(async move {
                // Spread the first connects over a second.
                tokio::time::sleep(Duration::from_micros((client as u64 * 500) % 1_000_000)).await;
                while !stop.load(Ordering::Relaxed) {
                    slow_client(address, client, &connects).await;
                }
            });
        }
        Churn {
            stop,
            connects,
            runtime: Some(runtime),
        }
    }

    /// Connections opened so far.
    pub(crate) fn connects(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }
}

impl Drop for Churn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

async fn slow_client(address: SocketAddr, client: usize, connects: &AtomicU64) {
    use tokio::io::AsyncWriteExt;
    let Ok(mut stream) = tokio::net::TcpStream::connect(address).await else {
        tokio::time::sleep(Duration::from_millis(10)).await;
        return;
    };
    connects.fetch_add(1, Ordering::Relaxed);
    let head = b"GET /metrics HTTP/1.1\r\nHost: k3sdoctor\r\nUser-Agent: slow";
    // 4 to 10 pieces 100 ms apart, then gone: never a complete head.
    let pieces = 4 + client % 7;
    for piece in head.chunks(head.len() / pieces + 1) {
        if stream.write_all(piece).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
