//! The flags that bring Rancher's management cluster beside the downstream one.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Default, Args)]
pub struct RancherArgs {
    /// Read Rancher's management cluster through this kubeconfig context (default: when the context's server is a Rancher proxy URL, …/k8s/clusters/local with the same credentials).
    #[arg(long, value_name = "NAME")]
    pub rancher_context: Option<String>,

    /// Read Rancher's management-cluster objects from a dump or the Rancher logs collector's bundle, beside --from-file. Repeatable.
    #[arg(long = "rancher-from-file", value_name = "PATH")]
    pub rancher_from_file: Vec<PathBuf>,

    /// The Rancher cluster to compare with, when the management cluster holds several: its name, namespace/name, c-m- id or display name.
    #[arg(long, value_name = "NAME")]
    pub rancher_cluster: Option<String>,
}
