//! Pure diagnosis: `ClusterState` + `now` → findings. Nothing here touches the network, the
//! clock or the terminal, so every verdict is a unit test.

pub(crate) mod admission;
mod analysers;
pub(crate) mod check;
pub(crate) mod cluster_summary;
pub(crate) mod control_plane;
pub(crate) mod datastore;
pub(crate) mod finding;
mod finding_code;
mod finding_message;
pub(crate) mod fleet;
pub(crate) mod leases;
mod linking;
mod object_ref;
pub(crate) mod rancher;
pub(crate) mod snapshots;
pub(crate) mod snapshots_in_full;
pub(crate) mod suppression;
pub(crate) mod upgrades;
pub(crate) mod version_advice;

#[cfg(test)]
pub(crate) mod test_cluster;
