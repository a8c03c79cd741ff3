//! serve's datastore series through the binary: each server's size, in-use bytes and quota
//! from its metrics (the fake API server's `/metrics` and an etcd `:2381` answering on the
//! server's address), the p99 latencies between two polls while the counts grow, and every
//! series of a server gone once its metrics no longer say it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::datastore_metrics::{ETCD, RECORDED, one_server, with_size};
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::renewed_now;
use crate::support::scrape::{metrics, sample, start_serve};
use crate::support::wait::wait_for;

/// Single-object reads of one more resource, `slow` of them between 1.25 s and 1.5 s, added
/// after the recorded answer's last latency bucket.
fn with_slow_gets(text: &str, slow: u64) -> String {
    let bounds = [
        "0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25", "1.5", "2", "3",
        "4", "5", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf",
    ];
    let series: String = bounds
        .iter()
        .map(|le| {
            let slower = *le == "+Inf" || le.parse::<f64>().unwrap() >= 1.5;
            format!(
                "etcd_request_duration_seconds_bucket{{operation=\"get\",type=\"widgets.example.com\",le=\"{le}\"}} {}\n",
                if slower { slow } else { 0 }
            )
        })
        .collect();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let last = lines
        .iter()
        .rposition(|l| l.starts_with("etcd_request_duration_seconds_bucket{"))
        .expect("the recorded answer has the latency histogram");
    lines.insert(last + 1, series.trim_end().to_string());
    lines.join("\n") + "\n"
}

/// etcd's recorded answer with an 8 GiB quota and `slow` more WAL fsyncs between 0.512 s and
/// 1.024 s.
fn etcd_with_slow_fsyncs(slow: u64) -> String {
    ETCD.lines()
        .map(|l| {
            if l.starts_with("etcd_server_quota_backend_bytes ") {
                return "etcd_server_quota_backend_bytes 8589934592".to_string();
            }
            let Some(rest) = l.strip_prefix("etcd_disk_wal_fsync_duration_seconds_bucket{le=\"")
            else {
                return l.to_string();
            };
            let (le, count) = rest.split_once("\"} ").unwrap();
            let slower = le == "+Inf" || le.parse::<f64>().unwrap() >= 1.024;
            let count: u64 = count.parse().unwrap();
            format!(
                "etcd_disk_wal_fsync_duration_seconds_bucket{{le=\"{le}\"}} {}",
                count + if slower { slow } else { 0 }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A plain-HTTP etcd metrics listener on `address`, answering whatever `body` holds, until
/// `stop`.
fn etcd_metrics_listener(address: &str, body: Arc<Mutex<String>>, stop: Arc<AtomicBool>) {
    let listener = TcpListener::bind(address).unwrap_or_else(|e| {
        panic!("etcd's metrics port {address} must be free for this test: {e}")
    });
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let body = body.lock().unwrap().clone();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
}

fn wait_until(address: std::net::SocketAddr, what: &str, mut cond: impl FnMut(&str) -> bool) {
    let mut last = String::new();
    let seen = wait_for(Duration::from_secs(60), || {
        last = metrics(address);
        cond(&last)
    });
    assert!(seen, "{what}; last scrape:\n{last}");
}

fn near(value: Option<f64>, expected: f64) -> bool {
    value.is_some_and(|v| (v - expected).abs() < 1e-6)
}

fn series_of<'a>(scrape: &'a str, server: &str) -> Vec<&'a str> {
    scrape
        .lines()
        .filter(|l| {
            l.starts_with("k3sdoctor_datastore_") && l.contains(&format!("server=\"{server}\""))
        })
        .collect()
}

#[test]
fn serve_publishes_each_servers_size_quota_and_interval_p99_and_drops_a_gone_server() {
    // Its own loopback address: a real etcd (the test bed's) may hold 127.0.0.1:2381.
    let fake = FakeApi::start_on("127.0.0.42");
    one_server(&fake);
    let ip = fake.addr().ip().to_string();
    // Here etcd listens beside the fake, on the Node's own address.
    let mut node = fake.get("Node", None, "s1").expect("Node s1");
    node["metadata"]["annotations"]["etcd.k3s.cattle.io/node-address"] = serde_json::json!(ip);
    fake.put(node);
    let apiserver = |slow| with_slow_gets(&with_size(RECORDED, 1_500_000_000), slow);
    fake.set_metrics(apiserver(0));
    let etcd = Arc::new(Mutex::new(etcd_with_slow_fsyncs(0)));
    let etcd_stop = Arc::new(AtomicBool::new(false));
    etcd_metrics_listener(
        &format!("{ip}:2381"),
        Arc::clone(&etcd),
        Arc::clone(&etcd_stop),
    );

    let (serve, address) = start_serve(
        k3sdoctor(["serve"])
            .cluster(&fake, Role::Admin)
            .env("K3SDOCTOR_TEST_POLL_EVERY_MS", "1000"),
    );
    // The counts grow as a live server's do: every interval between two polls holds slow
    // reads and slow fsyncs, and nothing faster.
    let grown = AtomicU64::new(0);
    let growing = AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while growing.load(Ordering::Relaxed) {
                let n = grown.fetch_add(10, Ordering::Relaxed) + 10;
                fake.set_metrics(apiserver(n));
                *etcd.lock().unwrap() = etcd_with_slow_fsyncs(n);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let object =
            r#"k3sdoctor_datastore_latency_p99_seconds{server="s1",measure="object_request"}"#;
        let fsync = r#"k3sdoctor_datastore_latency_p99_seconds{server="s1",measure="wal_fsync"}"#;
        wait_until(
            address,
            "s1's sizes from etcd and the p99s of an interval",
            |m| {
                sample(m, r#"k3sdoctor_datastore_size_bytes{server="s1"}"#) == Some(73_400_320.0)
                && sample(m, r#"k3sdoctor_datastore_in_use_bytes{server="s1"}"#)
                    == Some(54_525_952.0)
                && sample(m, r#"k3sdoctor_datastore_quota_bytes{server="s1"}"#)
                    == Some(8_589_934_592.0)
                // Only slow reads in the interval: p99 within the 1.25–1.5 s bucket.
                && near(sample(m, object), 1.25 + 0.25 * 0.99)
                // Only slow fsyncs: within 0.512–1.024 s, where the lifetime p99 is ~2 ms.
                && near(sample(m, fsync), 0.512 + 0.512 * 0.99)
            },
        );
        growing.store(false, Ordering::Relaxed);
    });

    // etcd's metrics no longer answer: no in-use bytes, and the quota is etcd's default
    // again (nothing in node-args), the size the apiserver's.
    etcd_stop.store(true, Ordering::Relaxed);
    wait_until(address, "s1 without etcd's own metrics", |m| {
        sample(m, r#"k3sdoctor_datastore_in_use_bytes{server="s1"}"#).is_none()
            && sample(m, r#"k3sdoctor_datastore_size_bytes{server="s1"}"#) == Some(1.5e9)
            && sample(m, r#"k3sdoctor_datastore_quota_bytes{server="s1"}"#) == Some(2_147_483_648.0)
            && !m.contains("measure=\"wal_fsync\"")
    });

    // The apiserver's answer says nothing of the datastore any more: every series of s1 goes.
    fake.set_metrics("# HELP up nothing of the datastore\nprocess_start_time_seconds 1\n");
    wait_until(address, "no series of s1", |m| {
        series_of(m, "s1").is_empty() && m.contains("k3sdoctor_up 1")
    });
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

/// The near-quota finding of serve's `/report`, once one says what `pace` holds.
fn near_quota_message(address: std::net::SocketAddr, pace: &str) -> String {
    let mut last = String::new();
    let seen = wait_for(Duration::from_secs(60), || {
        let Some((200, body)) = crate::support::scrape::get(address, "/report") else {
            return false;
        };
        let report: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        last = crate::support::report_checks::every_finding(&report)
            .into_iter()
            .find(|f| f["code"] == "etcd-db-near-quota")
            .and_then(|f| f["message"].as_str().map(str::to_string))
            .unwrap_or_default();
        last.contains(pace)
    });
    assert!(
        seen,
        "no near-quota finding saying {pace:?}; last: {last:?}"
    );
    last
}

/// One read says nothing of a pace; once the server's clock has moved on ten minutes and the
/// size grew, serve's near-quota finding says how fast and when the quota is reached.
#[test]
fn serve_says_how_fast_a_member_near_its_quota_grows_between_polls() {
    let fake = FakeApi::start_on("127.0.0.43");
    one_server(&fake);
    // Locks renewed on the server's clock: every lock frozen beside a member near its quota
    // would be NOSPACE, not "near".
    let renew = |ahead: jiff::SignedDuration| {
        for name in ["k3s", "k3s-etcd"] {
            let mut lease = renewed_now(name, "s1");
            lease["spec"]["renewTime"] = serde_json::json!(
                (jiff::Timestamp::now() + ahead)
                    .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
                    .to_string()
            );
            fake.put(lease);
        }
    };
    renew(jiff::SignedDuration::ZERO);
    const MIB: u64 = 1024 * 1024;
    fake.set_metrics(with_size(RECORDED, 1700 * MIB));
    let (serve, address) = start_serve(
        k3sdoctor(["serve"])
            .cluster(&fake, Role::Admin)
            .env("K3SDOCTOR_TEST_POLL_EVERY_MS", "300"),
    );
    let first = near_quota_message(address, "uses 1.7 GiB of its 2.0 GiB quota");
    assert!(!first.contains("grew"), "{first}");

    let ten_minutes = jiff::SignedDuration::from_mins(10);
    fake.set_clock_ahead(ten_minutes);
    renew(ten_minutes);
    fake.set_metrics(with_size(RECORDED, 1800 * MIB));
    let growing = near_quota_message(address, "reaches the quota in about");
    assert!(
        // 248 MiB of room at about 600 MiB an hour (the polls are ten minutes and a few
        // seconds apart).
        growing.contains("it grew 100.0 MiB in the last 10m (")
            && growing.contains("reaches the quota in about 2"),
        "{growing}"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}
