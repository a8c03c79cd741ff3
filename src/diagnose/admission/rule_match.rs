//! Whether a webhook is called for a control-plane write, by the apiserver's rules
//! (k8s.io/apiserver `admission/plugin/webhook/predicates`: rules, namespace and object
//! selectors; `generic/webhook.go`: matchConditions), judged from the objects alone. Where
//! the answer needs what was not read (other namespace labels, an object's labels, CEL), the
//! verdict is "may match", never "does not".

use std::collections::BTreeMap;

use super::control_plane_writes::{ControlPlaneWrite, EVENTS_GROUP};
use crate::model::admission_webhook::{LabelSelector, WebhookFacts, WebhookRule};

/// The label every Namespace carries with its own name (Kubernetes 1.22+,
/// NamespaceDefaultLabelName), so a selector on it is judged without reading Namespaces.
pub(crate) const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The control plane's writes are creates and updates (a PATCH is admitted as UPDATE).
const OPERATIONS: [&str; 2] = ["CREATE", "UPDATE"];

/// Whether the apiserver calls the webhook for a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Matches,
    /// It may: what could not be judged.
    MayMatch(Vec<String>),
    No,
}

impl Verdict {
    /// Both must hold.
    fn and(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::No, _) | (_, Verdict::No) => Verdict::No,
            (Verdict::MayMatch(mut a), Verdict::MayMatch(b)) => {
                a.extend(b);
                Verdict::MayMatch(a)
            }
            (Verdict::MayMatch(a), Verdict::Matches) | (Verdict::Matches, Verdict::MayMatch(a)) => {
                Verdict::MayMatch(a)
            }
            (Verdict::Matches, Verdict::Matches) => Verdict::Matches,
        }
    }

    /// Either suffices.
    fn or(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::Matches, _) | (_, Verdict::Matches) => Verdict::Matches,
            (Verdict::MayMatch(mut a), Verdict::MayMatch(b)) => {
                a.extend(b);
                Verdict::MayMatch(a)
            }
            (Verdict::MayMatch(a), Verdict::No) | (Verdict::No, Verdict::MayMatch(a)) => {
                Verdict::MayMatch(a)
            }
            (Verdict::No, Verdict::No) => Verdict::No,
        }
    }

    fn may(why: impl Into<String>) -> Verdict {
        Verdict::MayMatch(vec![why.into()])
    }

    pub(crate) fn matches_at_all(&self) -> bool {
        !matches!(self, Verdict::No)
    }
}

/// Whether `webhook` is called for `write`.
pub(crate) fn judge(webhook: &WebhookFacts, write: &ControlPlaneWrite) -> Verdict {
    let rules = webhook
        .rules
        .iter()
        .map(|rule| rule_matches(rule, write, webhook.exact))
        .fold(Verdict::No, Verdict::or);
    if rules == Verdict::No {
        return Verdict::No;
    }
    let namespace = namespace_selector(&webhook.namespace_selector, write);
    let object = object_selector(&webhook.object_selector, write);
    let conditions = match webhook.match_conditions {
        0 => Verdict::Matches,
        n => Verdict::may(format!(
            "its {n} matchCondition{} (CEL) cannot be judged offline",
            if n == 1 { "" } else { "s" }
        )),
    };
    rules.and(namespace).and(object).and(conditions)
}

fn listed(values: &[String], want: &str) -> bool {
    values.iter().any(|v| v == "*" || v == want)
}

fn rule_matches(rule: &WebhookRule, write: &ControlPlaneWrite, exact: bool) -> Verdict {
    let operation = OPERATIONS.iter().any(|op| listed(&rule.operations, op));
    let scope = match rule.scope.as_str() {
        "Cluster" => write.namespace.is_none(),
        "Namespaced" => write.namespace.is_some(),
        _ => true,
    };
    let resource = rule
        .resources
        .iter()
        .any(|r| resource_matches(r, write.resource, write.subresource));
    if !operation || !scope || !resource {
        return Verdict::No;
    }
    // core's events and events.k8s.io's are one resource: Equivalent matches across them.
    let group = listed(&rule.api_groups, write.group)
        || (!exact && write.resource == "events" && listed(&rule.api_groups, EVENTS_GROUP));
    if !group {
        return Verdict::No;
    }
    if listed(&rule.api_versions, write.version) {
        Verdict::Matches
    } else if exact || rule.api_versions.is_empty() {
        Verdict::No
    } else {
        // Equivalent matches the request through another version of the same resource, if
        // the apiserver serves it.
        Verdict::may(format!(
            "its rule names {} {} only, which matches through an equivalent version if served",
            write.resource,
            rule.api_versions.join(", ")
        ))
    }
}

/// `*` matches every resource without a subresource, `*/*` everything, `r/*` every
/// subresource of r, `*/s` subresource s of every resource; `nodes` never `nodes/status`.
fn resource_matches(rule: &str, resource: &str, subresource: &str) -> bool {
    let (rule_resource, rule_sub) = rule.split_once('/').unwrap_or((rule, ""));
    let resource_ok = rule_resource == "*" || rule_resource == resource;
    let sub_ok = rule_sub == subresource || (rule_sub == "*" && rule.contains('/'));
    resource_ok && sub_ok
}

/// A namespaceSelector never skips a cluster-scoped object; a namespaced one is judged on
/// the namespace's labels, of which only its name label is known.
fn namespace_selector(selector: &LabelSelector, write: &ControlPlaneWrite) -> Verdict {
    let Some(namespace) = write.namespace else {
        return Verdict::Matches;
    };
    let known = BTreeMap::from([(NAMESPACE_NAME_LABEL.to_string(), namespace.to_string())]);
    match selects(selector, &known, false) {
        Some(true) => Verdict::Matches,
        Some(false) => Verdict::No,
        None => Verdict::may(format!(
            "its namespaceSelector needs labels of Namespace {namespace} beyond its name, which \
             were not read"
        )),
    }
}

/// Judged on each object's labels where they were read; called when any object matches.
fn object_selector(selector: &LabelSelector, write: &ControlPlaneWrite) -> Verdict {
    if selector.selects_everything() {
        return Verdict::Matches;
    }
    let unknown = || {
        Verdict::may(format!(
            "its objectSelector needs the labels of {}, which were not read",
            write.what
        ))
    };
    let Some(objects) = &write.labels else {
        return unknown();
    };
    objects
        .iter()
        .map(|labels| match selects(selector, labels, true) {
            Some(true) => Verdict::Matches,
            Some(false) => Verdict::No,
            None => unknown(),
        })
        .fold(Verdict::No, Verdict::or)
}

/// Whether `selector` selects an object with `labels`: `None` when it cannot be told.
/// `complete`: every label of the object is known, so a missing key is absent; otherwise
/// only the keys in `labels` are known.
pub(crate) fn selects(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
    complete: bool,
) -> Option<bool> {
    let value = |key: &str| -> Option<Option<&str>> {
        match labels.get(key) {
            Some(v) => Some(Some(v.as_str())),
            None if complete => Some(None),
            None => None,
        }
    };
    let mut all_known = true;
    let mut results = selector
        .match_labels
        .iter()
        .map(|(key, want)| value(key).map(|v| v == Some(want.as_str())))
        .chain(selector.match_expressions.iter().map(|r| {
            let v = value(&r.key)?;
            let contained = v.is_some_and(|v| r.values.iter().any(|w| w == v));
            match r.operator.as_str() {
                "In" => Some(contained),
                "NotIn" => Some(!contained),
                "Exists" => Some(v.is_some()),
                "DoesNotExist" => Some(v.is_none()),
                _ => None,
            }
        }));
    // Any requirement that fails decides; unknown ones leave it open.
    for result in results.by_ref() {
        match result {
            Some(false) => return Some(false),
            Some(true) => {}
            None => all_known = false,
        }
    }
    all_known.then_some(true)
}

#[cfg(test)]
mod tests;
