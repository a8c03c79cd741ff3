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
        Churn::start_as(address, clients, false)
    }

    /// Clients that stall instead of going: after their half head each waits, silent, until
    /// serve closes the connection, then reconnects at once.
    pub(crate) fn stalling(address: SocketAddr, clients: usize) -> Churn {
        Churn::start_as(address, clients, true)
    }

    fn start_as(address: SocketAddr, clients: usize, stall: bool) -> Churn {
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
                    slow_client(address, client, &connects, stall).await;
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

async fn slow_client(address: SocketAddr, client: usize, connects: &AtomicU64, stall: bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
    if stall {
        // Until serve closes it (a minute at most, serve's longest).
        let mut byte = [0u8; 1];
        let _ = tokio::time::timeout(Duration::from_secs(65), stream.read(&mut byte)).await;
    }
}

/// Prometheus' default scrape timeout (`scrape_timeout: 10s`): a scrape not answered in full
/// within it is `up == 0`.
pub(crate) const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

/// What became of one scrape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ScrapeOutcome {
    /// Answered in full with this status.
    Answered(u16),
    /// No connection within the timeout (or refused).
    NotConnected,
    /// The connection was closed or reset after the request was sent, before a whole answer.
    Closed,
    /// Not answered in full within [`SCRAPE_TIMEOUT`].
    TimedOut,
}

/// One scrape: how it ended and how long it took, from its start to the answer's last byte.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scrape {
    pub(crate) outcome: ScrapeOutcome,
    pub(crate) took: Duration,
}

impl Scrape {
    /// Prometheus records `up == 1` only for a 200 answered in full within the timeout.
    pub(crate) fn succeeded(&self) -> bool {
        self.outcome == ScrapeOutcome::Answered(200)
    }
}

/// A scraper that behaves like Prometheus' HTTP client (Go's `net/http` Transport): it keeps
/// its connection between scrapes, drops it when the server closed it while idle, and retries
/// a request once on a new connection when a reused one was closed before any byte of the
/// answer arrived (the Transport's rule for idempotent requests); the whole scrape, retry
/// included, has [`SCRAPE_TIMEOUT`].
pub(crate) struct PromScraper {
    address: SocketAddr,
    token: Option<String>,
    kept: Option<TcpStream>,
}

impl PromScraper {
    pub(crate) fn new(address: SocketAddr, token: Option<&str>) -> PromScraper {
        PromScraper {
            address,
            token: token.map(str::to_string),
            kept: None,
        }
    }

    /// One GET of `/metrics`.
    pub(crate) fn scrape(&mut self) -> Scrape {
        let started = std::time::Instant::now();
        let deadline = started + SCRAPE_TIMEOUT;
        let outcome = self.scrape_by(deadline);
        Scrape {
            outcome,
            took: started.elapsed(),
        }
    }

    fn scrape_by(&mut self, deadline: std::time::Instant) -> ScrapeOutcome {
        if self.kept.as_ref().is_some_and(closed_while_idle) {
            self.kept = None;
        }
        if let Some(mut stream) = self.kept.take() {
            match self.request_on(&mut stream, deadline) {
                Attempt::Answered(status, keep) => {
                    self.kept = keep.then_some(stream);
                    return ScrapeOutcome::Answered(status);
                }
                // Closed before the answer's first byte: Go retries on a new connection.
                Attempt::NothingReceived => {}
                Attempt::Failed(outcome) => return outcome,
            }
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return ScrapeOutcome::TimedOut;
        }
        let Ok(mut stream) = TcpStream::connect_timeout(&self.address, left) else {
            return if std::time::Instant::now() >= deadline {
                ScrapeOutcome::TimedOut
            } else {
                ScrapeOutcome::NotConnected
            };
        };
        match self.request_on(&mut stream, deadline) {
            Attempt::Answered(status, keep) => {
                self.kept = keep.then_some(stream);
                ScrapeOutcome::Answered(status)
            }
            Attempt::NothingReceived => ScrapeOutcome::Closed,
            Attempt::Failed(outcome) => outcome,
        }
    }

    fn request_on(&self, stream: &mut TcpStream, deadline: std::time::Instant) -> Attempt {
        let auth = self
            .token
            .as_deref()
            .map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        // The headers Prometheus sends (scrape/scrape.go), in one write.
        let request = format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nUser-Agent: Prometheus/2.53.0\r\n\
             Accept: text/plain;version=0.0.4;q=0.9,*/*;q=0.1\r\nAccept-Encoding: identity\r\n\
             X-Prometheus-Scrape-Timeout-Seconds: {}\r\n{auth}\r\n",
            self.address,
            SCRAPE_TIMEOUT.as_secs()
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return Attempt::NothingReceived;
        }
        read_by(stream, deadline)
    }
}

enum Attempt {
    /// The status, and whether the connection may be kept.
    Answered(u16, bool),
    NothingReceived,
    Failed(ScrapeOutcome),
}

/// Reads one answer (head and a `Content-Length` body) until `deadline`.
fn read_by(stream: &mut TcpStream, deadline: std::time::Instant) -> Attempt {
    let mut seen = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    let mut read = |stream: &mut TcpStream, seen: &mut Vec<u8>| -> Result<(), Attempt> {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(Attempt::Failed(ScrapeOutcome::TimedOut));
        }
        match stream.read(&mut buf) {
            Ok(0) if seen.is_empty() => Err(Attempt::NothingReceived),
            Ok(0) => Err(Attempt::Failed(ScrapeOutcome::Closed)),
            Ok(n) => {
                seen.extend_from_slice(&buf[..n]);
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Err(Attempt::Failed(ScrapeOutcome::TimedOut))
            }
            Err(_) if seen.is_empty() => Err(Attempt::NothingReceived),
            Err(_) => Err(Attempt::Failed(ScrapeOutcome::Closed)),
        }
    };
    let head_end = loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if let Err(attempt) = read(stream, &mut seen) {
            return attempt;
        }
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
    let Some(status) = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
        return Attempt::Failed(ScrapeOutcome::Closed);
    };
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() - head_end < length {
        if let Err(attempt) = read(stream, &mut seen) {
            return match attempt {
                Attempt::NothingReceived => Attempt::Failed(ScrapeOutcome::Closed),
                other => other,
            };
        }
    }
    Attempt::Answered(status, !head.contains("connection: close"))
}

/// One Prometheus-like scraper per token (`None`: no token), each on its own thread, scraping
/// `/metrics` every `interval` for `rounds` rounds, their first scrapes spread over one
/// interval as Prometheus spreads its targets; every scrape, per scraper in order.
pub(crate) fn scrape_rounds(
    address: SocketAddr,
    tokens: &[Option<String>],
    interval: Duration,
    rounds: usize,
) -> Vec<Vec<Scrape>> {
    let start = std::time::Instant::now();
    let spread = interval / u32::try_from(tokens.len().max(1)).unwrap_or(u32::MAX);
    std::thread::scope(|s| {
        let scrapers: Vec<_> = tokens
            .iter()
            .enumerate()
            .map(|(n, token)| {
                s.spawn(move || {
                    let mut scraper = PromScraper::new(address, token.as_deref());
                    let first = start + spread * u32::try_from(n).unwrap_or(0);
                    (0..rounds)
                        .map(|round| {
                            let at = first + interval * u32::try_from(round).unwrap_or(0);
                            std::thread::sleep(
                                at.saturating_duration_since(std::time::Instant::now()),
                            );
                            scraper.scrape()
                        })
                        .collect::<Vec<Scrape>>()
                })
            })
            .collect();
        scrapers
            .into_iter()
            .map(|h| h.join().expect("a scraper thread"))
            .collect()
    })
}
