//! What only the kubeconfig or the cluster can complete, and the flags typed so far that
//! tell it where to look.

use clap::Arg;

/// The values of an argument that only the kubeconfig or the cluster can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dynamic {
    /// `--context`: the kubeconfig's contexts.
    Contexts,
    /// `--to`: the servers that can hold the locks, by node name and hostname.
    ServerNodes,
    /// `--lease`: the lock names of the distro.
    LockNames,
}

impl Dynamic {
    pub(super) fn of(arg: &Arg) -> Option<Dynamic> {
        match arg.get_id().as_str() {
            "context" => Some(Dynamic::Contexts),
            "to" => Some(Dynamic::ServerNodes),
            "lease" => Some(Dynamic::LockNames),
            _ => None,
        }
    }
}

/// The flags typed so far on the line, by clap id (`kubeconfig`, `context`, `distro`, ...),
/// each with its values in order: `--context <TAB>` reads the `--kubeconfig` typed before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedFlags(Vec<(String, String)>);

impl TypedFlags {
    /// The last value given for `id`.
    pub fn last(&self, id: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for `id`, in order.
    pub fn all(&self, id: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether the flag `id` (one without a value) was typed.
    pub fn has(&self, id: &str) -> bool {
        self.0.iter().any(|(i, _)| i == id)
    }

    pub(super) fn record(&mut self, arg: &Arg, value: &str) {
        self.0.push((arg.get_id().to_string(), value.to_string()));
    }
}

/// Where dynamic values come from: the kubeconfig and the cluster (`commands::completions`),
/// or nowhere.
pub trait ClusterValues {
    /// `(value, description)` pairs; empty when they cannot be had (never an error).
    fn values(&self, kind: Dynamic, typed: &TypedFlags) -> Vec<(String, String)>;
}

/// No kubeconfig, no cluster: only what the command line itself defines.
pub struct NoClusterValues;

impl ClusterValues for NoClusterValues {
    fn values(&self, _: Dynamic, _: &TypedFlags) -> Vec<(String, String)> {
        Vec::new()
    }
}
