//! A Rancher test bed: two real apiservers (the management cluster and one downstream
//! cluster) behind a Rancher-like proxy, the CRDs and objects Rancher keeps for a v2prov
//! cluster, and ETCDSnapshot records written the way each Rancher line writes them.

pub mod bed;
mod bed_objects;
pub mod client;
pub mod crds;
pub mod proxy;
mod proxy_body;
mod proxy_tls;
pub mod records;
mod records_legacy;
mod request_log;

// Not every test crate that includes the support module uses it.
#[allow(unused_imports)]
pub use proxy_body::Fault;
