//! A k3s/RKE2 simulator: server "processes" that campaign for `<prog>` and
//! `<prog>-etcd` with client-go/wrangler semantics against the fake API server, exit when they
//! lose a lock they held and restart after a delay, and run the snapshot ConfigMap controller
//! the way affected or fixed versions do. Timings are scaled down so a split → fix → verify
//! scenario runs in seconds.

pub(crate) mod elector;
pub(crate) mod go_json;
pub(crate) mod go_time;
pub(crate) mod quantity;
pub(crate) mod record;
pub(crate) mod snapshot_controller;
pub(crate) mod snapshot_entry;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use elector::{Elector, Step, Timing};
use record::Record;
use snapshot_controller::ControllerConfig;
pub(crate) use snapshot_entry::S3ConfigShape;

use super::fake_api::FakeApi;
use super::objects::{NodeSpec, node};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockStyle {
    /// ≤ 1.23.
    ConfigMap,
    /// 1.24–1.27: ConfigMap primary, Lease secondary.
    MultiLock,
    /// ≥ 1.28.
    Lease,
}

impl LockStyle {
    pub(crate) fn uses_lease(self) -> bool {
        self != LockStyle::ConfigMap
    }

    pub(crate) fn uses_configmap(self) -> bool {
        self != LockStyle::Lease
    }
}

#[derive(Clone, Debug)]
pub(crate) struct SimServer {
    pub node: String,
    pub hostname: String,
}

#[derive(Clone, Debug)]
pub(crate) struct SimConfig {
    pub prog: &'static str,
    pub version: String,
    pub style: LockStyle,
    /// The `-etcd` callback does not start the informers (k3s-io/k3s#10046).
    pub affected: bool,
    /// Only CRs with `spec.metadata` get an entry (k3s ≥ v1.28.4 / k3s-io/k3s#8835).
    pub require_metadata: bool,
    /// The `s3Config` struct of the simulated version's ConfigMap entries.
    pub s3_shape: S3ConfigShape,
    pub servers: Vec<SimServer>,
    pub lease: Duration,
    pub renew_deadline: Duration,
    pub retry: Duration,
    pub restart_delay: Duration,
}

impl SimConfig {
    /// Servers whose hostname is their node name, with scaled timings (lease 3 s, renew
    /// deadline 2 s, retry 200 ms, restart after 1 s).
    pub(crate) fn new(
        prog: &'static str,
        version: &str,
        style: LockStyle,
        affected: bool,
        nodes: &[&str],
    ) -> SimConfig {
        SimConfig {
            prog,
            version: version.to_string(),
            style,
            affected,
            require_metadata: true,
            s3_shape: S3ConfigShape::Embedded,
            servers: nodes
                .iter()
                .map(|n| SimServer {
                    node: n.to_string(),
                    hostname: n.to_string(),
                })
                .collect(),
            lease: Duration::from_secs(3),
            renew_deadline: Duration::from_secs(2),
            retry: Duration::from_millis(200),
            restart_delay: Duration::from_secs(1),
        }
    }

    pub(crate) fn core_lock(&self) -> String {
        self.prog.to_string()
    }

    pub(crate) fn etcd_lock(&self) -> String {
        format!("{}-etcd", self.prog)
    }

    pub(crate) fn controller(&self) -> ControllerConfig {
        ControllerConfig {
            prog: self.prog,
            require_metadata: self.require_metadata,
            s3_shape: self.s3_shape,
        }
    }
}

/// One server process's state across its lifetimes.
#[derive(Default)]
struct Process {
    down_until: Option<Instant>,
    next_try: Option<Instant>,
    /// [etcd, core]: the `-etcd` election registers handlers, the core one starts factories.
    electors: [Elector; 2],
    etcd_registered_at: Option<Instant>,
    factories_started_at: Option<Instant>,
}

#[derive(Default)]
struct Shared {
    log: Vec<String>,
    restarts: BTreeMap<String, u32>,
}

pub(crate) struct K3sSim {
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
}

impl K3sSim {
    /// Creates the server Nodes and starts every server process.
    pub(crate) fn start(fake: Arc<FakeApi>, config: SimConfig) -> K3sSim {
        for s in &config.servers {
            fake.put(node(&NodeSpec {
                name: &s.node,
                hostname: &s.hostname,
                version: &config.version,
                prog: config.prog,
                server: true,
                ready: true,
            }));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let thread = {
            let (stop, shared) = (stop.clone(), shared.clone());
            std::thread::spawn(move || run(&fake, &config, &stop, &shared))
        };
        K3sSim {
            stop,
            shared,
            thread: Some(thread),
        }
    }

    /// Writes both locks as if `core` and `etcd` (hostnames) had just renewed them: the split
    /// the bug needs, which the processes then keep up by themselves. Call before `start`.
    pub(crate) fn seed_holders(fake: &FakeApi, config: &SimConfig, core: &str, etcd: &str) {
        let now = SystemTime::now();
        for (lock, holder) in [(config.core_lock(), core), (config.etcd_lock(), etcd)] {
            let record = Record {
                holder: holder.to_string(),
                lease_seconds: config.lease.as_secs() as i64,
                acquire: now,
                renew: now,
                transitions: 1,
            };
            let objects = record::read(fake, config.style, &lock);
            assert!(
                objects.write(fake, config.style, &lock, &record),
                "seed {lock}"
            );
        }
    }

    pub(crate) fn log(&self) -> Vec<String> {
        self.shared.lock().unwrap().log.clone()
    }

    pub(crate) fn restarts(&self, node: &str) -> u32 {
        self.shared
            .lock()
            .unwrap()
            .restarts
            .get(node)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for K3sSim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The current holder of a lock as a client reads it (the Lease, or the annotation on ≤ 1.23).
pub(crate) fn holder(fake: &FakeApi, config: &SimConfig, lock: &str) -> Option<String> {
    record::read(fake, config.style, lock)
        .record(config.style)
        .map(|(r, _)| r.holder)
}

fn run(fake: &FakeApi, config: &SimConfig, stop: &AtomicBool, shared: &Mutex<Shared>) {
    let timing = Timing {
        lease: config.lease,
        renew_deadline: config.renew_deadline,
    };
    let mut processes: Vec<Process> = config.servers.iter().map(|_| Process::default()).collect();
    let locks = [config.etcd_lock(), config.core_lock()];
    let say = |line: String| shared.lock().unwrap().log.push(line);
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        for (server, p) in config.servers.iter().zip(processes.iter_mut()) {
            if let Some(until) = p.down_until {
                if now < until {
                    continue;
                }
                *p = Process::default();
                say(format!("{} restarted", server.node));
            }
            if p.next_try.is_some_and(|t| now < t) {
                continue;
            }
            p.next_try = Some(now + config.retry);
            for (i, lock) in locks.iter().enumerate() {
                match p.electors[i].step(fake, config.style, lock, &server.hostname, &timing, now) {
                    Step::Leading { newly: true } => {
                        say(format!("{} acquired {lock}", server.node));
                        if i == 0 {
                            p.etcd_registered_at = Some(now);
                        } else {
                            p.factories_started_at = Some(now);
                        }
                    }
                    Step::Lost => {
                        // wrangler: logrus.Fatalf("leaderelection lost for ...") → systemd restart.
                        say(format!("{} lost {lock}: exiting", server.node));
                        p.down_until = Some(now + config.restart_delay);
                        *shared
                            .lock()
                            .unwrap()
                            .restarts
                            .entry(server.node.clone())
                            .or_default() += 1;
                        break;
                    }
                    _ => {}
                }
            }
            if p.down_until.is_none() && controller_runs(p, config.affected) {
                snapshot_controller::sync(fake, &config.controller());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fixed versions start the informers from the `-etcd` callback; affected ones only when the
/// core callback's `sc.Start` ran after the `-etcd` handlers were registered (k3s `pkg/server/server.go`).
fn controller_runs(p: &Process, affected: bool) -> bool {
    if !p.electors[0].leader {
        return false;
    }
    if !affected {
        return true;
    }
    match (p.etcd_registered_at, p.factories_started_at) {
        (Some(registered), Some(started)) => p.electors[1].leader && started >= registered,
        _ => false,
    }
}
