//! Plain data parsed from API objects. Nothing here talks to the network or the terminal.

pub mod apiserver_endpoints;
pub mod cert_warning;
pub mod certificate;
pub mod certificate_chain;
pub mod configmap;
pub mod configmap_listing;
pub mod cron_schedule;
pub mod datastore;
pub mod encryption_hash;
mod etcd_keys;
pub mod go_json;
pub mod helm_chart;
pub mod helm_job;
pub mod lease;
pub mod lock;
pub mod node;
pub mod node_args;
pub mod node_event;
pub mod quantity;
pub mod rancher;
mod recent_values;
pub mod secret_metadata;
pub mod snapshot_entry;
pub mod snapshot_file;
pub mod snapshot_key;
