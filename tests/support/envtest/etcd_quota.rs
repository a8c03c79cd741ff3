//! A bed whose etcd runs with a small quota and serves its metrics where k3s and RKE2 serve
//! them (`--etcd-expose-metrics`): up.sh takes no etcd flags, so the bed's etcd is restarted
//! with the same data, name and ports plus `--quota-backend-bytes` and
//! `--listen-metrics-urls`. The kube-apiserver reconnects on its own, as it does when a real
//! server's etcd restarts. The new process is recorded in `run/etcd.pid`, so the bed's
//! teardown stops it as it stops the one up.sh started.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::EnvTest;
use super::etcd_gateway::EtcdGateway;
use crate::support::wait::wait_for;

/// etcd's metrics port. k3sdoctor reads `http://<member's address>:2381/metrics` and nothing
/// else, so the test's etcd must take this port itself; no other test may listen on it.
pub(crate) const ETCD_METRICS_PORT: u16 = 2381;

/// etcd stops within a second on TERM; it is KILLed after this.
const STOP_LIMIT: Duration = Duration::from_secs(10);
/// A restart reopens a database of a few MiB: healthy in well under a second.
const START_LIMIT: Duration = Duration::from_secs(30);

impl EnvTest {
    /// Restarts this bed's etcd with `--quota-backend-bytes=quota` and its metrics on
    /// `127.0.0.1:2381`; returns once etcd is healthy, its metrics answer and the apiserver
    /// serves from it again. Panics with the reason when 2381 is taken or etcd does not come
    /// back.
    pub(crate) fn restart_etcd_with_quota(&self, quota: u64) -> EtcdGateway {
        let metrics = format!("127.0.0.1:{ETCD_METRICS_PORT}");
        if let Err(e) = TcpListener::bind(&metrics) {
            panic!(
                "{metrics} is taken ({e}): this test's etcd must serve its metrics there, the port \
                 k3sdoctor reads etcd's metrics on; stop whatever listens on it (a local k3s or RKE2 \
                 server with --etcd-expose-metrics?) and run the test again"
            );
        }
        let dir = self.dir.path();
        let pid_file = dir.join("run/etcd.pid");
        let old: i32 = read_trimmed(&pid_file)
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()));
        let args = command_line(old);
        let data_dir = dir.join("etcd").display().to_string();
        assert!(
            args.contains(&data_dir),
            "pid {old} in {} is not this bed's etcd: {args:?}",
            pid_file.display()
        );
        stop(old);

        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(dir.join("logs/etcd.log"))
            .expect("the bed's etcd log opens for appending");
        let mut child = Command::new(&args[0])
            .args(&args[1..])
            .arg(format!("--quota-backend-bytes={quota}"))
            .arg(format!("--listen-metrics-urls=http://{metrics}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the etcd log's handle"))
            .stderr(log)
            // Its own process group, as up.sh's setsid gives it: an interrupt of the test run
            // reaches the bed only through its teardown.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("restart {}: {e}", args[0]));
        let pid = child.id();
        std::fs::write(&pid_file, format!("{pid}\n"))
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()));
        let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            // Reaped here when the teardown stops it, so it leaves no zombie behind.
            let exited = exited.clone();
            std::thread::spawn(move || {
                let _ = child.wait();
                exited.store(true, std::sync::atomic::Ordering::SeqCst);
            });
        }

        let gateway = EtcdGateway::new(&self.etcd_url());
        let metrics_url = format!("http://{metrics}/metrics");
        let up = wait_for(START_LIMIT, || {
            exited.load(std::sync::atomic::Ordering::SeqCst)
                || (gateway.healthy()
                    && gateway.get_url(&metrics_url).is_ok_and(|(code, body)| {
                        code == 200 && body.contains("etcd_server_quota")
                    }))
        });
        if exited.load(std::sync::atomic::Ordering::SeqCst) || !up {
            let log = std::fs::read_to_string(dir.join("logs/etcd.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            let why = if log.contains("address already in use") {
                format!("{metrics} or one of its ports was taken")
            } else {
                "see its log".to_string()
            };
            panic!(
                "the bed's etcd did not come back with --quota-backend-bytes and --listen-metrics-urls \
                 ({why}):\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        let admin = self.admin();
        assert!(
            wait_for(START_LIMIT, || admin
                .request(
                    "GET",
                    "/api/v1/namespaces/default",
                    "application/json",
                    None
                )
                .is_ok()),
            "the kube-apiserver did not read from the restarted etcd within {START_LIMIT:?}"
        );
        gateway
    }

    /// etcd's client URL as up.sh recorded it.
    pub(crate) fn etcd_url(&self) -> String {
        let env = std::fs::read_to_string(self.dir.path().join("env")).expect("up.sh's env file");
        super::key_value(&env, "etcd").expect("an etcd= line in up.sh's env file")
    }
}

fn read_trimmed(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .to_string()
}

/// The arguments `pid` was started with (binary first).
fn command_line(pid: i32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_else(|e| panic!("the bed's etcd (pid {pid}) is not running: {e}"));
    raw.split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// TERM, then KILL after `STOP_LIMIT`; returns once the process is gone or a zombie (which
/// holds no port any more; up.sh's shell has exited, so init reaps it).
fn stop(pid: i32) {
    // SAFETY: kill(2) with a pid read from the bed's own pid file and checked above to be
    // this bed's etcd.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    if !wait_for(STOP_LIMIT, || gone(pid)) {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        assert!(
            wait_for(STOP_LIMIT, || gone(pid)),
            "the bed's etcd (pid {pid}) survived KILL"
        );
    }
}

fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(status) => status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
        Err(_) => true,
    }
}
