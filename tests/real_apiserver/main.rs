//! End-to-end tests against a real kube-apiserver + etcd with simulated k3s/RKE2 servers that
//! elect through the real client-go code (`../shared/envtest`). Enabled by `K3SDOCTOR_ENVTEST`
//! (`.ci/run` sets it); without it every test says it was skipped and passes.

// They mostly wait on the bed's timers (lease expiry, snapshot rounds, cooldowns), so they run
// more at once than CI has cores; each running test holds a bed of ~400 MB.
crate::default_test_threads!(6);

#[path = "../support/mod.rs"]
mod support;

#[path = "../cli/report.rs"]
mod report;

mod admission_webhooks;
mod apiserver_endpoints;
mod backfill;
mod bundles;
mod common;
mod completion;
mod concurrent_follow;
mod connecting;
mod control_plane_benchmark;
mod copied_snapshot_files;
mod credential_plugins;
mod datastore_metrics;
mod datastore_nospace;
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
mod quorum_heartbeats;
mod rancher_bed;
mod rancher_records;
mod rancher_view;
mod rbac;
mod restore_identity;
mod serve;
mod serve_access;
mod serve_faults;
mod snapshot_bench;
mod snapshot_files;
mod split_and_follow;
mod suppressions;
mod takeover;
mod watch;
