//! Shared test support, included by each integration test crate with
//! `#[path = "../support/mod.rs"] mod support;`.
#![allow(dead_code)]

pub(crate) mod bundles;
pub(crate) mod churn;
pub(crate) mod envtest;
pub(crate) mod fake_api;
pub(crate) mod faults;
pub(crate) mod fleet;
pub(crate) mod harness;
pub(crate) mod k3s_sim;
pub(crate) mod kustomize;
pub(crate) mod manifests;
pub(crate) mod objects;
pub(crate) mod rancher;
pub(crate) mod readme;
pub(crate) mod report_checks;
pub(crate) mod scrape;
pub(crate) mod test_ca;
pub(crate) mod test_threads;
pub(crate) mod tls_listener;
pub(crate) mod wait;
