//! The control plane beyond the locks and snapshots: etcd membership and quorum, the
//! apiserver addresses, etcd's snapshot flags per server, secrets in node arguments, the
//! servers' secrets-encryption state, the packaged Helm charts.

pub mod apiserver_endpoints;
pub mod cert_expiry;
pub mod connection_certificates;
pub mod etcd_config_drift;
pub mod etcd_members;
pub mod etcd_settings;
pub mod heartbeat;
pub mod membership;
pub mod node_args_secrets;
pub mod node_passwords;
pub mod packaged_charts;
pub mod quorum;
pub mod secrets_encryption;
pub mod secrets_reencrypt;
