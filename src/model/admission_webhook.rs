//! `admissionregistration.k8s.io/v1` Validating- and MutatingWebhookConfigurations: each
//! webhook's rules, selectors, failure policy and backend, parsed from the JSON a dump and a
//! live read share. Only what `webhook-fail-closed-down` and `webhook-blocks-control-plane`
//! read.
//!
//! Defaults are v1's (kubernetes/api `admissionregistration/v1/types.go`): `failurePolicy`
//! Fail, `matchPolicy` Equivalent, `scope` `*`, selectors match everything. (v1beta1, whose
//! failurePolicy defaulted to Ignore, was removed in 1.22, and the apiserver stores v1.)

use std::collections::BTreeMap;

use serde_json::Value;

/// Which of the two configuration kinds a webhook is declared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ConfigurationKind {
    Validating,
    Mutating,
}

impl ConfigurationKind {
    /// As `kind:` spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ConfigurationKind::Validating => "ValidatingWebhookConfiguration",
            ConfigurationKind::Mutating => "MutatingWebhookConfiguration",
        }
    }

    /// As kubectl's resource argument spells it.
    pub(crate) fn resource(self) -> &'static str {
        match self {
            ConfigurationKind::Validating => "validatingwebhookconfiguration",
            ConfigurationKind::Mutating => "mutatingwebhookconfiguration",
        }
    }
}

/// Where the apiserver sends the review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    /// `clientConfig.service`: the apiserver resolves the Service's endpoints itself.
    Service { namespace: String, name: String },
    /// `clientConfig.url`: nothing in the API tells whether it answers.
    Url(String),
    /// Neither (the apiserver refuses such a webhook; an odd dump might hold one).
    Missing,
}

/// One `rules[]` entry (`RuleWithOperations`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct WebhookRule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    /// `resource`, `resource/subresource`, `*`, `*/*`, `resource/*`, `*/subresource`.
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*` (the default).
    pub scope: String,
}

/// One requirement of a label selector's `matchExpressions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LabelRequirement {
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`.
    pub operator: String,
    pub values: Vec<String>,
}

/// A `metav1.LabelSelector`; absent and `{}` both select everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<LabelRequirement>,
}

impl LabelSelector {
    pub(crate) fn selects_everything(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// One webhook of one configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WebhookFacts {
    pub kind: ConfigurationKind,
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's own name (`webhooks[].name`).
    pub name: String,
    /// `failurePolicy: Fail`, or unset (v1's default).
    pub fail_closed: bool,
    /// `matchPolicy: Exact`; Equivalent (the default) also matches equivalent versions.
    pub exact: bool,
    pub backend: Backend,
    pub rules: Vec<WebhookRule>,
    pub namespace_selector: LabelSelector,
    pub object_selector: LabelSelector,
    /// How many CEL `matchConditions` it has: none can be judged without the request.
    pub match_conditions: usize,
    pub timeout_seconds: Option<i64>,
}

impl WebhookFacts {
    /// Every webhook of one configuration object; why not, for an object without a name.
    pub(crate) fn from_configuration(
        kind: ConfigurationKind,
        object: &Value,
    ) -> Result<Vec<WebhookFacts>, String> {
        let configuration = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .ok_or("it has no metadata.name")?;
        let webhooks = object.get("webhooks").and_then(Value::as_array);
        Ok(webhooks
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(at, webhook)| WebhookFacts::from_webhook(kind, configuration, at, webhook))
            .collect())
    }

    fn from_webhook(
        kind: ConfigurationKind,
        configuration: &str,
        at: usize,
        webhook: &Value,
    ) -> WebhookFacts {
        let text = |pointer: &str| webhook.pointer(pointer).and_then(Value::as_str);
        let backend = match (
            text("/clientConfig/service/name"),
            text("/clientConfig/url"),
        ) {
            (Some(name), _) => Backend::Service {
                namespace: text("/clientConfig/service/namespace")
                    .unwrap_or_default()
                    .to_string(),
                name: name.to_string(),
            },
            (None, Some(url)) => Backend::Url(url.to_string()),
            (None, None) => Backend::Missing,
        };
        WebhookFacts {
            kind,
            configuration: configuration.to_string(),
            name: text("/name").map_or_else(|| format!("webhooks[{at}]"), str::to_string),
            // Anything but Ignore fails closed: unset is Fail in v1.
            fail_closed: text("/failurePolicy") != Some("Ignore"),
            exact: text("/matchPolicy") == Some("Exact"),
            backend,
            rules: webhook
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(rule)
                .collect(),
            namespace_selector: selector(webhook.get("namespaceSelector")),
            object_selector: selector(webhook.get("objectSelector")),
            match_conditions: webhook
                .get("matchConditions")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
            timeout_seconds: webhook.get("timeoutSeconds").and_then(Value::as_i64),
        }
    }

    /// `ValidatingWebhookConfiguration <name> (webhook <webhook>)`: how notes name it.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {} (webhook {})",
            self.kind.name(),
            self.configuration,
            self.name
        )
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn rule(value: &Value) -> WebhookRule {
    WebhookRule {
        operations: strings(value.get("operations")),
        api_groups: strings(value.get("apiGroups")),
        api_versions: strings(value.get("apiVersions")),
        resources: strings(value.get("resources")),
        scope: value
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or("*")
            .to_string(),
    }
}

fn selector(value: Option<&Value>) -> LabelSelector {
    let Some(value) = value else {
        return LabelSelector::default();
    };
    let match_labels = value
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    let match_expressions = value
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| LabelRequirement {
            key: e
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
            operator: e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
            values: strings(e.get("values")),
        })
        .collect();
    LabelSelector {
        match_labels,
        match_expressions,
    }
}

#[cfg(test)]
mod tests;
