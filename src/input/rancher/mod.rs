//! Rancher's management cluster, the second source beside the downstream cluster: read live
//! through Rancher's proxy (`/k8s/clusters/local`) or `--rancher-context`, or from
//! `--rancher-from-file`. Only GET, LIST and WATCH: k3sdoctor writes nothing there.

pub(crate) mod machine_plans;
pub(crate) mod rancher_dump;
pub(crate) mod rancher_fleet;
pub(crate) mod rancher_live;
mod rancher_reads;
pub(crate) mod rancher_selection;

#[cfg(test)]
mod judged_tests;

pub(crate) use crate::model::rancher::view::{RancherState, RancherView};

/// Where Rancher's side comes from, as the command line says (`Settings.rancher`).
#[derive(Debug, Clone, Default)]
pub(crate) struct RancherChoice {
    /// `--rancher-context`: the management cluster's kubeconfig context.
    pub context: Option<String>,
    /// `--rancher-from-file`.
    pub files: Vec<std::path::PathBuf>,
    /// `--rancher-cluster`.
    pub cluster: Option<String>,
}
