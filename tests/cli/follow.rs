//! `leases follow` end to end: the built binary, the fake API server, and simulated k3s/RKE2
//! servers that campaign for the locks like client-go and wrangler do.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::follow_fix;
use crate::support::fake_api::{FakeApi, Fault, FaultAction, RequestRecord, Role};
use crate::support::harness::k3sdoctor;
use crate::support::k3s_sim::{K3sSim, LockStyle, SimConfig, holder};
use crate::support::objects::{
    NOW, NodeSpec, agent, apiserver_identity, lease, node, server, snapshot_cr,
};
use crate::support::readme::{read_only_role_without_watch, readme_namespaced_role};
use crate::support::wait::wait_for;

const AFFECTED: &str = "v1.29.4+k3s1";
const WAIT: Duration = Duration::from_secs(20);

fn snapshot_entries(fake: &FakeApi, prog: &str) -> usize {
    fake.get(
        "ConfigMap",
        Some("kube-system"),
        &format!("{prog}-etcd-snapshots"),
    )
    .and_then(|cm| cm["data"].as_object().map(|d| d.len()))
    .unwrap_or(0)
}

/// Three simulated servers with `k3s` on s1 and `k3s-etcd` on s2, settled.
fn split_cluster(
    prog: &'static str,
    version: &str,
    style: LockStyle,
) -> (Arc<FakeApi>, SimConfig, K3sSim) {
    let fake = Arc::new(FakeApi::start());
    let config = SimConfig::new(prog, version, style, true, &["s1", "s2", "s3"]);
    K3sSim::seed_holders(&fake, &config, "s1", "s2");
    fake.put(agent("w1", version));
    let sim = K3sSim::start(fake.clone(), config.clone());
    let settled = wait_for(WAIT, || {
        let log = sim.log();
        log.contains(&format!("s1 acquired {prog}"))
            && log.contains(&format!("s2 acquired {prog}-etcd"))
    });
    assert!(settled, "simulated servers did not settle: {:?}", sim.log());
    (fake, config, sim)
}

fn split_then_follow(prog: &'static str, version: &str, style: LockStyle) {
    let (fake, config, sim) = split_cluster(prog, version, style);
    let core = config.core_lock();

    let before = k3sdoctor(["leases", "-o", "json"])
        .cluster(&fake, Role::Admin)
        .run();
    before.code(1);
    let report: Value = before.json();
    assert_eq!(report["findings"][0]["code"], "lease-split", "{report:#}");

    // The snapshot controller on s2 is registered but idle: the CR never reaches the ConfigMap.
    fake.put(snapshot_cr("s2", 1_717_156_805, true));
    assert!(!wait_for(Duration::from_millis(1500), || snapshot_entries(
        &fake, prog
    ) > 0));

    let fix = k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "30s"])
        .cluster(&fake, Role::Admin)
        .run();
    fix.code(0)
        .stdout_has(&format!("Plan: move {core} from s1 to s2"))
        .stderr_has("server-side dry run: accepted")
        .stderr_has(&format!("s2 renewed {core} itself"))
        .stdout_has("healthy: no findings");
    for copy in if style == LockStyle::MultiLock {
        vec!["configmaps", "leases"]
    } else {
        vec!["leases"]
    } {
        assert!(
            fake.writes().iter().any(|w| w.starts_with("PUT /")
                && w.contains(&format!("/{copy}/{core}?"))
                && w.contains("fieldManager=k3sdoctor")
                && w.ends_with("-> 200")),
            "no write of {copy}: {:?}",
            fake.writes()
        );
    }

    assert!(
        wait_for(WAIT, || sim.restarts("s1") >= 1),
        "s1 did not exit: {:?}",
        sim.log()
    );
    assert_eq!(holder(&fake, &config, &core).as_deref(), Some("s2"));
    k3sdoctor(["leases"])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(0);
    // The verified move left one LockMoved Event on the Lease (the ConfigMap copy related).
    let events = crate::repair_events::events(&fake);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["reason"], "LockMoved");
    assert_eq!(events[0]["regarding"]["kind"], "Lease");
    assert_eq!(events[0]["regarding"]["name"], core.as_str());
    assert_eq!(
        events[0]["related"]["kind"],
        if style == LockStyle::Lease {
            Value::Null
        } else {
            Value::from("ConfigMap")
        }
    );
    assert!(
        wait_for(WAIT, || snapshot_entries(&fake, prog) == 1),
        "ConfigMap did not catch up: {:?}",
        sim.log()
    );
}

#[test]
fn split_is_repaired_and_verified_on_a_lease_version() {
    split_then_follow("k3s", AFFECTED, LockStyle::Lease);
}

#[test]
fn split_is_repaired_on_a_multilock_version_with_both_copies_written() {
    split_then_follow("k3s", "v1.27.10+k3s2", LockStyle::MultiLock);
}

#[test]
fn split_is_repaired_on_rke2() {
    split_then_follow("rke2", "v1.29.5+rke2r1", LockStyle::Lease);
}

#[test]
fn takeover_that_never_happens_reports_the_observed_holders() {
    let (fake, _config, _sim) = split_cluster("k3s", AFFECTED, LockStyle::Lease);
    let out = k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--force",
        "--to",
        "w1",
        "--timeout",
        "30s",
    ])
    .cluster(&fake, Role::Admin)
    .run();
    out.code(4)
        .stderr_has("took k3s instead of w1")
        .stderr_has("holders seen: s1 -> w1 -> s");
}

fn static_split(extra: Vec<Value>) -> FakeApi {
    let fake = FakeApi::start();
    for o in [
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        agent("w1", AFFECTED),
    ]
    .into_iter()
    .chain([lease("k3s", "s1", 1), lease("k3s-etcd", "s2", 1)])
    .chain(extra)
    {
        fake.put(o);
    }
    fake
}

#[test]
fn without_fix_only_the_plan_is_shown() {
    let fake = static_split(vec![]);
    k3sdoctor(["leases", "follow", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(1)
        .stdout_has("Plan: move k3s from s1 to s2 (node s2)")
        .stdout_has("the k3s process on s1")
        .stderr_has("nothing was written");
    assert!(fake.writes().is_empty());
}

#[test]
fn aligned_locks_need_nothing() {
    let fake = FakeApi::start();
    for o in [
        server("s1", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
    ] {
        fake.put(o);
    }
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(0)
        .stdout_has("already held by s1");
    assert!(fake.writes().is_empty());
}

#[test]
fn a_target_that_is_not_a_live_server_is_refused() {
    let fake = static_split(vec![]);
    k3sdoctor([
        "leases", "follow", "--fix", "--yes", "--to", "w1", "--now", NOW,
    ])
    .cluster(&fake, Role::Admin)
    .run()
    .code(2)
    .one_line_error()
    .stderr_has("target w1 is not a server");
    assert!(fake.writes().is_empty());
}

#[test]
fn quorum_at_risk_is_refused_unless_forced() {
    let down = node(&NodeSpec {
        name: "s3",
        hostname: "s3",
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: false,
    });
    let fake = static_split(vec![down]);
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("etcd would lose quorum while s1 restarts (3 etcd members, 2 Ready, 1 Ready during the restart, quorum 2)");
    assert!(fake.writes().is_empty());

    k3sdoctor([
        "leases",
        "follow",
        "--fix",
        "--yes",
        "--force",
        "--no-wait",
        "--now",
        NOW,
    ])
    .cluster(&fake, Role::Admin)
    .run()
    .code(0)
    .stdout_has("FORCED:");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
}

#[test]
fn a_read_only_token_is_stopped_before_any_write() {
    let fake = static_split(vec![]);
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("not allowed to update leases.coordination.k8s.io \"k3s\" in kube-system");
    assert!(fake.writes().is_empty());
}

#[test]
fn no_terminal_and_no_yes_writes_nothing() {
    let fake = static_split(vec![]);
    k3sdoctor(["leases", "follow", "--fix", "--now", NOW])
        .cluster(&fake, Role::Admin)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("re-run with --yes");
    assert!(fake.writes().is_empty());
}

/// docs/repairs.md's order: the means to confirm comes before the permission check, so a user
/// without the right and without --yes off a terminal is told about --yes (exit 2), not the role.
#[test]
fn without_a_terminal_the_missing_yes_is_said_before_the_missing_permission() {
    let fake = static_split(vec![]);
    k3sdoctor(["leases", "follow", "--fix", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("re-run with --yes");
    assert!(fake.writes().is_empty());
}

#[test]
fn a_dump_cannot_be_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    crate::support::objects::write_dump(
        &dump,
        &[
            server("s1", AFFECTED),
            lease("k3s", "s1", 1),
            lease("k3s-etcd", "s1", 1),
        ],
    );
    k3sdoctor(["leases", "follow", "--fix", "--yes", "--from-file"])
        .arg(dump.display().to_string())
        .run()
        .code(2)
        .one_line_error()
        .stderr_has("a dump cannot be repaired");
}

#[test]
fn a_conflict_is_re_read_and_the_same_change_retried() {
    let fake = static_split(vec![]);
    // Only the real write: the dry run carries dryRun=All before fieldManager.
    fake.inject(Fault::status("PUT", "leases/k3s?&fieldManager", 409).times(1));
    let out = follow_fix(&fake, &["--no-wait", "-v"]);
    out.code(0)
        .stderr_has("conflict writing Lease kube-system/k3s");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
}

#[test]
fn a_lock_that_moves_during_the_run_stops_the_repair() {
    let fake = Arc::new(static_split(vec![]));
    // Hold the dry run long enough for another server to take the lock meanwhile.
    fake.inject(Fault::new(
        Some("PUT"),
        "dryRun=All",
        FaultAction::Delay(Duration::from_millis(800)),
    ));
    // Only this run's requests: the set-up's own dry runs must not release the writer.
    fake.clear_requests();
    let mover = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            // Once the dry run has arrived (and is held), not after a fixed time: a slow start
            // under load would otherwise let the change land before the read.
            crate::support::wait::wait_for(Duration::from_secs(60), || {
                fake.requests()
                    .iter()
                    .any(|r| r.method == "PUT" && r.query.contains("dryRun=All"))
            });
            fake.put(lease("k3s", "s3", 0));
        })
    };
    let out = follow_fix(&fake, &["--no-wait"]);
    mover.join().unwrap();
    out.code(4)
        .stderr_has("the lock changed since the plan")
        .stderr_has("nothing was written");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s3");
    // The only write besides the dry run is the Event that says the move did not happen.
    assert!(
        fake.writes()
            .iter()
            .all(|w| w.contains("dryRun=All") || w.starts_with("POST /apis/events.k8s.io/")),
        "{:?}",
        fake.writes()
    );
}

/// Runs `leases follow --fix` on a pseudo-terminal (util-linux `script`) and answers the
/// confirmation prompt with `answer`.
fn follow_on_a_terminal(fake: &FakeApi, answer: &str) -> (i32, String) {
    let run = k3sdoctor(Vec::<String>::new());
    let kubeconfig = fake.write_kubeconfig(run.home(), Role::Admin);
    let command = format!(
        "{} leases follow --fix --no-wait --now {NOW} --kubeconfig {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        kubeconfig.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_clear()
        .env("HOME", run.home())
        .env("TERM", "dumb")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script");
    // The answer waits in the terminal's input until the prompt reads it; stdin stays open
    // until the command has finished, so the terminal never sees an early end of input.
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, answer.as_bytes()).unwrap();
    let reader = {
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut screen = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut screen);
            screen
        })
    };
    let status = child.wait().unwrap();
    drop(stdin);
    let out = std::process::Output {
        status,
        stdout: reader.join().unwrap().into_bytes(),
        stderr: Vec::new(),
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn on_a_terminal_the_user_is_asked_and_no_means_nothing_is_written() {
    let fake = static_split(vec![]);
    let (code, screen) = follow_on_a_terminal(&fake, "n\n");
    assert_eq!(code, 1, "{screen}");
    // The prompt names the cluster (context and server URL), the lock, and the target by
    // hostname and node name.
    let prompt = format!(
        "On context fake ({}): move lock kube-system/k3s from s1 to the server with hostname s2 (node s2)?",
        fake.url().trim_end_matches('/')
    );
    // Wrapped between words at the terminal's width (see the 80-column test below).
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat(&screen).contains(&prompt), "{prompt}\n{screen}");
    assert!(screen.contains("declined: nothing was written"), "{screen}");
    assert!(
        fake.writes().iter().all(|w| w.contains("dryRun=All")),
        "{:?}",
        fake.writes()
    );

    let (code, screen) = follow_on_a_terminal(&fake, "y\n");
    assert_eq!(code, 0, "{screen}");
    assert_eq!(fake.lock_holder("Lease", "k3s").unwrap(), "s2");
}

#[test]
fn taking_over_a_released_lock_restores_its_duration() {
    // release() left holderIdentity "" and a 1 s duration: written back as it was, a third
    // server would take the lock a second later.
    let fake = FakeApi::with_objects([
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        lease("k3s", "", 1),
        lease("k3s-etcd", "s2", 1),
    ]);
    follow_fix(&fake, &["--no-wait"])
        .stdout_has("leaseDurationSeconds 1 -> 45 (the released record's)");
    let written = fake
        .get("Lease", Some("kube-system"), "k3s")
        .expect("the lease");
    assert_eq!(written["spec"]["holderIdentity"], "s2");
    assert_eq!(written["spec"]["leaseDurationSeconds"], 45);
}

#[test]
fn the_plan_takes_its_timings_from_the_record() {
    let mut core = lease("k3s", "s1", 1);
    let mut etcd = lease("k3s-etcd", "s2", 1);
    core["spec"]["leaseDurationSeconds"] = serde_json::json!(15);
    etcd["spec"]["leaseDurationSeconds"] = serde_json::json!(15);
    let fake = FakeApi::with_objects([
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        core,
        etcd,
    ]);
    let out = k3sdoctor(["leases", "follow", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    out.stdout_has("exits within the 10s renew deadline")
        .stdout_has("  timings: LEASE   RENEW DEADLINE   RETRY\n           15s     10s              2s\n           (this cluster's lock lasts 15s instead of k3s's usual 45s");
    assert!(!out.stdout.contains("30s renew deadline"), "{}", out.stdout);
    // Plain words by default; wrangler's terms with -v and in JSON.
    assert!(!out.stdout.contains("wrangler"), "{}", out.stdout);
    k3sdoctor(["leases", "follow", "-v", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .stdout_has("not wrangler's default (a setting this version's wrangler does not read");
    let plan: serde_json::Value = k3sdoctor(["leases", "follow", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .json();
    let source = plan.pointer("/plan/timing/source");
    assert!(
        source
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.contains("renew deadline is not recorded")),
        "{plan}"
    );
}

/// s1's OS hostname contains "localhost": k3s annotated it with its node name, while it
/// campaigns as "localhost.localdomain". s2 and s3 have real hostnames.
fn localhost_cluster() -> FakeApi {
    let spec = |name: &'static str, hostname: &'static str| NodeSpec {
        name,
        hostname,
        version: AFFECTED,
        prog: "k3s",
        server: true,
        ready: true,
    };
    FakeApi::with_objects([
        node(&spec("s1", "s1")),
        node(&spec("s2", "web-2")),
        node(&spec("s3", "web-3")),
        lease("k3s", "web-2", 1),
        lease("k3s-etcd", "localhost.localdomain", 1),
    ])
}

#[test]
fn a_localhost_holder_is_mapped_and_followed_by_its_real_identity() {
    let fake = localhost_cluster();
    let report: Value = k3sdoctor(["leases", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run()
        .json();
    let etcd = &report["locks"][1];
    assert_eq!(etcd["node"]["name"], "s1", "{report:#}");
    assert_eq!(etcd["node"]["matchedBy"], "localhost-hostname");
    // The identity written is the one s1 campaigns with, never its node name.
    follow_fix(&fake, &["--no-wait"]);
    assert_eq!(
        fake.lock_holder("Lease", "k3s").as_deref(),
        Some("localhost.localdomain")
    );
}

#[test]
fn follow_to_a_node_whose_identity_cannot_be_established_is_refused() {
    let fake = localhost_cluster();
    // --to s1 names a node whose annotation is its node name while a localhost identity
    // campaigns here: writing "s1" could name a holder nobody campaigns as.
    follow_fix(&fake, &["--to", "s1"])
        .code(2)
        .one_line_error()
        .stderr_has("cannot establish the identity s1 campaigns with")
        .stderr_has("run `hostname` on s1");
    assert_eq!(fake.lock_holder("Lease", "k3s").as_deref(), Some("web-2"));
}

#[test]
fn follow_to_names_a_server_without_an_agent_by_its_hostname() {
    let identity = apiserver_identity("cp-1", 5);
    let fake = FakeApi::with_objects([
        server("s1", AFFECTED),
        server("s2", AFFECTED),
        server("s3", AFFECTED),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "cp-1", 1),
        identity,
    ]);
    follow_fix(&fake, &["--no-wait"]).stdout_has("to cp-1 (no Node: a server without an agent)");
    assert_eq!(fake.lock_holder("Lease", "k3s").as_deref(), Some("cp-1"));
    // --to works by that hostname too, and an unknown one is refused.
    follow_fix(&fake, &["--lease", "k3s-etcd", "--to", "cp-2", "--no-wait"])
        .code(2)
        .stderr_has("no live kube-apiserver has that hostname");
}

/// The requests of the takeover verification: those after the last real (not dry-run) write,
/// up to the fresh read of the cluster that follows it (its list of the Leases).
fn verification_requests(fake: &FakeApi) -> Vec<RequestRecord> {
    let requests = fake.requests();
    let write = requests
        .iter()
        .rposition(|r| r.method == "PUT" && !r.query.contains("dryRun"))
        .expect("a real write");
    requests[write + 1..]
        .iter()
        .take_while(|r| !is_lease_list(r))
        .cloned()
        .collect()
}

fn is_lease_list(r: &RequestRecord) -> bool {
    r.path.ends_with("/namespaces/kube-system/leases") && !r.query.contains("watch=")
}

/// A watch of one lock copy by name (`resource` is `leases` or `configmaps`).
fn is_watch_of(r: &RequestRecord, resource: &str, lock: &str) -> bool {
    r.method == "GET"
        && r.path
            .ends_with(&format!("/namespaces/kube-system/{resource}"))
        && r.query.contains("watch=true")
        && r.query
            .contains(&format!("fieldSelector=metadata.name%3D{lock}"))
}

/// GETs of one lock copy by its path: what polling does.
fn gets_of(requests: &[RequestRecord], resource: &str, lock: &str) -> usize {
    requests
        .iter()
        .filter(|r| r.method == "GET" && r.path.ends_with(&format!("/{resource}/{lock}")))
        .count()
}

/// The resourceVersion the run reported for its write of `object`.
fn written_resource_version(stderr: &str, object: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with(&format!("wrote {object} (resourceVersion ")))
        .unwrap_or_else(|| panic!("no write of {object}: {stderr}"));
    line.rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches(')')
        .to_string()
}

#[test]
fn verification_watches_each_written_copy_from_its_write_instead_of_polling() {
    for (version, style) in [
        (AFFECTED, LockStyle::Lease),
        ("v1.27.10+k3s2", LockStyle::MultiLock),
    ] {
        let (fake, _config, _sim) = split_cluster("k3s", version, style);
        let fix = k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "30s"])
            .cluster(&fake, Role::Admin)
            .run();
        fix.code(0).stderr_has("s2 renewed k3s itself");
        assert!(!fix.stderr.contains("polling"), "{}", fix.stderr);
        let during = verification_requests(&fake);
        let copies: &[(&str, &str)] = if style == LockStyle::MultiLock {
            &[("configmaps", "ConfigMap"), ("leases", "Lease")]
        } else {
            &[("leases", "Lease")]
        };
        for (resource, kind) in copies {
            let rv = written_resource_version(&fix.stderr, &format!("{kind} kube-system/k3s"));
            let watch = during
                .iter()
                .find(|r| is_watch_of(r, resource, "k3s"))
                .unwrap_or_else(|| panic!("no watch of {resource}/k3s: {during:#?}"));
            // From the write's resourceVersion: nothing between the write and the watch is
            // missed, and nothing is listed first.
            assert!(
                watch.query.contains(&format!("resourceVersion={rv}&"))
                    || watch.query.ends_with(&format!("resourceVersion={rv}")),
                "{watch:?}"
            );
            assert_eq!(watch.status, 200, "{watch:?}");
            assert_eq!(
                gets_of(&during, resource, "k3s"),
                0,
                "{resource}/k3s polled: {during:#?}"
            );
        }
    }
}

#[test]
fn without_the_watch_verb_verification_polls_and_says_so_once() {
    let (fake, _config, _sim) = split_cluster("k3s", AFFECTED, LockStyle::Lease);
    // The README's read-only role as it was before it allowed watches, and the repair role.
    let without_watch = read_only_role_without_watch();
    fake.add_rbac_user("carol-token", "carol", &without_watch);
    fake.add_rbac_user(
        "carol-token",
        "carol",
        &readme_namespaced_role("k3sdoctor-repair"),
    );
    let fix = k3sdoctor(["leases", "follow", "--fix", "--yes", "--timeout", "30s"])
        .kubeconfig_for(&fake.url(), "carol-token")
        .run();
    fix.code(0)
        .stderr_has("note: cannot watch lease kube-system/k3s (forbidden (403)")
        .stderr_has("s2 renewed k3s itself");
    let notes: Vec<&str> = fix
        .stderr
        .lines()
        .filter(|l| l.contains("polling instead"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", fix.stderr);
    assert!(notes[0].ends_with("; polling instead"), "{}", notes[0]);
    let during = verification_requests(&fake);
    let watches: Vec<_> = during
        .iter()
        .filter(|r| r.query.contains("watch=true"))
        .collect();
    assert_eq!(watches.len(), 1, "{watches:#?}");
    assert_eq!(watches[0].status, 403);
    assert!(gets_of(&during, "leases", "k3s") >= 1, "{during:#?}");
}

/// Renews the k3s Lease as s2 would, once `ready` holds for the requests so far.
fn renew_as_s2_when(
    fake: &Arc<FakeApi>,
    ready: impl Fn(&FakeApi) -> bool + Send + 'static,
) -> std::thread::JoinHandle<bool> {
    let fake = fake.clone();
    std::thread::spawn(move || {
        if !wait_for(WAIT, || ready(&fake)) {
            return false;
        }
        // The write kept the renewTime it read (1 s before NOW); s2's own renewal is later.
        fake.put(lease("k3s", "s2", 0));
        true
    })
}

fn real_write_landed(fake: &FakeApi) -> bool {
    fake.requests()
        .iter()
        .any(|r| r.method == "PUT" && !r.query.contains("dryRun") && r.status == 200)
}

#[test]
fn a_watch_the_server_ends_mid_verification_is_resumed_where_it_stopped() {
    let fake = Arc::new(static_split(vec![]));
    let watches = |fake: &FakeApi| {
        fake.requests()
            .into_iter()
            .filter(|r| is_watch_of(r, "leases", "k3s") && r.status == 200)
            .count()
    };
    let closer = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            // The server ends the first watch (as at its timeoutSeconds) before s2 renews.
            if wait_for(WAIT, || watches(&fake) == 1) {
                fake.end_watches();
            }
        })
    };
    let renewer = renew_as_s2_when(&fake, move |fake| watches(fake) >= 2);
    let fix = follow_fix(&fake, &["--timeout", "20s"]);
    closer.join().unwrap();
    assert!(
        renewer.join().unwrap(),
        "no second watch: {:#?}",
        fake.requests()
    );
    fix.code(0).stderr_has("s2 renewed k3s itself");
    assert!(!fix.stderr.contains("polling"), "{}", fix.stderr);
    let during = verification_requests(&fake);
    let rv = written_resource_version(&fix.stderr, "Lease kube-system/k3s");
    let resumed: Vec<_> = during
        .iter()
        .filter(|r| is_watch_of(r, "leases", "k3s"))
        .collect();
    assert_eq!(resumed.len(), 2, "{resumed:#?}");
    // Nothing happened to the lock in between: the resumed watch starts where the first did.
    for watch in &resumed {
        assert!(
            watch.query.contains(&format!("resourceVersion={rv}")),
            "{watch:?}"
        );
    }
    assert_eq!(gets_of(&during, "leases", "k3s"), 0, "{during:#?}");
}

#[test]
fn a_watch_that_expires_falls_back_to_polling_and_still_verifies() {
    let fake = Arc::new(static_split(vec![]));
    // The watch answers at once with the event a compacted resourceVersion gets (sample 131).
    fake.inject(
        Fault::raw(
            "GET",
            "watch=true",
            200,
            "application/json",
            concat!(
                r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"#,
                r#""status":"Failure","message":"too old resource version: 1005 (1009)","#,
                r#""reason":"Expired","code":410}}"#,
                "\n"
            ),
        )
        .times(1),
    );
    // s2 renews once the lock is being polled.
    let renewer = renew_as_s2_when(&fake, |fake| {
        real_write_landed(fake) && gets_of(&verification_requests(fake), "leases", "k3s") >= 1
    });
    let fix = follow_fix(&fake, &["--timeout", "20s"]);
    assert!(
        renewer.join().unwrap(),
        "never polled: {:#?}",
        fake.requests()
    );
    fix.code(0)
        .stderr_has(
            "note: cannot watch lease kube-system/k3s (the API server ended the watch: too old \
             resource version: 1005 (1009) (410)); polling instead",
        )
        .stderr_has("s2 renewed k3s itself");
}

/// `tmux` on a private socket, for a screen of exactly 80 columns as a user's terminal shows it.
fn tmux(socket: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("tmux")
        .args(["-L", socket, "-f", "/dev/null"])
        .args(args)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn at_80_columns_the_prompt_wraps_between_words_and_stays_once_on_screen() {
    let fake = static_split(vec![]);
    let run = k3sdoctor(Vec::<String>::new());
    let kubeconfig = fake.write_kubeconfig(run.home(), Role::Admin);
    let socket = format!("k3sdoctor-prompt-{}", std::process::id());
    let command = format!(
        "env -i HOME={} TERM=xterm {} leases follow --fix --no-wait --now {NOW} --kubeconfig {}; echo EXIT=$?; sleep 120",
        run.home().display(),
        env!("CARGO_BIN_EXE_k3sdoctor"),
        kubeconfig.display()
    );
    if tmux(
        &socket,
        &["new-session", "-d", "-x", "80", "-y", "60", &command],
    )
    .is_none()
    {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    // -J joins the lines the terminal wrapped: a line longer than 80 here is one that wrapped.
    let screen = || tmux(&socket, &["capture-pane", "-p", "-J"]).unwrap_or_default();
    let asked = wait_for(Duration::from_secs(20), || screen().contains("[y/N]"));
    if asked {
        tmux(&socket, &["send-keys", "n", "Enter"]);
    }
    let done = wait_for(Duration::from_secs(20), || screen().contains("EXIT="));
    let lines = screen();
    tmux(&socket, &["kill-server"]);
    assert!(asked && done, "{lines}");
    assert!(lines.contains("EXIT=1"), "{lines}");
    // The question, once, every word whole: joined back it is the one-line question.
    let question = format!(
        "On context fake ({}): move lock kube-system/k3s from s1 to the server with hostname s2 (node s2)?",
        fake.url().trim_end_matches('/')
    );
    let start = lines.find("On context fake").expect("the question");
    let asked_text: Vec<&str> = lines[start..]
        .lines()
        .take_while(|l| !l.contains("declined"))
        .flat_map(|l| l.split_whitespace())
        .collect();
    let words: Vec<&str> = question.split_whitespace().collect();
    assert_eq!(asked_text[..words.len()], words[..], "{lines}");
    assert_eq!(lines.matches("On context fake").count(), 1, "{lines}");
    assert_eq!(
        lines.matches("move lock kube-system/k3s").count(),
        1,
        "{lines}"
    );
    for line in lines.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
}
