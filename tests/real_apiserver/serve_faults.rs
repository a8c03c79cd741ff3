//! `serve` under the faults it must stay honest through, on the real API server
//! through the fault harness: a connection reset (up 0 during it, 1 again after a fresh list
//! although the lock ConfigMaps never change, one WARN per watch naming it and the real
//! cause), a blackhole (contact lost within about 30 s, no lease-expired from stale memory,
//! the verdict held and marked stale), wall-clock steps of +40 s and -40 s (no false
//! lease-expired, `up` truthful), and hundreds of silent connections (scrapes still answered,
//! the silent ones closed, the watches unharmed).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::viewer_with_every_read_only_right;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::faults::clock::SteppedClock;
use crate::support::faults::tcp_proxy::{Mode, TcpProxy};
use crate::support::harness::{Run, Streaming, k3sdoctor};
use crate::support::scrape::{get, metrics, sample, start_serve, wait_for_sample};

/// Generous for a busy CI machine; nothing here measures a duration.
const SEEN: Duration = Duration::from_secs(60);

const LEASE_EXPIRED: &str = r#"k3sdoctor_findings{code="lease-expired",severity="error"}"#;

/// One simulated k3s server (it holds both locks, whose ConfigMaps do not exist on v1.29 and
/// so never change) and the viewer bound to the README's read-only role.
fn cluster(env: &EnvTest) -> SimCluster<'_> {
    let cluster = SimCluster::start(env, "k3s", "v1.29.4+k3s1", 1, &[]);
    viewer_with_every_read_only_right(env);
    cluster
}

/// `serve` as the viewer, through `proxy`; waits until it has evaluated everything once.
fn serve_through(env: &EnvTest, proxy: &TcpProxy, run: Run) -> (Streaming, SocketAddr) {
    let kubeconfig = proxy.kubeconfig(&env.kubeconfig(User::Viewer), env.server(), env.scratch());
    let (serve, address) = start_serve(run.kubeconfig(&kubeconfig));
    wait_for_sample(address, "k3sdoctor_ready", 1.0, SEEN);
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    (serve, address)
}

/// Scrapes every 250 ms for `how_long`, asserting `check` on each scrape.
fn scrapes_for(address: SocketAddr, how_long: Duration, check: impl Fn(&str)) {
    let end = Instant::now() + how_long;
    while Instant::now() < end {
        check(&metrics(address));
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn warnings_with<'a>(stderr: &'a str, needle: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains(needle))
        .collect()
}

#[test]
fn real_serve_is_down_during_a_reset_and_up_after_a_fresh_list_of_configmaps_that_never_change() {
    let Some(env) = EnvTest::start("real_serve_reset") else {
        return;
    };
    let _cluster = cluster(&env);
    let proxy = TcpProxy::to_url(env.server());
    let (serve, address) = serve_through(&env, &proxy, k3sdoctor(["serve"]));

    proxy.set_mode(Mode::Reset);
    let reset = Instant::now();
    wait_for_sample(address, "k3sdoctor_up", 0.0, SEEN);
    eprintln!("up 0 {} ms into the reset", reset.elapsed().as_millis());
    // Several retries of every watch, but shorter than it takes to count contact as lost
    // (15 s without an answer), whose recovery would start every watch afresh anyway: here
    // only each watch's own fresh list can bring `up` back.
    std::thread::sleep(Duration::from_secs(10).saturating_sub(reset.elapsed()));
    proxy.set_mode(Mode::Pass);
    let healed = Instant::now();
    // The lock ConfigMaps k3s and k3s-etcd do not exist (v1.29 uses Leases only): no event
    // will ever come for them, so only a fresh list can tell that their watches work again.
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    eprintln!(
        "up 1 {} ms after the reset ended",
        healed.elapsed().as_millis()
    );
    let scrape = metrics(address);
    assert_eq!(
        sample(
            &scrape,
            r#"k3sdoctor_watch_synced{resource="configmaps/k3s-etcd"}"#
        ),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(sample(&scrape, "k3sdoctor_stale"), Some(0.0), "{scrape}");

    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    // One WARN per watch for the whole episode, naming it and the real cause (a reset, not
    // TLS), then one line when it works again; no library lines.
    for watch in [
        "resource=leases ",
        "resource=configmaps/k3s-etcd ",
        "resource=nodes ",
    ] {
        let lines = warnings_with(&out.stderr, watch);
        assert_eq!(lines.len(), 1, "{watch}\n{}", out.stderr);
        assert!(lines[0].contains("reset the connection"), "{}", lines[0]);
        assert!(!lines[0].contains("TLS"), "{}", lines[0]);
    }
    out.stderr_has("watch configmaps/k3s-etcd works again after");
    assert!(!out.stderr.contains("lost contact"), "{}", out.stderr);
    assert!(!out.stderr.contains("failed with error"), "{}", out.stderr);
    assert!(!out.stderr.contains(" ERROR "), "{}", out.stderr);
}

#[test]
fn real_serve_notices_a_blackhole_and_holds_its_verdict_stale_instead_of_expiring_leases() {
    let Some(env) = EnvTest::start("real_serve_blackhole") else {
        return;
    };
    let _cluster = cluster(&env);
    let proxy = TcpProxy::to_url(env.server());
    let (serve, address) = serve_through(&env, &proxy, k3sdoctor(["serve"]));
    assert_eq!(sample(&metrics(address), LEASE_EXPIRED), None);

    proxy.set_mode(Mode::Blackhole);
    let cut = Instant::now();
    // About 30 s: probes every 5 s, each given 5 s, contact lost 15 s after the last answer.
    wait_for_sample(address, "k3sdoctor_up", 0.0, Duration::from_secs(45));
    eprintln!("up 0 {} ms into the blackhole", cut.elapsed().as_millis());
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_stale"), Some(1.0), "{scrape}");
    let (status, report) = get(address, "/report").expect("/report answers");
    assert_eq!(status, 200);
    let report: serde_json::Value = serde_json::from_str(&report).expect("/report is JSON");
    assert_eq!(report["stale"], true, "{report}");
    assert!(report["lastContact"].is_string(), "{report}");
    // The lock is renewed every 2 s behind the blackhole and expires after 15 s (+10 s
    // skew) of silence: well past that, nothing may call it expired.
    scrapes_for(
        address,
        Duration::from_secs(45).saturating_sub(cut.elapsed()),
        |scrape| {
            assert_eq!(sample(scrape, LEASE_EXPIRED), None, "{scrape}");
            assert_eq!(sample(scrape, "k3sdoctor_up"), Some(0.0), "{scrape}");
        },
    );

    proxy.set_mode(Mode::Pass);
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_stale"), Some(0.0), "{scrape}");
    assert_eq!(sample(&scrape, LEASE_EXPIRED), None, "{scrape}");

    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    let lost = warnings_with(&out.stderr, "lost contact with the API server");
    assert_eq!(lost.len(), 1, "{}", out.stderr);
    out.stderr_has("answers again after");
    assert!(!out.stderr.contains("lease-expired"), "{}", out.stderr);
}

#[test]
fn real_serve_keeps_its_verdict_through_wall_clock_steps_forward_and_back() {
    let Some(clock) = SteppedClock::new("real_serve_clock_steps") else {
        return;
    };
    let Some(env) = EnvTest::start("real_serve_clock_steps") else {
        return;
    };
    let _cluster = cluster(&env);
    let (serve, address) =
        start_serve(clock.apply(k3sdoctor(["serve"]).kubeconfig(&env.kubeconfig(User::Viewer))));
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);
    let fresh = |scrape: &str| {
        assert_eq!(sample(scrape, LEASE_EXPIRED), None, "{scrape}");
        assert_eq!(sample(scrape, "k3sdoctor_up"), Some(1.0), "{scrape}");
        let age = sample(scrape, r#"k3sdoctor_lease_renew_age_seconds{lock="k3s"}"#)
            .expect("the k3s lock's renewal age");
        // Renewed every 2 s; a step of the local clock must not show in its age.
        assert!(age < 10.0, "renewal age {age} s:\n{scrape}");
    };
    // +40 s, as NTP steps a board without an RTC; then back by 40 s.
    for offset in [40, 0] {
        clock.step_to(offset);
        scrapes_for(address, Duration::from_secs(15), fresh);
    }
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    assert!(!out.stderr.contains("lease-expired"), "{}", out.stderr);
}

#[test]
fn real_serve_answers_scrapes_and_keeps_watching_while_hundreds_of_connections_stay_silent() {
    let Some(env) = EnvTest::start("real_serve_silent_connections") else {
        return;
    };
    let _cluster = cluster(&env);
    // 64 files, as in the report: 30 idle sockets then starved the watches (EMFILE).
    let (serve, address) = start_serve(
        k3sdoctor(["serve"])
            .kubeconfig(&env.kubeconfig(User::Viewer))
            .open_files(64),
    );
    wait_for_sample(address, "k3sdoctor_up", 1.0, SEEN);

    // 200 connections that never send a byte, and 20 that stop in the middle of a head.
    let mut silent: Vec<TcpStream> = (0..220)
        .map(|_| TcpStream::connect(address).expect("connect to serve"))
        .collect();
    for partial in &mut silent[200..] {
        partial
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            .expect("half a request");
    }
    let opened = Instant::now();
    // The first scrape is answered (within the scraper's 10 s; in practice at once): the
    // oldest silent connections make room for it.
    let scrape = get(address, "/metrics");
    assert!(
        matches!(&scrape, Some((200, body)) if body.contains("k3sdoctor_up")),
        "no scrape answered while 220 connections stayed silent: {scrape:?}"
    );
    eprintln!(
        "a scrape answered {} ms after 220 silent connections opened",
        opened.elapsed().as_millis()
    );
    // Every silent connection is closed by serve (end of file or a reset), after its
    // header-read timeout.
    for stream in &mut silent {
        stream.set_read_timeout(Some(SEEN)).expect("a read timeout");
        let mut byte = [0u8; 512];
        let mut closed_by_serve = || match stream.read(&mut byte) {
            Ok(0) => Some(true),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Some(false)
            }
            Err(_) => Some(true),
            // hyper may answer a timed-out head (408) before it closes.
            Ok(_) => None,
        };
        let closed = closed_by_serve().or_else(&mut closed_by_serve) == Some(true);
        assert!(closed, "a silent connection is still open");
    }
    eprintln!(
        "all 220 silent connections closed {} ms after they opened",
        opened.elapsed().as_millis()
    );
    // The watches kept their connections: renewals still arrive, nothing failed.
    let scrape = metrics(address);
    assert_eq!(sample(&scrape, "k3sdoctor_up"), Some(1.0), "{scrape}");
    assert_eq!(sample(&scrape, LEASE_EXPIRED), None, "{scrape}");
    let age = sample(&scrape, r#"k3sdoctor_lease_renew_age_seconds{lock="k3s"}"#)
        .expect("the k3s lock's renewal age");
    assert!(age < 10.0, "renewal age {age} s:\n{scrape}");
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    assert!(!out.stderr.contains(" WARN "), "{}", out.stderr);
}
