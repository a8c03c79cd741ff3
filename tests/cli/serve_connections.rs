//! serve's listener under slow and idle clients: past its bound on open
//! connections it closes the one that has waited longest for a request, never one that has
//! sent a complete request, so a scrape is answered however many slow clients churn around
//! it. The measurement at 2,000 churning clients (beside node_exporter's listener when
//! installed) is the ignored `load_of_2000_churning_clients_*` test below.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::churn::{Churn, closed_by_peer, closed_while_idle, get_fresh, get_on};
use crate::support::fake_api::Role;
use crate::support::harness::k3sdoctor;
use crate::support::objects::fresh_cluster;
use crate::support::scrape::{start_serve, wait_for_sample};

const SEEN: Duration = Duration::from_secs(30);

/// 64 open files: serve then keeps at most 8 connections waiting for a request.
const OPEN_FILES: u64 = 64;
const WAITING_AT_MOST: usize = 8;

fn connect(address: SocketAddr) -> TcpStream {
    TcpStream::connect(address).expect("connect to serve")
}

#[test]
fn a_kept_alive_scrape_connection_outlives_idle_connections_opened_after_it() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "none"])
            .cluster(&fake, Role::ReadOnly)
            .open_files(OPEN_FILES),
    );
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);

    // Prometheus's connection, the oldest, answered once.
    let mut scraper = connect(address);
    assert_eq!(get_on(&mut scraper, "/metrics", None), Some(200));
    // Idle connections fill the other places; an answer on a connection of its own shows
    // that serve has taken them all in.
    let mut idle: Vec<TcpStream> = (1..WAITING_AT_MOST - 1).map(|_| connect(address)).collect();
    assert_eq!(get_fresh(address, "/healthz", None), Some(200));
    // A scrape on the oldest connection: it is now the one idle for the shortest time.
    assert_eq!(get_on(&mut scraper, "/metrics", None), Some(200));
    // More connections than there are places: the idle ones make room, oldest idle first.
    idle.extend((0..3).map(|_| connect(address)));
    assert_eq!(get_fresh(address, "/healthz", None), Some(200));
    // The first idle connection is closed for the newcomers, long before hyper's 5 s header
    // timeout would close it: the closing is done (a connection that sent its request in the
    // meantime would rightly be kept, so the next scrape waits for it).
    assert!(
        closed_by_peer(&mut idle[0], Duration::from_secs(4)),
        "the idlest connection was not closed to make room"
    );
    assert_eq!(
        get_on(&mut scraper, "/metrics", None),
        Some(200),
        "the scrape connection, oldest but the least idle, was closed to make room"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn scrapes_are_answered_while_hundreds_of_slow_clients_churn() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "none"])
            .cluster(&fake, Role::ReadOnly)
            .open_files(OPEN_FILES),
    );
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    let churn = Churn::start(address, 300);
    // Wait until the slow clients crowd serve's 8 places many times over.
    let crowded = crate::support::wait::wait_for(SEEN, || churn.connects() > 1_000);
    assert!(crowded, "the slow clients did not get going");
    let answered = (0..40)
        .filter(|_| get_fresh(address, "/metrics", None) == Some(200))
        .count();
    drop(churn);
    assert_eq!(
        answered, 40,
        "scrapes closed unanswered among slow clients: {answered}/40"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

/// The load figure: 2,000 slow clients churning for a minute while a scraper
/// asks `/metrics` ten times a second, on a fresh connection each time and on one kept alive
/// (replaced when it was closed while idle, as a client's pool does; a request on a connection
/// closed after it was sent counts as unanswered, where Prometheus's Go client would retry it). With `prometheus-node-exporter` on PATH, its listener is measured
/// the same way. Run:
/// `cargo test --release --locked --test cli load_of_2000 -- --ignored --nocapture`
/// (`K3SDOCTOR_LOAD_TOKEN=<token>` scrapes with a bearer token, `K3SDOCTOR_LOAD_ADDRESS=<addr>`
/// measures a serve already running there, e.g. with auth against a real cluster).
#[test]
#[ignore = "a measurement: a minute of 2,000 churning clients; run it by hand"]
fn load_of_2000_churning_clients_against_serve_and_node_exporter() {
    let token = std::env::var("K3SDOCTOR_LOAD_TOKEN").ok();
    if let Ok(address) = std::env::var("K3SDOCTOR_LOAD_ADDRESS") {
        let address = address
            .parse()
            .expect("K3SDOCTOR_LOAD_ADDRESS is ADDR:PORT");
        report("k3sdoctor serve", measure(address, token.as_deref()));
        return;
    }
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let (serve, address) =
        start_serve(k3sdoctor(["serve", "--metrics-auth", "none"]).cluster(&fake, Role::ReadOnly));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    report("k3sdoctor serve", measure(address, None));
    serve.signal_and_wait(libc::SIGTERM).code(0);

    if let Some(mut exporter) = node_exporter() {
        let (child, address) = &mut exporter;
        report("prometheus-node-exporter", measure(*address, None));
        let _ = child.kill();
        let _ = child.wait();
    } else {
        println!("prometheus-node-exporter is not installed: not measured");
    }
}

const CLIENTS: usize = 2_000;
const FOR: Duration = Duration::from_secs(60);
const EVERY: Duration = Duration::from_millis(100);

struct Figures {
    fresh: (usize, usize),
    kept_alive: (usize, usize),
    connects: u64,
}

fn measure(address: SocketAddr, token: Option<&str>) -> Figures {
    let churn = Churn::start(address, CLIENTS);
    std::thread::sleep(Duration::from_secs(3));
    let kept = std::thread::scope(|s| {
        let kept = s.spawn(|| {
            let mut answered = (0, 0);
            let mut stream = None;
            let end = Instant::now() + FOR;
            while Instant::now() < end {
                // A connection closed while idle is replaced, as a client's pool does; one
                // closed after the request was sent is a scrape lost.
                if stream
                    .as_ref()
                    .is_some_and(|c: &Option<TcpStream>| c.as_ref().is_none_or(closed_while_idle))
                {
                    stream = None;
                }
                let conn = stream.get_or_insert_with(|| TcpStream::connect(address).ok());
                let status = conn.as_mut().and_then(|c| get_on(c, "/metrics", token));
                answered.1 += 1;
                if status == Some(200) {
                    answered.0 += 1;
                } else {
                    stream = None;
                }
                std::thread::sleep(EVERY);
            }
            answered
        });
        let mut fresh = (0, 0);
        let end = Instant::now() + FOR;
        while Instant::now() < end {
            fresh.1 += 1;
            if get_fresh(address, "/metrics", token) == Some(200) {
                fresh.0 += 1;
            }
            std::thread::sleep(EVERY);
        }
        (fresh, kept.join().expect("the kept-alive scraper"))
    });
    Figures {
        fresh: kept.0,
        kept_alive: kept.1,
        connects: churn.connects(),
    }
}

fn report(what: &str, figures: Figures) {
    let share = |(ok, all): (usize, usize)| 100.0 * ok as f64 / all.max(1) as f64;
    println!(
        "{what}: {CLIENTS} churning clients ({} connections in {} s); scrapes answered: \
         fresh connection {}/{} ({:.2} %), kept alive {}/{} ({:.2} %)",
        figures.connects,
        FOR.as_secs() + 3,
        figures.fresh.0,
        figures.fresh.1,
        share(figures.fresh),
        figures.kept_alive.0,
        figures.kept_alive.1,
        share(figures.kept_alive)
    );
}

/// Debian's node_exporter on a free loopback port, once it answers.
fn node_exporter() -> Option<(Child, SocketAddr)> {
    let bin = Path::new("/usr/bin/prometheus-node-exporter");
    if !bin.exists() {
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let address: SocketAddr = format!("127.0.0.1:{port}").parse().ok()?;
    let child = Command::new(bin)
        .arg(format!("--web.listen-address={address}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    crate::support::wait::wait_for(SEEN, || get_fresh(address, "/metrics", None) == Some(200))
        .then_some((child, address))
}
