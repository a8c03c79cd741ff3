//! `dryRun=All` (samples 079–090).

use crate::leases::k3s_lease;
use crate::wire::Replay;
use serde_json::json;

#[test]
fn dry_run_create_answers_201_without_resource_version_079_080() {
    let r = Replay::new();
    let before = r.api.resource_version();
    let got = r.similar("079");
    assert!(got.json()["metadata"].get("resourceVersion").is_none());
    r.exact("080");
    assert_eq!(r.api.resource_version(), before);
}

#[test]
fn dry_run_put_answers_the_would_be_object_with_the_old_resource_version_081_082() {
    let r = Replay::new();
    r.seed(213, k3s_lease());
    // managedFields included: the holderIdentity moves from example-manager to example-client.
    r.similar("081");
    r.exact("082");
}

#[test]
fn dry_run_delete_answers_success_but_keeps_the_object_088() {
    let r = Replay::new();
    r.seed(
        208,
        json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
               "metadata": {"name": "k3s-etcd", "namespace": "kube-system",
                            "uid": "dc079ad3-9de0-4e44-bd5f-601208708cf7"},
               "spec": {"holderIdentity": "server-1", "leaseDurationSeconds": 45}}),
    );
    r.exact("088");
    assert!(
        r.api
            .get("Lease", Some("kube-system"), "k3s-etcd")
            .is_some()
    );
    assert_eq!(r.api.resource_version(), 208);
}

#[test]
fn dry_run_other_than_all_is_422_on_patch_options_090() {
    let r = Replay::new();
    r.seed(213, k3s_lease());
    r.exact("090");
}
