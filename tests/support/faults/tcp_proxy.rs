//! A loopback TCP proxy that a test switches between pass, reset and blackhole, in the manner
//! of Shopify's toxiproxy: put it between the binary and a real API server (rewrite the
//! kubeconfig's `server:` with [`TcpProxy::kubeconfig`]) and cause the partition a promise is
//! about. TLS passes through untouched: the test bed's serving certificate names 127.0.0.1.
//!
//! Every connection is pumped by two threads (one per direction) that look at the mode
//! between reads, every 20 ms at most, so a switch applies to existing connections as well as
//! new ones:
//! - `Pass`: bytes flow both ways;
//! - `Reset`: every connection is closed with a RST (SO_LINGER 0), and new ones are reset as
//!   soon as they are accepted;
//! - `Blackhole`: connections are accepted and kept open but nothing is forwarded either way;
//!   what was sent waits in the kernel's buffers and flows once the mode is `Pass` again, as
//!   after a healed partition.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Pass,
    Reset,
    Blackhole,
}

impl Mode {
    fn from_u8(value: u8) -> Mode {
        match value {
            1 => Mode::Reset,
            2 => Mode::Blackhole,
            _ => Mode::Pass,
        }
    }
}

/// How often a pump looks at the mode while its connection is quiet.
const POLL: Duration = Duration::from_millis(20);

struct Shared {
    mode: AtomicU8,
    stop: AtomicBool,
    upstream: SocketAddr,
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

/// A running proxy; stopped (every connection closed) when dropped.
pub(crate) struct TcpProxy {
    address: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl TcpProxy {
    /// A proxy on 127.0.0.1 (a free port) to `upstream`, passing.
    pub(crate) fn start(upstream: SocketAddr) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port for the proxy");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let address = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared {
            mode: AtomicU8::new(0),
            stop: AtomicBool::new(false),
            upstream,
            pumps: Mutex::new(Vec::new()),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::spawn(move || accept(&listener, &shared))
        };
        TcpProxy {
            address,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// A proxy to the host and port of an `https://HOST:PORT` URL (the test bed's server).
    pub(crate) fn to_url(url: &str) -> TcpProxy {
        let authority = url
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/');
        TcpProxy::start(authority.parse().expect("a HOST:PORT server address"))
    }

    pub(crate) fn address(&self) -> SocketAddr {
        self.address
    }

    pub(crate) fn set_mode(&self, mode: Mode) {
        let value = match mode {
            Mode::Pass => 0,
            Mode::Reset => 1,
            Mode::Blackhole => 2,
        };
        self.shared.mode.store(value, Ordering::SeqCst);
    }

    pub(crate) fn mode(&self) -> Mode {
        Mode::from_u8(self.shared.mode.load(Ordering::SeqCst))
    }

    /// A copy of `kubeconfig` (in `dir`) whose `server: URL` lines point at the proxy instead.
    pub(crate) fn kubeconfig(&self, kubeconfig: &Path, server: &str, dir: &Path) -> PathBuf {
        let text = std::fs::read_to_string(kubeconfig).expect("read the kubeconfig");
        let proxied = format!("https://{}", self.address);
        assert!(
            text.contains(server),
            "{} does not name {server}",
            kubeconfig.display()
        );
        let path = dir.join(format!(
            "{}-via-proxy",
            kubeconfig
                .file_name()
                .map_or("kubeconfig".into(), |n| n.to_string_lossy())
        ));
        std::fs::write(&path, text.replace(server, &proxied)).expect("write the kubeconfig");
        path
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        let pumps =
            std::mem::take(&mut *self.shared.pumps.lock().unwrap_or_else(|p| p.into_inner()));
        for pump in pumps {
            let _ = pump.join();
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                continue;
            }
            Err(_) => continue,
        };
        if Mode::from_u8(shared.mode.load(Ordering::SeqCst)) == Mode::Reset {
            reset(&client);
            continue;
        }
        let _ = client.set_nonblocking(false);
        let Ok(upstream) = TcpStream::connect(shared.upstream) else {
            reset(&client);
            continue;
        };
        let (Ok(client_2), Ok(upstream_2)) = (client.try_clone(), upstream.try_clone()) else {
            continue;
        };
        let mut pumps = shared.pumps.lock().unwrap_or_else(|p| p.into_inner());
        pumps.retain(|p| !p.is_finished());
        for (from, to) in [(client, upstream), (upstream_2, client_2)] {
            let shared = shared.clone();
            pumps.push(std::thread::spawn(move || pump(from, to, &shared)));
        }
    }
}

/// Copies `from` to `to` while the mode allows; a reset closes both with a RST.
fn pump(mut from: TcpStream, mut to: TcpStream, shared: &Shared) {
    let _ = from.set_read_timeout(Some(POLL));
    let _ = to.set_write_timeout(Some(Duration::from_secs(5)));
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            reset(&from);
            reset(&to);
            return;
        }
        match Mode::from_u8(shared.mode.load(Ordering::SeqCst)) {
            Mode::Reset => {
                reset(&from);
                reset(&to);
                return;
            }
            Mode::Blackhole => {
                std::thread::sleep(POLL);
                continue;
            }
            Mode::Pass => {}
        }
        match from.read(&mut buffer) {
            Ok(0) => {
                // The other direction's reset shuts this socket for reading too: pass that on
                // as a reset, not as a FIN (which the client would see as a clean close).
                if Mode::from_u8(shared.mode.load(Ordering::SeqCst)) == Mode::Reset {
                    reset(&from);
                    reset(&to);
                } else {
                    let _ = to.shutdown(Shutdown::Write);
                }
                return;
            }
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    reset(&from);
                    return;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => {
                reset(&to);
                return;
            }
        }
    }
}

/// Makes the last close of `stream` send a RST instead of a FIN, and stops its reads, so the
/// other pump lets go of its copy too.
fn reset(stream: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a socket we own, with a pointer to a live `linger` and its size.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::addr_of!(linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    let _ = stream.shutdown(Shutdown::Read);
}
