//! Pure diagnosis: `ClusterState` + `now` → findings. Nothing here touches the network, the
//! clock or the terminal, so every verdict is a unit test.

mod analysers;
pub mod check;
pub mod cluster_summary;
pub mod control_plane;
pub mod finding;
mod finding_code;
pub mod fleet;
pub mod leases;
mod linking;
mod object_ref;
pub mod rancher;
pub mod snapshots;
pub mod snapshots_in_full;
pub mod suppression;
pub mod version_advice;

#[cfg(test)]
pub mod test_cluster;
