//! Conformance tests of the fake Kubernetes API server (`tests/support/fake_api`) against the
//! recorded kube-apiserver exchanges in `tests/fixtures/wire/`, plus its test-facing API.

#[path = "../support/mod.rs"]
mod support;

mod client;
mod wire;

mod api;
mod auth;
mod configmaps;
mod custom_resources;
mod dry_run;
mod faults;
mod leases;
mod lists;
mod rbac;
mod tls;
