use serde_json::{Value, json};

use super::*;
use crate::diagnose::admission::control_plane_writes::{WriteTarget, control_plane_writes};
use crate::diagnose::test_cluster::TestCluster;
use crate::distro::Distro;
use crate::model::admission_webhook::{ConfigurationKind, WebhookFacts};

fn webhook(fields: Value) -> WebhookFacts {
    let mut hook = json!({"name": "w.example.com",
        "clientConfig": {"service": {"namespace": "gk", "name": "svc"}}});
    if let (Some(hook), Some(fields)) = (hook.as_object_mut(), fields.as_object()) {
        hook.extend(fields.clone());
    }
    let object = json!({"metadata": {"name": "cfg"}, "webhooks": [hook]});
    WebhookFacts::from_configuration(ConfigurationKind::Validating, &object)
        .unwrap()
        .remove(0)
}

fn rule(groups: &[&str], resources: &[&str]) -> Value {
    json!({"operations": ["CREATE", "UPDATE"], "apiGroups": groups, "apiVersions": ["v1"],
           "resources": resources})
}

/// The verdict for each write the webhook is judged against, by target.
fn verdicts(hook: &WebhookFacts) -> Vec<(WriteTarget, Verdict)> {
    let state = TestCluster::k3s()
        .server("s1", "v1.30.4+k3s1")
        .lease("k3s", "s1", 2)
        .lease("k3s-etcd", "s1", 2)
        .build();
    control_plane_writes(&state, Distro::K3s)
        .iter()
        .map(|w| (w.target, judge(hook, w)))
        .collect()
}

fn verdict(hook: &WebhookFacts, target: WriteTarget) -> Verdict {
    verdicts(hook)
        .into_iter()
        .find(|(t, _)| *t == target)
        .unwrap()
        .1
}

fn matched(hook: &WebhookFacts) -> Vec<WriteTarget> {
    verdicts(hook)
        .into_iter()
        .filter(|(_, v)| *v == Verdict::Matches)
        .map(|(t, _)| t)
        .collect()
}

#[test]
fn a_lease_rule_matches_every_lease_write_and_nothing_else() {
    let hook = webhook(json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])]}));
    assert_eq!(
        matched(&hook),
        [
            WriteTarget::LockLeases,
            WriteTarget::ElectionLeases,
            WriteTarget::NodeHeartbeats
        ]
    );
}

#[test]
fn nodes_does_not_match_nodes_status_and_star_matches_no_subresource() {
    let nodes = webhook(json!({"rules": [rule(&[""], &["nodes"])]}));
    assert_eq!(matched(&nodes), [WriteTarget::Nodes]);
    let status = webhook(json!({"rules": [rule(&[""], &["nodes/status"])]}));
    assert_eq!(matched(&status), [WriteTarget::NodeStatus]);
    let any_sub = webhook(json!({"rules": [rule(&[""], &["nodes/*"])]}));
    assert_eq!(
        matched(&any_sub),
        [WriteTarget::Nodes, WriteTarget::NodeStatus]
    );
    let star = webhook(json!({"rules": [rule(&["*"], &["*"])]}));
    assert!(!matched(&star).contains(&WriteTarget::NodeStatus));
    assert!(matched(&star).contains(&WriteTarget::Nodes));
    let star_star = webhook(json!({"rules": [rule(&["*"], &["*/*"])]}));
    assert_eq!(matched(&star_star).len(), 10, "every write");
    let status_of_all = webhook(json!({"rules": [rule(&["*"], &["*/status"])]}));
    assert_eq!(matched(&status_of_all), [WriteTarget::NodeStatus]);
}

#[test]
fn operations_groups_and_versions_must_all_match() {
    let deletes = webhook(
        json!({"rules": [{"operations": ["DELETE"], "apiGroups": ["*"],
        "apiVersions": ["*"], "resources": ["*/*"]}]}),
    );
    assert!(matched(&deletes).is_empty());
    let any_op = webhook(
        json!({"rules": [{"operations": ["*"], "apiGroups": ["k3s.cattle.io"],
        "apiVersions": ["*"], "resources": ["etcdsnapshotfiles"]}]}),
    );
    assert_eq!(matched(&any_op), [WriteTarget::SnapshotFiles]);
    let other_group = webhook(json!({"rules": [rule(&["apps"], &["*"])]}));
    assert!(matched(&other_group).is_empty());
    // Another version of the same resource matches only through Equivalent.
    let beta = webhook(json!({"rules": [{"operations": ["UPDATE"],
        "apiGroups": ["coordination.k8s.io"], "apiVersions": ["v1beta1"], "resources": ["leases"]}]}));
    assert!(matches!(
        verdict(&beta, WriteTarget::LockLeases),
        Verdict::MayMatch(_)
    ));
    let mut exact = beta.clone();
    exact.exact = true;
    assert_eq!(verdict(&exact, WriteTarget::LockLeases), Verdict::No);
    // core and events.k8s.io Events are one resource under Equivalent, not under Exact.
    let events = webhook(json!({"rules": [rule(&["events.k8s.io"], &["events"])]}));
    assert_eq!(matched(&events), [WriteTarget::Events]);
    let mut events_exact = events.clone();
    events_exact.exact = true;
    assert!(matched(&events_exact).is_empty());
}

#[test]
fn scope_separates_cluster_from_namespaced_writes() {
    let cluster = webhook(json!({"rules": [{"operations": ["*"], "apiGroups": ["*"],
        "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}]}));
    assert_eq!(
        matched(&cluster),
        [WriteTarget::Nodes, WriteTarget::SnapshotFiles]
    );
    let namespaced = webhook(json!({"rules": [{"operations": ["*"], "apiGroups": ["*"],
        "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"}]}));
    let targets = matched(&namespaced);
    assert!(targets.contains(&WriteTarget::LockLeases) && targets.contains(&WriteTarget::Secrets));
    assert!(
        !targets.contains(&WriteTarget::Nodes) && !targets.contains(&WriteTarget::SnapshotFiles)
    );
}

#[test]
fn a_namespace_selector_never_skips_cluster_scoped_writes_and_is_judged_by_the_name_label() {
    let not_system = json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name",
        "operator": "NotIn", "values": ["kube-system", "kube-node-lease"]}]});
    let hook = webhook(json!({"rules": [rule(&["*"], &["*", "*/*"])],
        "namespaceSelector": not_system}));
    assert_eq!(
        matched(&hook),
        [
            WriteTarget::Nodes,
            WriteTarget::NodeStatus,
            WriteTarget::Events,
            WriteTarget::SnapshotFiles
        ]
    );
    let only_default = webhook(json!({"rules": [rule(&[""], &["events", "configmaps"])],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}}}));
    assert_eq!(matched(&only_default), [WriteTarget::Events]);
    // Another label of the Namespace was not read: it may match.
    let labelled = webhook(
        json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])],
        "namespaceSelector": {"matchLabels": {"policy": "enforced"}}}),
    );
    let Verdict::MayMatch(why) = verdict(&labelled, WriteTarget::LockLeases) else {
        panic!("a selector on an unread label may match");
    };
    assert!(why[0].contains("Namespace kube-system"), "{why:?}");
    // ... unless a known requirement already excludes the namespace.
    let excluded = webhook(
        json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])],
        "namespaceSelector": {"matchLabels": {"policy": "enforced"},
            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                "values": ["apps"]}]}}),
    );
    assert_eq!(verdict(&excluded, WriteTarget::LockLeases), Verdict::No);
}

#[test]
fn an_object_selector_is_judged_on_the_labels_read_else_may_match() {
    // The locks were read without labels: a selector that needs one does not select them.
    let labelled = webhook(
        json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])],
        "objectSelector": {"matchLabels": {"app": "x"}}}),
    );
    assert_eq!(verdict(&labelled, WriteTarget::LockLeases), Verdict::No);
    assert!(matches!(
        verdict(&labelled, WriteTarget::ElectionLeases),
        Verdict::MayMatch(_)
    ));
    let absent = webhook(
        json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])],
        "objectSelector": {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}}),
    );
    assert_eq!(verdict(&absent, WriteTarget::LockLeases), Verdict::Matches);
    // The Nodes' labels are read: the server role selects them.
    let servers = webhook(json!({"rules": [rule(&[""], &["nodes"])],
        "objectSelector": {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane",
            "operator": "Exists"}]}}));
    assert_eq!(verdict(&servers, WriteTarget::Nodes), Verdict::Matches);
}

#[test]
fn match_conditions_cannot_be_judged_offline() {
    let hook = webhook(
        json!({"rules": [rule(&["coordination.k8s.io"], &["leases"])],
        "matchConditions": [{"name": "not-system", "expression": "true"}]}),
    );
    let Verdict::MayMatch(why) = verdict(&hook, WriteTarget::LockLeases) else {
        panic!("CEL may match");
    };
    assert!(why[0].contains("matchCondition (CEL)"), "{why:?}");
}

#[test]
fn selectors_with_partial_labels_decide_only_what_they_can() {
    use crate::model::admission_webhook::{LabelRequirement, LabelSelector};
    let known = BTreeMap::from([("a".to_string(), "1".to_string())]);
    let req = |key: &str, op: &str, values: &[&str]| LabelSelector {
        match_labels: BTreeMap::new(),
        match_expressions: vec![LabelRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }],
    };
    assert_eq!(selects(&req("a", "In", &["1"]), &known, false), Some(true));
    assert_eq!(
        selects(&req("a", "NotIn", &["1"]), &known, false),
        Some(false)
    );
    assert_eq!(selects(&req("b", "NotIn", &["1"]), &known, false), None);
    assert_eq!(
        selects(&req("b", "NotIn", &["1"]), &known, true),
        Some(true)
    );
    assert_eq!(selects(&req("b", "Exists", &[]), &known, true), Some(false));
    assert_eq!(selects(&req("a", "Bogus", &[]), &known, true), None);
    assert_eq!(
        selects(&LabelSelector::default(), &known, false),
        Some(true)
    );
}
