//! End-to-end tests: the built binary over real HTTP against the in-repo fake API server,
//! with a generated kubeconfig, and against dumps.

#[path = "../support/mod.rs"]
mod support;

mod apiserver_endpoints;
mod backups;
mod bundles;
mod check;
mod closed_pipe;
mod common;
mod completions;
mod concurrent_writers;
mod connection_flags;
mod credential_plugins;
mod deploy;
mod deploy_serve;
mod dump_now;
mod dump_vs_live;
mod empty_dumps;
mod errors;
mod fail_on;
mod faults;
mod fleet;
mod follow;
mod follow_signals;
mod from_stdin;
mod generated_files;
mod help;
mod hostile_inputs;
mod layout;
mod leases;
mod man_pages;
mod node_args;
mod object_refs;
mod pending_snapshots;
mod pipes;
mod proxies;
mod rbac;
mod rbac_command;
mod readme_first_screen;
mod real_cluster;
mod repair_exits;
mod report;
mod rerun_flags;
mod restore;
mod schemas;
mod serve;
mod server_kubeconfig;
mod slow_requests;
mod snapshot_files;
mod snapshots;
mod suppressions;
mod terminal_injection;
mod watch;
