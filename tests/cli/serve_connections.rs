//! serve's listener under slow and idle clients: past its bound on open
//! connections it closes the one that has waited longest for a request, never one that has
//! sent a complete request, so a scrape is answered however many slow clients churn around
//! it. The measurement at 2,000 churning clients is `cargo bench --bench churn`
//! (tests/bench/churn.rs).

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::churn::{
    Churn, PromScraper, ScrapeOutcome, closed_by_peer, get_fresh, get_on, scrape_rounds,
};
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

/// A Prometheus service account's rights: `get` on `/metrics`.
const METRICS_READER: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: k3sdoctor-metrics-reader
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
";

/// The benchmark's load at a smaller scale (`cargo bench --bench churn` measures 2,000): 300
/// slow clients against far fewer places than they need, and 20 Prometheus-like scrapers with
/// a token each, `/metrics` closed as by default. One scrape lost (not a 200 in full within
/// Prometheus' 10 s scrape timeout) is `up == 0`, and fails the test.
#[test]
fn no_scrape_is_lost_while_hundreds_of_slow_clients_churn() {
    let fake = fresh_cluster(&["s1", "s2", "s3"]);
    let tokens: Vec<Option<String>> = (0..20)
        .map(|n| {
            let token = format!("prometheus-{n}-token");
            fake.add_rbac_user(&token, &format!("prometheus-{n}"), METRICS_READER);
            Some(token)
        })
        .collect();
    // 256 open files: 104 places for 300 clients, so the bound closes connections throughout.
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "kubernetes"])
            .cluster(&fake, Role::Admin)
            .open_files(256),
    );
    let answered = crate::support::wait::wait_for(SEEN, || {
        PromScraper::new(address, tokens[0].as_deref())
            .scrape()
            .succeeded()
    });
    assert!(answered, "serve never answered a scrape with a token");
    let churn = Churn::start(address, 300);
    let crowded = crate::support::wait::wait_for(SEEN, || churn.connects() > 1_000);
    assert!(crowded, "the slow clients did not get going");
    // 4 s apart: the 20 new tokens stay within the reviews' budget (a burst of 10, then 5 a
    // second), which random tokens are held to.
    let scrapes = scrape_rounds(address, &tokens, Duration::from_secs(4), 3);
    let connects = churn.connects();
    drop(churn);
    let lost: Vec<(usize, ScrapeOutcome)> = scrapes
        .iter()
        .enumerate()
        .flat_map(|(n, own)| {
            own.iter()
                .filter(|s| !s.succeeded())
                .map(move |s| (n, s.outcome))
        })
        .collect();
    assert!(
        lost.is_empty(),
        "scrapes lost among {connects} slow connections (scraper, outcome): {lost:?}"
    );
    assert_eq!(scrapes.iter().flatten().count(), 60);
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
