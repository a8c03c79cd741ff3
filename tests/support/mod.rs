//! Shared test support, included by each integration test crate with
//! `#[path = "../support/mod.rs"] mod support;`.
#![allow(dead_code)]

pub mod bundles;
pub mod churn;
pub mod envtest;
pub mod fake_api;
pub mod faults;
pub mod fleet;
pub mod harness;
pub mod k3s_sim;
pub mod kustomize;
pub mod manifests;
pub mod objects;
pub mod rancher;
pub mod readme;
pub mod report_checks;
pub mod scrape;
pub mod test_ca;
pub mod test_threads;
pub mod tls_listener;
pub mod wait;
