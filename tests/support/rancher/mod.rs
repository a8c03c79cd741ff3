//! A Rancher test bed: two real apiservers (the management cluster and one downstream
//! cluster) behind a Rancher-like proxy, the CRDs and objects Rancher keeps for a v2prov
//! cluster, and ETCDSnapshot records written the way each Rancher line writes them.
//!
//! A test of the Rancher checks typically:
//! ```ignore
//! let Some(bed) = RancherBed::start("my test", "v2.11.4") else { return };
//! let sims = SimCluster::start(bed.downstream(), "k3s", "v1.29.4+k3s1", 1, &[]);
//! bed.add_machines_for_nodes();
//! // … wait for ETCDSnapshotFiles downstream, then:
//! bed.write_snapshot_records("k3s");
//! let out = k3sdoctor(["check"]).kubeconfig(&bed.kubeconfig(User::Admin)).run();
//! assert!(bed.proxy().requests_to("local").iter().all(|r| r.verb() != "post"));
//! ```
//! Faults: `bed.proxy().set_fault("local", Fault::StallMidBody)`, `bed.set_prod_connected(false)`.

pub(crate) mod bed;
mod bed_objects;
pub(crate) mod client;
pub(crate) mod crds;
pub(crate) mod proxy;
mod proxy_body;
mod proxy_tls;
pub(crate) mod records;
mod records_legacy;
mod request_log;

// Not every test crate that includes the support module uses it.
#[allow(unused_imports)]
pub(crate) use proxy_body::Fault;
