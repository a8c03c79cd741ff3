//! Rancher's management cluster, the second source beside the downstream cluster: read live
//! through Rancher's proxy (`/k8s/clusters/local`) or `--rancher-context`, or from
//! `--rancher-from-file`. Only GET, LIST and WATCH: k3sdoctor writes nothing there.

pub mod rancher_dump;
pub mod rancher_fleet;
pub mod rancher_live;
mod rancher_reads;
pub mod rancher_selection;

#[cfg(test)]
mod judged_tests;

pub use crate::model::rancher::view::{RancherState, RancherView};

/// Where Rancher's side comes from, as the command line says (`Settings.rancher`).
#[derive(Debug, Clone, Default)]
pub struct RancherChoice {
    /// `--rancher-context`: the management cluster's kubeconfig context.
    pub context: Option<String>,
    /// `--rancher-from-file`.
    pub files: Vec<std::path::PathBuf>,
    /// `--rancher-cluster`.
    pub cluster: Option<String>,
}
