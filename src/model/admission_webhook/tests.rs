use serde_json::json;

use super::*;

#[test]
fn an_unset_failure_policy_is_fail_and_ignore_is_not() {
    let object = json!({
        "metadata": {"name": "gatekeeper"},
        "webhooks": [
            {"name": "a.example.com", "clientConfig": {"service": {"namespace": "gk", "name": "svc"}},
             "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
            {"name": "b.example.com", "failurePolicy": "Ignore", "clientConfig": {"url": "https://x.example.com"},
             "matchPolicy": "Exact", "matchConditions": [{"name": "c", "expression": "true"}],
             "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]},
             "objectSelector": {"matchLabels": {"a": "b"}}},
            {"failurePolicy": "Fail"}
        ]
    });
    let webhooks =
        WebhookFacts::from_configuration(ConfigurationKind::Validating, &object).unwrap();
    assert_eq!(webhooks.len(), 3);
    let [a, b, c] = &webhooks[..] else {
        unreachable!()
    };
    assert!(a.fail_closed && !a.exact);
    assert_eq!(
        a.backend,
        Backend::Service {
            namespace: "gk".into(),
            name: "svc".into()
        }
    );
    assert_eq!(a.rules[0].scope, "*", "scope defaults to *");
    assert!(a.namespace_selector.selects_everything());
    assert!(!b.fail_closed && b.exact);
    assert_eq!(b.backend, Backend::Url("https://x.example.com".into()));
    assert_eq!(b.match_conditions, 1);
    assert_eq!(b.namespace_selector.match_expressions[0].operator, "NotIn");
    assert_eq!(b.object_selector.match_labels["a"], "b");
    assert!(c.fail_closed);
    assert_eq!(c.name, "webhooks[2]");
    assert_eq!(c.backend, Backend::Missing);
    assert_eq!(
        a.describe(),
        "ValidatingWebhookConfiguration gatekeeper (webhook a.example.com)"
    );
}

#[test]
fn a_configuration_without_a_name_is_refused_and_without_webhooks_is_empty() {
    assert!(WebhookFacts::from_configuration(ConfigurationKind::Mutating, &json!({})).is_err());
    let none = json!({"metadata": {"name": "x"}});
    assert!(
        WebhookFacts::from_configuration(ConfigurationKind::Mutating, &none)
            .unwrap()
            .is_empty()
    );
}
