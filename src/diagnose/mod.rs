//! Pure diagnosis: `ClusterState` + `now` → findings. Nothing here touches the network, the
//! clock or the terminal, so every verdict is a unit test.

pub mod apiserver_endpoints;
pub mod check;
pub mod cluster_summary;
pub mod etcd_config_drift;
pub mod etcd_settings;
pub mod finding;
pub mod fleet;
pub mod lease_changes;
pub mod lease_split;
pub mod leases;
pub mod lock_status;
pub mod membership;
pub mod node_args_secrets;
pub mod object_ref;
pub mod quorum;
pub mod snapshot_entry_count;
pub mod snapshot_files;
pub mod snapshot_findings;
pub mod snapshot_provenance;
pub mod snapshot_reconcile;
pub mod snapshot_reconcile_stalled;
pub mod snapshot_record_empty;
pub mod snapshot_s3;
pub mod snapshot_table_gap;
pub mod snapshot_writer;
pub mod snapshots;
pub mod suppression;

#[cfg(test)]
pub mod test_cluster;
