//! A finding: one thing wrong (or worth knowing) about the cluster, with what to do about it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub(crate) use super::finding_code::FindingCode;
pub(crate) use super::finding_message::{Message, Spelled, SpelledItems};
use super::object_ref::ObjectRef;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    /// As JSON spells it: `info`, `warning`, `error` (also the metric label and the log field).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub severity: Severity,
    pub code: FindingCode,
    /// The object the finding is about, e.g. `Lease kube-system/k3s` or `Node server-1`.
    pub object: String,
    pub message: Message,
    /// The next command or action; empty when there is nothing to do.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub remediation: String,
    /// The command `remediation` starts with, as an argv a program can run without parsing
    /// prose (connection flags are the caller's to add); absent when the remediation is advice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remediation_command: Vec<String>,
    /// The finding this one follows from, when the analyser knows it (`check` lists it under
    /// that one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<FindingCode>,
    /// `object` as an API reference, when it names one object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    // Shared between a finding's copies, as is the message's list: a finding about 50,000
    // snapshots is copied into `check`'s list and the command's.
    /// Every object the finding names, when it names several (complete, where the message
    /// shows a few).
    #[serde(default, skip_serializing_if = "names_none")]
    pub object_refs: Arc<[ObjectRef]>,
    /// Matched by `--ignore` or the config file's `ignore:`: still reported, never counted
    /// toward the exit code, the summary counts or the alerting metric.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignored: bool,
}

fn names_none(objects: &Arc<[ObjectRef]>) -> bool {
    objects.is_empty()
}

/// The `k3sdoctor …` or `kubectl …` command a remediation starts with, up to where the prose
/// explaining it begins (` (`, `;`, `,`); nothing when it starts with advice or quotes an argument.
fn leading_command(remediation: &str) -> Vec<String> {
    if !(remediation.starts_with("k3sdoctor ") || remediation.starts_with("kubectl ")) {
        return Vec::new();
    }
    let end = [" (", ";", ","]
        .iter()
        .filter_map(|sep| remediation.find(sep))
        .min()
        .unwrap_or(remediation.len());
    let command = &remediation[..end];
    if command.contains(['\'', '"', '`']) {
        return Vec::new();
    }
    command.split_whitespace().map(str::to_string).collect()
}

impl Finding {
    pub fn new(
        severity: Severity,
        code: FindingCode,
        object: impl Into<String>,
        message: impl Into<Message>,
    ) -> Finding {
        let object = object.into();
        Finding {
            severity,
            code,
            object_ref: ObjectRef::parse(&object),
            object,
            message: message.into(),
            remediation: String::new(),
            remediation_command: Vec::new(),
            caused_by: None,
            object_refs: Arc::default(),
            ignored: false,
        }
    }

    /// The list the message spells out (its text already holds it joined with `, `), for
    /// the table view to shorten; the message keeps it instead of its joined text.
    pub fn listing(mut self, items: &[String]) -> Finding {
        self.message = self.message.keeping(Spelled::Texts(items.into()));
        self
    }

    /// The objects the finding names, which are also the list its message (already) spells out.
    pub fn about_listing(mut self, objects: Arc<[ObjectRef]>) -> Finding {
        self.message = self
            .message
            .keeping(Spelled::ObjectNames(Arc::clone(&objects)));
        self.object_refs = objects;
        self
    }

    /// The message so far, then every one of `objects` by name, then `tail`; the finding is
    /// about those objects. The names are not joined until the message is written.
    pub fn spelling_objects(mut self, objects: Arc<[ObjectRef]>, tail: &str) -> Finding {
        let head = std::mem::take(&mut self.message).to_text().into_owned();
        self.message = Message::spelling(head, Spelled::ObjectNames(Arc::clone(&objects)), tail);
        self.object_refs = objects;
        self
    }

    /// The message so far, then every one of `list`, then `tail`.
    pub fn spelling(mut self, list: Spelled, tail: &str) -> Finding {
        let head = std::mem::take(&mut self.message).to_text().into_owned();
        self.message = Message::spelling(head, list, tail);
        self
    }

    /// How long the list the message spells out is.
    pub fn listed_len(&self) -> usize {
        self.message.spelled().map_or(0, Spelled::len)
    }

    /// The list the message spells out in full (see [`Finding::listing`]).
    pub fn listed(&self) -> Vec<std::borrow::Cow<'_, str>> {
        self.message
            .spelled()
            .map(|list| (0..list.len()).map(|i| list.item(i)).collect())
            .unwrap_or_default()
    }

    /// The objects the finding names, all of them.
    pub fn about(mut self, objects: impl Into<Arc<[ObjectRef]>>) -> Finding {
        self.object_refs = objects.into();
        self
    }

    pub fn fix(mut self, remediation: impl Into<String>) -> Finding {
        self.remediation = remediation.into();
        self.remediation_command = leading_command(&self.remediation);
        self
    }

    pub fn caused_by(mut self, cause: Option<FindingCode>) -> Finding {
        self.caused_by = cause;
        self
    }
}

/// Most severe first; stable otherwise, so related findings stay together.
pub(crate) fn rank(findings: &mut [Finding]) {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
}

/// The threshold of `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Never,
}

impl FailOn {
    pub fn is_failure(self, findings: &[Finding]) -> bool {
        let threshold = match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Never => return false,
        };
        findings
            .iter()
            .any(|f| !f.ignored && f.severity >= threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_on_thresholds() {
        let warn = [Finding::new(
            Severity::Warning,
            FindingCode::MixedVersions,
            "x",
            "y",
        )];
        assert!(!FailOn::Error.is_failure(&warn));
        assert!(FailOn::Warning.is_failure(&warn));
        assert!(!FailOn::Never.is_failure(&warn));
        assert!(!FailOn::Warning.is_failure(&[]));
    }

    #[test]
    fn a_remediation_that_starts_with_a_command_carries_its_argv() {
        let argv = |text: &str| leading_command(text);
        assert_eq!(
            argv("k3sdoctor leases follow --fix (moves k3s to s2); lasting fix: upgrade"),
            ["k3sdoctor", "leases", "follow", "--fix"]
        );
        assert_eq!(
            argv("k3sdoctor snapshots backfill --fix --prune"),
            ["k3sdoctor", "snapshots", "backfill", "--fix", "--prune"]
        );
        assert!(argv("upgrade to v1.29.6+k3s1 or later").is_empty());
        assert!(argv("kubectl -n kube-system patch lease k3s -p '{}'").is_empty());
    }
}
