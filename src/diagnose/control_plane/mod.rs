//! The control plane beyond the locks and snapshots: etcd membership and quorum, the
//! apiserver addresses, etcd's snapshot flags per server, secrets in node arguments, the
//! servers' secrets-encryption state, the packaged Helm charts.

pub(crate) mod apiserver_endpoints;
pub(crate) mod cert_expiry;
pub(crate) mod connection_certificates;
pub(crate) mod etcd_config_drift;
pub(crate) mod etcd_members;
pub(crate) mod etcd_settings;
pub(crate) mod heartbeat;
pub(crate) mod membership;
pub(crate) mod node_args_secrets;
pub(crate) mod node_passwords;
pub(crate) mod packaged_charts;
pub(crate) mod quorum;
pub(crate) mod secrets_encryption;
pub(crate) mod secrets_reencrypt;
