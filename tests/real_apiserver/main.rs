//! End-to-end tests against a real kube-apiserver + etcd with simulated k3s/RKE2 servers that
//! elect through the real client-go code (`../shared/envtest`). Enabled by `K3SDOCTOR_ENVTEST`
//! (`.ci/run` sets it); without it every test says it was skipped and passes.

/// How many of these tests run at once unless the caller says (`--test-threads` or
/// `RUST_TEST_THREADS`): they mostly wait on the bed's timers (lease expiry, snapshot rounds,
/// cooldowns), so on CI's two cores one test per core left the machine idle while the waits ran
/// one after another. Each running test holds a bed of ~400 MB.
const TEST_THREADS: &str = "6";

/// libtest reads its thread count before any test code runs, from the command line or
/// `RUST_TEST_THREADS`, and a test binary has no other say. This runs as the binary loads, on
/// its only thread, and only sets what the caller left unset.
#[used]
#[unsafe(link_section = ".init_array")]
static SET_TEST_THREADS: extern "C" fn() = set_test_threads;

extern "C" fn set_test_threads() {
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        // SAFETY: called from .init_array, before main, while no other thread exists to read the
        // environment.
        unsafe { std::env::set_var("RUST_TEST_THREADS", TEST_THREADS) };
    }
}

#[path = "../support/mod.rs"]
mod support;

#[path = "../cli/report.rs"]
mod report;

mod apiserver_endpoints;
mod backfill;
mod bundles;
mod common;
mod completion;
mod concurrent_follow;
mod connecting;
mod control_plane_benchmark;
mod credential_plugins;
mod deploy;
mod etcd_members;
mod fake_vs_real;
mod follow_interrupted;
mod heal;
mod heal_replicas;
mod inputs;
mod many_snapshot_files;
mod node_args;
mod node_events;
mod node_passwords;
mod packaged_charts;
mod peak_launcher;
mod pipes;
mod rancher_bed;
mod rancher_records;
mod rancher_view;
mod rbac;
mod restore_identity;
mod serve;
mod serve_access;
mod serve_faults;
mod snapshot_files;
mod split_and_follow;
mod suppressions;
mod takeover;
mod watch;
