//! serve's accept loop and the bound on its connections. Past the bound, the connection that
//! has waited longest for a request is closed to make room, never one that has sent a complete
//! request: a scrape's connection is answered however many slow clients connect around it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Notify;

/// Connections the kernel completes before serve accepts them (`listen(2)`'s backlog, capped
/// by `net.core.somaxconn`, 4096 on current kernels, as Go's servers ask). Under a flood of
/// connections a short queue drops a scraper's SYN, which it resends only after a second.
const ACCEPT_BACKLOG: u32 = 4096;

/// A listening socket on `address` (SO_REUSEADDR, as tokio's and Go's listeners set it).
pub(crate) fn bind(address: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// How long a client may take to send a request's head, and how long a kept-alive connection
/// may sit idle before its next one (hyper times both from when it starts waiting for a head).
/// A scrape sends its head at once; Prometheus opens a new connection when the old was closed.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a connection lives, so a client that never reads its answer cannot keep one
/// (hyper has no write timeout): then it is asked to close, and closed 5 s later.
pub(crate) const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// At most this many connections wait for a request at once: past it, the one that has waited
/// longest is closed. An answer is built from memory at once, so connections that have sent a
/// complete request are few and brief; those that wait are slow or idle clients, and until
/// their head is complete they hold a socket and the bytes they sent, not hyper's buffers
/// (`request_head.rs`). The bound is what keeps a new connection out of the kernel's accept
/// queue: clients that reconnect as soon as they are closed fill that queue with every client
/// serve does not hold, and a scraper's connection waits behind all of them (256 places
/// under 2,000 such clients: up to a second on an idle 2-core node, more on a busy one).
/// The file descriptors stay bounded by the open-files limit (`connection_limit`).
pub(crate) const MAX_CONNECTIONS: usize = 4096;

/// How many connections to serve at once with `open_files` file descriptors allowed (the
/// soft RLIMIT_NOFILE, when known): half of what the watches, the probe and the runtime leave,
/// at most [`MAX_CONNECTIONS`], at least 4.
pub(crate) fn connection_limit(open_files: Option<u64>) -> usize {
    /// The watches (a dozen connections), the probe, the runtime, stdio and a margin.
    const RESERVED: u64 = 48;
    match open_files {
        None => MAX_CONNECTIONS,
        Some(n) => usize::try_from(n.saturating_sub(RESERVED) / 2)
            .unwrap_or(MAX_CONNECTIONS)
            .clamp(4, MAX_CONNECTIONS),
    }
}

/// Raises the soft limit on open files to the hard one, as Go's runtime does for every Go
/// program since 1.19 (`os/rlimit.go`), so that a soft limit of 1,024 (systemd's default
/// for services) does not leave the listener a few hundred places when the hard limit
/// allows thousands. A failure leaves the limit as it was.
pub(crate) fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) and setrlimit(2) only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The soft limit on open files from `/proc/self/limits` (Linux), e.g.
/// `Max open files            1024                 1048576              files`.
pub(crate) fn open_files_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One connection as the accept loop and the connection's own task both see it.
pub(crate) struct Connection {
    /// When the listener started; `waiting_since` counts from it.
    epoch: Instant,
    /// Milliseconds from `epoch` to when this connection last began waiting for a request
    /// (accepted, or its last answer written).
    waiting_since: AtomicU64,
    /// Requests received and not yet answered in full.
    in_flight: AtomicU32,
    /// Requests received so far: a change tells the task that one arrived while it was
    /// deciding whether to close.
    received: AtomicU64,
    /// Set by the accept loop when it asks this connection to close; cleared by the task when
    /// it turns out to hold a request after all.
    evicting: AtomicBool,
    /// Wakes the task when it is asked to close.
    close: Notify,
    /// Set by the task when the connection has ended.
    ended: AtomicBool,
}

impl Connection {
    fn new(epoch: Instant, now: Instant) -> Connection {
        Connection {
            epoch,
            waiting_since: AtomicU64::new(millis(epoch, now)),
            in_flight: AtomicU32::new(0),
            received: AtomicU64::new(0),
            evicting: AtomicBool::new(false),
            close: Notify::new(),
            ended: AtomicBool::new(false),
        }
    }

    /// Its first request head is complete and goes to hyper: from now on it is ranked with the
    /// connections that have sent a request, behind those that never did.
    pub(crate) fn head_arrived(&self) {
        self.received.fetch_add(1, Ordering::SeqCst);
    }

    /// A complete request head has arrived: the connection is not to be closed until it has
    /// been answered.
    pub(crate) fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.received.fetch_add(1, Ordering::SeqCst);
    }

    /// The answer has been written in full (or the connection died) `now`: waiting again.
    pub(crate) fn request_finished(&self, now: Instant) {
        self.waiting_since
            .store(millis(self.epoch, now), Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Requests received so far.
    pub(crate) fn received(&self) -> u64 {
        self.received.load(Ordering::SeqCst)
    }

    /// Whether a request is being answered.
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) > 0
    }

    /// Waits until the accept loop asks this connection to close.
    pub(crate) async fn asked_to_close(&self) {
        self.close.notified().await;
    }

    /// The task decided to keep the connection: it received a request meanwhile.
    pub(crate) fn keep(&self) {
        self.evicting.store(false, Ordering::SeqCst);
    }

    /// The task has ended; the accept loop forgets the connection.
    pub(crate) fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    fn waiting_since(&self) -> u64 {
        self.waiting_since.load(Ordering::SeqCst)
    }
}

fn millis(epoch: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch).as_millis()).unwrap_or(u64::MAX)
}

/// What the accept loop does with a new connection.
pub(crate) enum Admission {
    /// Serve it.
    Serve(Arc<Connection>),
    /// Not yet: every place is taken by a connection that is being answered or is being
    /// closed. The accept loop lets those tasks run and asks again; the newcomer waits a
    /// moment (an answer is written within milliseconds) and is never closed for them.
    Full,
}

/// The connections being served, each with the means to ask it to close.
pub(crate) struct OpenConnections {
    limit: usize,
    epoch: Instant,
    open: Vec<Arc<Connection>>,
}

impl OpenConnections {
    pub(crate) fn new(limit: usize) -> OpenConnections {
        OpenConnections {
            limit: limit.max(1),
            epoch: Instant::now(),
            open: Vec::new(),
        }
    }

    /// Makes room for one more connection: while `limit` connections or more are neither
    /// answering a request nor already asked to close, the one that has waited longest for a
    /// request is asked to close. Its task first reads what its client has sent; one that
    /// turns out to hold a complete request is kept and answered.
    pub(crate) fn admit(&mut self, now: Instant) -> Admission {
        self.open.retain(|c| !c.ended.load(Ordering::SeqCst));
        // A hard bound beside the soft one: connections being answered or closed are brief,
        // but their file descriptors count until they are gone.
        if self.open.len() >= 2 * self.limit {
            return Admission::Full;
        }
        loop {
            let settled = self
                .open
                .iter()
                .filter(|c| !c.evicting.load(Ordering::SeqCst))
                .count();
            if settled < self.limit {
                break;
            }
            // A connection that has never sent a request goes before one that has been
            // answered and waits for its next (a scraper's kept-alive connection): a slow
            // client has no claim to a place, and one that idles after an answer is closed
            // after HEADER_READ_TIMEOUT anyway. Within each, the longest waiting goes first.
            let idlest = self
                .open
                .iter()
                .filter(|c| !c.evicting.load(Ordering::SeqCst) && !c.busy())
                .min_by_key(|c| (c.received() > 0, c.waiting_since()));
            let Some(idlest) = idlest else {
                // Every connection holds a request: none is closed for this one.
                return Admission::Full;
            };
            idlest.evicting.store(true, Ordering::SeqCst);
            idlest.close.notify_one();
        }
        let connection = Arc::new(Connection::new(self.epoch, now));
        self.open.push(connection.clone());
        Admission::Serve(connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(admission: Admission) -> Arc<Connection> {
        match admission {
            Admission::Serve(c) => c,
            Admission::Full => panic!("full"),
        }
    }

    fn evicting(c: &Connection) -> bool {
        c.evicting.load(Ordering::SeqCst)
    }

    #[test]
    fn the_connection_cap_leaves_the_watches_their_file_descriptors() {
        assert_eq!(connection_limit(None), MAX_CONNECTIONS);
        assert_eq!(connection_limit(Some(1_048_576)), MAX_CONNECTIONS);
        assert_eq!(connection_limit(Some(128)), 40);
        assert_eq!(connection_limit(Some(64)), 8);
        assert_eq!(connection_limit(Some(16)), 4);
    }

    #[test]
    fn past_the_limit_the_connection_idle_longest_is_closed_not_the_oldest() {
        let start = Instant::now();
        let mut open = OpenConnections::new(2);
        let at = |ms| start + Duration::from_millis(ms);
        let first = served(open.admit(at(0)));
        let second = served(open.admit(at(1000)));
        // Both answered a request; the oldest one more recently: it has been idle the least.
        first.request_started();
        first.request_finished(at(1500));
        second.request_started();
        second.request_finished(at(1200));
        let third = served(open.admit(at(2000)));
        assert!(evicting(&second), "the longest waiting is asked to close");
        assert!(!evicting(&first) && !evicting(&third));
        // One that ended frees its place.
        second.end();
        third.request_started();
        third.request_finished(at(2500));
        let fourth = served(open.admit(at(3000)));
        assert!(evicting(&first), "now the first has waited longest");
        assert!(!evicting(&third) && !evicting(&fourth));
    }

    #[test]
    fn a_connection_that_never_sent_a_request_goes_before_one_answered_earlier() {
        let start = Instant::now();
        let mut open = OpenConnections::new(2);
        let scraper = served(open.admit(start));
        scraper.request_started();
        scraper.request_finished(start);
        let silent = served(open.admit(start + Duration::from_secs(1)));
        let _newcomer = served(open.admit(start + Duration::from_secs(2)));
        assert!(
            evicting(&silent),
            "the silent one goes, though it waited less"
        );
        assert!(!evicting(&scraper));
    }

    #[test]
    fn a_connection_that_sent_a_complete_request_is_never_closed_to_make_room() {
        let start = Instant::now();
        let mut open = OpenConnections::new(2);
        let scrape = served(open.admit(start));
        scrape.request_started();
        let slow = served(open.admit(start + Duration::from_secs(1)));
        let newcomer = served(open.admit(start + Duration::from_secs(2)));
        assert!(!evicting(&scrape), "the request is answered first");
        assert!(evicting(&slow));
        // All places answer requests: the next one waits, none is closed for it.
        newcomer.request_started();
        slow.end();
        assert!(matches!(
            open.admit(start + Duration::from_secs(3)),
            Admission::Full
        ));
        assert!(!evicting(&scrape) && !evicting(&newcomer));
    }

    #[test]
    fn a_connection_asked_to_close_that_holds_a_request_keeps_its_place_within_a_hard_bound() {
        let start = Instant::now();
        let mut open = OpenConnections::new(1);
        let first = served(open.admit(start));
        let second = served(open.admit(start));
        assert!(evicting(&first));
        // Its task read a complete request after all.
        first.request_started();
        first.keep();
        // Two open, one place: one over the soft bound, and at the hard bound.
        assert!(matches!(open.admit(start), Admission::Full));
        assert!(!evicting(&second));
    }

    #[test]
    fn the_soft_open_files_limit_is_read_from_proc() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(open_files_limit(limits), Some(1024));
        assert_eq!(
            open_files_limit("Max open files  unlimited unlimited files"),
            None
        );
        assert_eq!(open_files_limit(""), None);
    }
}
