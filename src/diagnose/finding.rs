//! A finding: one thing wrong (or worth knowing) about the cluster, with what to do about it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

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

/// Stable finding codes (design.md §4): add codes when needed, never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FindingCode {
    LeaseSplit,
    LeaseExpired,
    LeaseReleased,
    LeaseMissing,
    LeaseHolderUnknown,
    LeaseHolderNotReady,
    LeaseHolderAgentless,
    LeaseCopiesDisagree,
    LeaseRecordMalformed,
    MixedVersions,
    SnapshotMissingFromConfigmap,
    SnapshotOrphanedInConfigmap,
    SnapshotStaleInConfigmap,
    SnapshotPrunedForSize,
    SnapshotControllerIdle,
    SnapshotNameDigestMismatch,
    ConfigmapLegacyFormat,
    MemberRemovalStuck,
    MemberTerminatingStuck,
    MemberFinalizerMissing,
    MemberNotVoter,
    EtcdQuorumAtRisk,
    DumpIncomplete,
    VersionAffected,
    // Issue 19, NODEARGS part: the servers' flags (node-args) and snapshot schedule.
    NodeArgsSecretExposed,
    EtcdConfigDrift,
    SnapshotReconcileStalled,
    SnapshotS3ListingSuspect,
    SnapshotS3Retention,
    SnapshotS3RetentionClusterWide,
    // Issue 19, ESF part: what the ETCDSnapshotFiles themselves say (`snapshot-files` check).
    SnapshotFailed,
    SnapshotDeletionStuck,
    SnapshotFileOfRemovedNode,
    SnapshotTokenRotated,
    SnapshotS3Foreign,
    // Issue 19, ENDPOINTS part.
    ApiserverEndpointStale,
    // Issue 29, item 11.
    SnapshotRecordEmpty,
}

impl FindingCode {
    pub const ALL: [FindingCode; 37] = [
        FindingCode::LeaseSplit,
        FindingCode::LeaseExpired,
        FindingCode::LeaseReleased,
        FindingCode::LeaseMissing,
        FindingCode::LeaseHolderUnknown,
        FindingCode::LeaseHolderNotReady,
        FindingCode::LeaseHolderAgentless,
        FindingCode::LeaseCopiesDisagree,
        FindingCode::LeaseRecordMalformed,
        FindingCode::MixedVersions,
        FindingCode::SnapshotMissingFromConfigmap,
        FindingCode::SnapshotOrphanedInConfigmap,
        FindingCode::SnapshotStaleInConfigmap,
        FindingCode::SnapshotPrunedForSize,
        FindingCode::SnapshotControllerIdle,
        FindingCode::SnapshotNameDigestMismatch,
        FindingCode::ConfigmapLegacyFormat,
        FindingCode::MemberRemovalStuck,
        FindingCode::MemberTerminatingStuck,
        FindingCode::MemberFinalizerMissing,
        FindingCode::MemberNotVoter,
        FindingCode::EtcdQuorumAtRisk,
        FindingCode::DumpIncomplete,
        FindingCode::VersionAffected,
        // Issue 19, NODEARGS part.
        FindingCode::NodeArgsSecretExposed,
        FindingCode::EtcdConfigDrift,
        FindingCode::SnapshotReconcileStalled,
        FindingCode::SnapshotS3ListingSuspect,
        FindingCode::SnapshotS3Retention,
        FindingCode::SnapshotS3RetentionClusterWide,
        // Issue 19, ESF part.
        FindingCode::SnapshotFailed,
        FindingCode::SnapshotDeletionStuck,
        FindingCode::SnapshotFileOfRemovedNode,
        FindingCode::SnapshotTokenRotated,
        FindingCode::SnapshotS3Foreign,
        // Issue 19, ENDPOINTS part.
        FindingCode::ApiserverEndpointStale,
        // Issue 29, item 11.
        FindingCode::SnapshotRecordEmpty,
    ];

    /// (usual severity, meaning, remediation): the finding-code table of the README and the
    /// man page.
    pub fn describe(self) -> (&'static str, &'static str, &'static str) {
        use FindingCode::*;
        match self {
            LeaseSplit => (
                "error on affected versions, warning elsewhere",
                "k3s and k3s-etcd are held by different servers",
                "k3sdoctor leases follow --fix; upgrade to the fixed release",
            ),
            LeaseExpired => (
                "error",
                "a lock was not renewed within its duration (+10 s) of now",
                "check the k3s/rke2-server service on the holder",
            ),
            LeaseReleased => (
                "warning, error after 55 s",
                "the holder released the lock and nobody took it",
                "check the service on the servers",
            ),
            LeaseMissing => (
                "error",
                "a lock this version and datastore should have is absent",
                "check the service on the servers",
            ),
            LeaseHolderUnknown => (
                "error",
                "the holder identity matches no Node",
                "wait for expiry, or check the servers",
            ),
            LeaseHolderNotReady => (
                "error",
                "the holder's Node is NotReady, being deleted, or not a server",
                "check the service on that node",
            ),
            LeaseHolderAgentless => (
                "info",
                "the holder has no Node but a live kube-apiserver (a server run with --disable-agent)",
                "nothing to do",
            ),
            LeaseCopiesDisagree => (
                "error",
                "1.24-1.27: the ConfigMap and Lease copies name different holders",
                "set both copies to one holder (k3sdoctor leases follow --fix --to NODE)",
            ),
            LeaseRecordMalformed => (
                "error",
                "a ConfigMap leader annotation is not a valid record",
                "restart the service on the holder",
            ),
            MixedVersions => (
                "warning",
                "servers run different versions (upgrade in progress)",
                "finish the upgrade",
            ),
            SnapshotMissingFromConfigmap => (
                "error (info when explained by missing metadata)",
                "a snapshot that should have a ConfigMap entry has none",
                "k3sdoctor leases follow --fix when split; else k3sdoctor snapshots backfill --fix",
            ),
            SnapshotOrphanedInConfigmap => (
                "warning",
                "an entry has no ETCDSnapshotFile behind it",
                "k3sdoctor snapshots backfill --fix --prune",
            ),
            SnapshotStaleInConfigmap => (
                "warning",
                "an entry's fields differ from its ETCDSnapshotFile",
                "k3sdoctor snapshots backfill --fix",
            ),
            SnapshotPrunedForSize => (
                "info",
                "missing, explained by k3s's pruning at the 1 MiB limit",
                "none",
            ),
            SnapshotControllerIdle => (
                "error",
                "ETCDSnapshotFiles older than a minute lack the snapshot controller's finalizer",
                "k3sdoctor leases follow --fix when split; else check the k3s-etcd holder's log",
            ),
            SnapshotNameDigestMismatch => (
                "warning",
                "a CR name's 6-hex digest does not match its node and location",
                "find who renamed or copied it",
            ),
            ConfigmapLegacyFormat => (
                "warning",
                "entries in the pre-2023 bare-key format",
                "remove them once nothing reads them",
            ),
            MemberRemovalStuck => (
                "error",
                "remove=true set but the member was not removed",
                "check the k3s-etcd holder's log",
            ),
            MemberTerminatingStuck => (
                "error",
                "an etcd Node is stuck terminating on the member finalizer",
                "check the k3s-etcd holder's log",
            ),
            MemberFinalizerMissing => (
                "warning",
                "an etcd Node lacks the member controller's finalizer",
                "check that k3s-etcd is held and fresh",
            ),
            MemberNotVoter => (
                "warning",
                "EtcdIsVoter is False: the member is a learner or unhealthy",
                "check etcd on that node",
            ),
            EtcdQuorumAtRisk => (
                "error",
                "one more lost etcd member would lose quorum (or it is lost)",
                "bring the NotReady members back first",
            ),
            DumpIncomplete => (
                "warning",
                "the dump lacks objects a check needs; that check did not run",
                "add the named kubectl output to the dump",
            ),
            VersionAffected => (
                "warning",
                "check: servers run a version affected by k3s-io/k3s#10046, so a split can come back after any restart, even after a repair",
                "upgrade to the release the finding names",
            ),
            NodeArgsSecretExposed => (
                "error",
                "a <prog>.io/node-args or node-env annotation holds a secret that is not ******** (--etcd-s3-session-token, -t=... before the July 2026 releases, secrets in --*-arg): anyone who can read Nodes reads it",
                "remove the annotation (kubectl annotate node NODE <prog>.io/node-args- <prog>.io/node-config-hash-), rotate the secret, move it out of the flags",
            ),
            EtcdConfigDrift => (
                "warning",
                "etcd servers run with different --etcd-snapshot-* / --etcd-s3* flags (node-args)",
                "set the flags the same on every server",
            ),
            SnapshotReconcileStalled => (
                "warning",
                "an etcd server's local-snapshots-timestamp is older than its reconcile interval (releases with periodic reconcile; else its snapshot schedule) plus a margin, or missing with snapshots enabled; or a failed ETCDSnapshotFile outlived the 24 h error TTL",
                "check the server's log for reconcile errors",
            ),
            SnapshotS3ListingSuspect => (
                "warning",
                "S3 is on and the s3-snapshots-timestamp is fresh, yet no S3 snapshot is as new as the schedule promises: S3 listing or upload fails",
                "run <prog> etcd-snapshot ls on a server and check S3 errors",
            ),
            SnapshotS3Retention => (
                "warning",
                "S3 keeps another number of snapshots than configured: --etcd-snapshot-retention ignored by S3 on the k3s-io/k3s#13769 releases, or more snapshots than the retention (not applied)",
                "set --etcd-s3-retention, or upgrade to the release the finding names",
            ),
            SnapshotS3RetentionClusterWide => (
                "info",
                "S3 retention counts every etcd server's uploads together: M servers keep about N/M cycles, fewer than each keeps locally",
                "raise --etcd-s3-retention to local retention x servers",
            ),
            // Issue 19, ESF part.
            SnapshotFailed => (
                "warning, error when every etcd node's newest snapshot (local or S3) failed",
                "an ETCDSnapshotFile with readyToUse false and an error from the last 24 h; names the node and the message",
                "fix what the error names, then k3s etcd-snapshot save on that node",
            ),
            SnapshotDeletionStuck => (
                "warning",
                "an ETCDSnapshotFile terminating for more than 5 minutes on the managed-etcd-snapshots-controller finalizer; says whether a fresh k3s-etcd holder exists (nobody else removes it)",
                "check the k3s-etcd holder's log; when the snapshot is truly gone, the kubectl patch the finding gives removes the finalizer",
            ),
            SnapshotFileOfRemovedNode => (
                "warning",
                "a local ETCDSnapshotFile whose storage node is no current etcd Node, still present after a reconcile",
                "kubectl delete etcdsnapshotfiles.k3s.cattle.io NAME...; check that a server with a Node runs the reconcile",
            ),
            SnapshotTokenRotated => (
                "info",
                "ready snapshots carry different snapshot-token-hash values: restoring the older ones needs the old token (names the newest snapshot per hash; a missing hash is no mismatch)",
                "keep the old token with those snapshots",
            ),
            SnapshotS3Foreign => (
                "warning",
                "S3 ETCDSnapshotFiles not named <name>-<node>-<unix> for a server of this cluster: a shared bucket or folder mixes clusters (k3s-io/k3s#13934)",
                "give each cluster its own --etcd-s3-folder or bucket",
            ),
            ApiserverEndpointStale => (
                "warning (info when a server without a Node may own the address)",
                "the kubernetes Endpoints or EndpointSlice in default lists an address that is no current server's; agents' load balancers follow it (k3s-io/k3s#14594)",
                "check that no apiserver still advertises it, then delete its /registry/masterleases key with etcdctl on a server",
            ),
            SnapshotRecordEmpty => (
                "warning, error when it is the newest S3 snapshot",
                "an ETCDSnapshotFile that is not a failed save yet has no spec.location or size 0: it points nowhere and cannot be restored; names the multi-server S3 save race (k3s-io/k3s#10989, rancher/rke2#6928) and its fixed release when the version has it",
                "take a snapshot now (k3s etcd-snapshot save), upgrade past the race (v1.28.15, v1.29.10, v1.30.6, v1.31.2), then delete the empty records",
            ),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::LeaseSplit => "lease-split",
            FindingCode::LeaseExpired => "lease-expired",
            FindingCode::LeaseReleased => "lease-released",
            FindingCode::LeaseMissing => "lease-missing",
            FindingCode::LeaseHolderUnknown => "lease-holder-unknown",
            FindingCode::LeaseHolderAgentless => "lease-holder-agentless",
            FindingCode::LeaseHolderNotReady => "lease-holder-not-ready",
            FindingCode::LeaseCopiesDisagree => "lease-copies-disagree",
            FindingCode::LeaseRecordMalformed => "lease-record-malformed",
            FindingCode::MixedVersions => "mixed-versions",
            FindingCode::SnapshotMissingFromConfigmap => "snapshot-missing-from-configmap",
            FindingCode::SnapshotOrphanedInConfigmap => "snapshot-orphaned-in-configmap",
            FindingCode::SnapshotStaleInConfigmap => "snapshot-stale-in-configmap",
            FindingCode::SnapshotPrunedForSize => "snapshot-pruned-for-size",
            FindingCode::SnapshotControllerIdle => "snapshot-controller-idle",
            FindingCode::SnapshotNameDigestMismatch => "snapshot-name-digest-mismatch",
            FindingCode::ConfigmapLegacyFormat => "configmap-legacy-format",
            FindingCode::MemberRemovalStuck => "member-removal-stuck",
            FindingCode::MemberTerminatingStuck => "member-terminating-stuck",
            FindingCode::MemberFinalizerMissing => "member-finalizer-missing",
            FindingCode::MemberNotVoter => "member-not-voter",
            FindingCode::EtcdQuorumAtRisk => "etcd-quorum-at-risk",
            FindingCode::DumpIncomplete => "dump-incomplete",
            FindingCode::VersionAffected => "version-affected",
            FindingCode::NodeArgsSecretExposed => "node-args-secret-exposed",
            FindingCode::EtcdConfigDrift => "etcd-config-drift",
            FindingCode::SnapshotReconcileStalled => "snapshot-reconcile-stalled",
            FindingCode::SnapshotS3ListingSuspect => "snapshot-s3-listing-suspect",
            FindingCode::SnapshotS3Retention => "snapshot-s3-retention",
            FindingCode::SnapshotS3RetentionClusterWide => "snapshot-s3-retention-cluster-wide",
            // Issue 19, ESF part.
            FindingCode::SnapshotFailed => "snapshot-failed",
            FindingCode::SnapshotDeletionStuck => "snapshot-deletion-stuck",
            FindingCode::SnapshotFileOfRemovedNode => "snapshot-file-of-removed-node",
            FindingCode::SnapshotTokenRotated => "snapshot-token-rotated",
            FindingCode::SnapshotS3Foreign => "snapshot-s3-foreign",
            FindingCode::ApiserverEndpointStale => "apiserver-endpoint-stale",
            FindingCode::SnapshotRecordEmpty => "snapshot-record-empty",
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
    pub message: String,
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
    // Shared between a finding's copies, as is `listed`: a finding about 50,000 snapshots is
    // copied into `check`'s list and the command's (issue 24).
    /// Every object the finding names, when it names several (complete, where the message
    /// shows a few).
    #[serde(default, skip_serializing_if = "names_none")]
    pub object_refs: Arc<[ObjectRef]>,
    /// The list the message spells out in full, `, `-separated: the table view shows five
    /// of it and says where the rest are; JSON and YAML keep the whole message.
    #[serde(skip)]
    listed: Listed,
    /// Matched by `--ignore` or the config file's `ignore:`: still reported, never counted
    /// toward the exit code, the summary counts or the alerting metric.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignored: bool,
}

/// Where a finding's spelled-out list is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Listed {
    #[default]
    Nothing,
    Names(Arc<[String]>),
    /// The names of `object_refs`: a list of 50,000 snapshots is not kept twice (issue 24).
    ObjectNames,
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
        message: impl Into<String>,
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
            listed: Listed::Nothing,
            ignored: false,
        }
    }

    /// The list the message spells out, for the table view to shorten.
    pub fn listing(mut self, items: &[String]) -> Finding {
        self.listed = Listed::Names(items.into());
        self
    }

    /// The objects the finding names, which are also the list its message spells out.
    pub fn about_listing(mut self, objects: Arc<[ObjectRef]>) -> Finding {
        self.object_refs = objects;
        self.listed = Listed::ObjectNames;
        self
    }

    /// How long [`Finding::listed`] is, without building it.
    pub fn listed_len(&self) -> usize {
        match &self.listed {
            Listed::Nothing => 0,
            Listed::Names(names) => names.len(),
            Listed::ObjectNames => self.object_refs.len(),
        }
    }

    /// The list the message spells out in full (see [`Finding::listing`]).
    pub fn listed(&self) -> Vec<&str> {
        match &self.listed {
            Listed::Nothing => Vec::new(),
            Listed::Names(names) => names.iter().map(String::as_str).collect(),
            Listed::ObjectNames => self.object_refs.iter().map(|r| r.name.as_str()).collect(),
        }
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
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
}

/// The threshold of `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    fn codes_serialise_as_their_stable_names() {
        for code in [
            FindingCode::LeaseSplit,
            FindingCode::LeaseCopiesDisagree,
            FindingCode::DumpIncomplete,
        ] {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }

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

#[cfg(test)]
mod documented {
    use super::FindingCode;

    #[test]
    fn the_finding_page_lists_every_finding_code_and_no_other() {
        let page = include_str!("../../docs/findings.md");
        let documented: std::collections::BTreeSet<&str> = page
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split_once("` |").map(|(c, _)| c))
            .collect();
        let known: std::collections::BTreeSet<&str> =
            FindingCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            known.len(),
            FindingCode::ALL.len(),
            "a code is listed twice"
        );
        assert_eq!(
            documented, known,
            "docs/findings.md and FindingCode::ALL differ"
        );
    }
}
