//! Rancher's management-cluster CRDs (`tests/fixtures/rancher/crds.yaml`), installed on a test
//! apiserver and waited for until every collection is served.

use std::time::Duration;

use serde_json::Value;

use crate::support::envtest::admin::AdminApi;
use crate::support::wait::wait_for;

/// The CRDs as YAML, one document each.
pub(crate) const CRDS_YAML: &str = include_str!("../../fixtures/rancher/crds.yaml");

/// A freshly created CRD is served within a second or two; a busy two-core CI can take longer.
const SERVED: Duration = Duration::from_secs(60);

/// One installed CRD: where its objects live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Crd {
    pub name: String,
    pub group: String,
    pub version: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Crd {
    /// The collection path: in `namespace` for a namespaced kind (all namespaces with `None`).
    pub(crate) fn collection(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!(
                "/apis/{}/{}/namespaces/{ns}/{}",
                self.group, self.version, self.plural
            ),
            _ => format!("/apis/{}/{}/{}", self.group, self.version, self.plural),
        }
    }
}

/// The CRDs of the fixture, parsed.
pub(crate) fn crds() -> Vec<(Crd, Value)> {
    serde_yaml_ng::Deserializer::from_str(CRDS_YAML)
        .filter_map(|doc| {
            let object: Value = serde::Deserialize::deserialize(doc).expect("valid CRD YAML");
            if object.is_null() {
                return None;
            }
            let spec = &object["spec"];
            let crd = Crd {
                name: object["metadata"]["name"].as_str()?.to_string(),
                group: spec["group"].as_str()?.to_string(),
                version: spec["versions"][0]["name"].as_str()?.to_string(),
                plural: spec["names"]["plural"].as_str()?.to_string(),
                namespaced: spec["scope"] == "Namespaced",
            };
            Some((crd, object))
        })
        .collect()
}

/// The installed CRD named `name` (e.g. `etcdsnapshots.rke.cattle.io`).
pub(crate) fn crd(name: &str) -> Crd {
    crds()
        .into_iter()
        .map(|(crd, _)| crd)
        .find(|crd| crd.name == name)
        .unwrap_or_else(|| panic!("{name} is not among the Rancher CRDs"))
}

/// Creates every CRD and waits until each is Established and its collection answers a LIST:
/// Established alone can come a moment before the discovery handler serves the new group.
pub(crate) fn install(admin: &AdminApi) {
    let all = crds();
    for (_, object) in &all {
        admin.create(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            object,
        );
    }
    for (crd, _) in &all {
        let path = format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}",
            crd.name
        );
        let established = wait_for(SERVED, || {
            admin.get(&path).is_some_and(|object| {
                object["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            })
        });
        assert!(established, "CRD {} was not Established", crd.name);
        let collection = crd.collection(None);
        let served = wait_for(SERVED, || {
            admin
                .request("GET", &collection, "application/json", None)
                .is_ok()
        });
        assert!(served, "{collection} was not served");
    }
}
