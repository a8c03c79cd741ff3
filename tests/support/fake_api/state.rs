//! Everything the server shares between connections, behind one mutex.

use super::RequestRecord;
use super::faults::Fault;
use super::rbac::RbacUser;
use super::store::Store;
use std::collections::HashMap;
use std::sync::Arc;

/// The first resourceVersion handed out is `FIRST_RESOURCE_VERSION + 1`.
pub(crate) const FIRST_RESOURCE_VERSION: u64 = 1000;

pub(crate) struct State {
    pub store: Store,
    pub requests: Vec<RequestRecord>,
    pub faults: Vec<Fault>,
    /// Whether the ETCDSnapshotFile CRD is established (otherwise `k3s.cattle.io` is not served).
    pub crd_installed: bool,
    /// Whether helm-controller's HelmChart CRD is established (otherwise `helm.cattle.io` 404s).
    pub helm_crd_installed: bool,
    /// Whether system-upgrade-controller's Plan CRD is established (otherwise
    /// `upgrade.cattle.io` 404s, as on the real test bed, which has none).
    pub suc_crd_installed: bool,
    /// Whether Rancher's management and provisioning Clusters are served (default `false`).
    pub rancher_management: bool,
    /// `/version` gitVersion.
    pub git_version: String,
    /// `host:port` the server listens on.
    pub address: String,
    /// Users added with `add_rbac_user`, by bearer token.
    pub rbac_users: HashMap<String, Arc<RbacUser>>,
    /// Bumped by `end_watches`: every open watch ends, as at its `timeoutSeconds`.
    pub watch_ends: tokio::sync::watch::Sender<u64>,
    /// What `GET /metrics` answers: a 1.33 apiserver's recorded answer unless a test sets it.
    pub metrics: Arc<[u8]>,
    /// Added to the time every answer's `Date` header says (a server clock that moves on).
    pub clock_ahead: jiff::SignedDuration,
}

impl State {
    pub(super) fn new(address: String) -> State {
        State {
            store: Store::new(FIRST_RESOURCE_VERSION),
            requests: Vec::new(),
            faults: Vec::new(),
            crd_installed: true,
            helm_crd_installed: true,
            rancher_management: false,
            suc_crd_installed: false,
            git_version: "v1.29.4+k3s1".to_string(),
            address,
            rbac_users: HashMap::new(),
            watch_ends: tokio::sync::watch::Sender::new(0),
            clock_ahead: jiff::SignedDuration::ZERO,
            metrics: Arc::from(&include_bytes!("../../fixtures/metrics/apiserver-v1.33.txt")[..]),
        }
    }
}
