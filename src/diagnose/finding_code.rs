//! The finding codes, each defined once: its stable name (also its serde name), and the row of
//! the finding-code table in the README, the man page and docs/findings.md.

use serde::{Deserialize, Serialize};

/// Declares `FindingCode` from one table, so a code's name, serde name and description cannot
/// disagree (each code was written out four times before).
macro_rules! finding_codes {
    ($(
        $variant:ident = $code:literal {
            severity: $severity:literal,
            meaning: $meaning:literal,
            remediation: $remediation:literal,
        }
    )*) => {
        /// Stable finding codes (docs/findings.md): add codes when needed, never rename one.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
        )]
        pub enum FindingCode {
            $(
                #[serde(rename = $code)]
                $variant,
            )*
        }

        const COUNT: usize = [$($code),*].len();

        impl FindingCode {
            pub const ALL: [FindingCode; COUNT] = [$(FindingCode::$variant),*];

            /// (usual severity, meaning, remediation): the finding-code table of the README
            /// and the man page.
            pub fn describe(self) -> (&'static str, &'static str, &'static str) {
                match self {
                    $(FindingCode::$variant => ($severity, $meaning, $remediation),)*
                }
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $(FindingCode::$variant => $code,)*
                }
            }
        }
    };
}

finding_codes! {
    LeaseSplit = "lease-split" {
        severity: "error on affected versions, info on fixed ones (harmless there), warning on versions before ETCDSnapshotFiles",
        meaning: "k3s and k3s-etcd are held by different servers",
        remediation: "k3sdoctor leases follow --fix; upgrade to the fixed release",
    }
    LeaseExpired = "lease-expired" {
        severity: "error",
        meaning: "a lock was not renewed within its duration (+10 s) of now",
        remediation: "check the k3s/rke2-server service on the holder",
    }
    LeaseReleased = "lease-released" {
        severity: "warning, error after 55 s",
        meaning: "the holder released the lock and nobody took it",
        remediation: "check the service on the servers",
    }
    LeaseMissing = "lease-missing" {
        severity: "error",
        meaning: "a lock this version and datastore should have is absent",
        remediation: "check the service on the servers",
    }
    LeaseHolderUnknown = "lease-holder-unknown" {
        severity: "error",
        meaning: "the holder identity matches no Node",
        remediation: "wait for expiry, or check the servers",
    }
    LeaseHolderNotReady = "lease-holder-not-ready" {
        severity: "error",
        meaning: "the holder's Node is NotReady, being deleted, or not a server",
        remediation: "check the service on that node",
    }
    LeaseHolderAgentless = "lease-holder-agentless" {
        severity: "info",
        meaning: "the holder has no Node but a live kube-apiserver (a server run with --disable-agent)",
        remediation: "nothing to do",
    }
    LeaseCopiesDisagree = "lease-copies-disagree" {
        severity: "error",
        meaning: "1.24-1.27: the ConfigMap and Lease copies name different holders",
        remediation: "set both copies to one holder (k3sdoctor leases follow --fix --to NODE)",
    }
    LeaseRecordMalformed = "lease-record-malformed" {
        severity: "error",
        meaning: "a ConfigMap leader annotation is not a valid record",
        remediation: "restart the service on the holder",
    }
    MixedVersions = "mixed-versions" {
        severity: "warning",
        meaning: "servers run different versions (upgrade in progress)",
        remediation: "finish the upgrade",
    }
    SnapshotMissingFromConfigmap = "snapshot-missing-from-configmap" {
        severity: "error (info when explained by missing metadata)",
        meaning: "a snapshot that should have a ConfigMap entry has none",
        remediation: "k3sdoctor leases follow --fix when split; else k3sdoctor snapshots backfill --fix",
    }
    SnapshotOrphanedInConfigmap = "snapshot-orphaned-in-configmap" {
        severity: "warning",
        meaning: "an entry has no ETCDSnapshotFile behind it",
        remediation: "k3sdoctor snapshots backfill --fix --prune",
    }
    SnapshotStaleInConfigmap = "snapshot-stale-in-configmap" {
        severity: "warning",
        meaning: "an entry's fields differ from its ETCDSnapshotFile",
        remediation: "k3sdoctor snapshots backfill --fix",
    }
    SnapshotPrunedForSize = "snapshot-pruned-for-size" {
        severity: "info",
        meaning: "missing, explained by k3s's pruning at the 1 MiB limit",
        remediation: "none",
    }
    SnapshotControllerIdle = "snapshot-controller-idle" {
        severity: "error",
        meaning: "ETCDSnapshotFiles older than a minute lack the snapshot controller's finalizer",
        remediation: "k3sdoctor leases follow --fix when split; else check the k3s-etcd holder's log",
    }
    SnapshotNameDigestMismatch = "snapshot-name-digest-mismatch" {
        severity: "warning",
        meaning: "a CR name's 6-hex digest does not match its node and location",
        remediation: "find who renamed or copied it",
    }
    ConfigmapLegacyFormat = "configmap-legacy-format" {
        severity: "warning",
        meaning: "entries in the pre-2023 bare-key format",
        remediation: "remove them once nothing reads them",
    }
    MemberRemovalStuck = "member-removal-stuck" {
        severity: "error; warning when the request's age is unknown",
        meaning: "remove=true set over 15 minutes ago (by managedFields) but the member was not removed; a younger request is in progress",
        remediation: "check the k3s-etcd holder's log",
    }
    MemberTerminatingStuck = "member-terminating-stuck" {
        severity: "error",
        meaning: "an etcd Node is stuck terminating on the member finalizer",
        remediation: "check the k3s-etcd holder's log",
    }
    MemberFinalizerMissing = "member-finalizer-missing" {
        severity: "warning",
        meaning: "an etcd Node lacks the member controller's finalizer",
        remediation: "check that k3s-etcd is held and fresh",
    }
    MemberNotVoter = "member-not-voter" {
        severity: "warning",
        meaning: "EtcdIsVoter is False: the member is a learner or unhealthy",
        remediation: "check etcd on that node",
    }
    EtcdQuorumAtRisk = "etcd-quorum-at-risk" {
        severity: "error",
        meaning: "one more lost etcd member would lose quorum (or it is lost)",
        remediation: "bring the NotReady members back first",
    }
    EtcdDbNearQuota = "etcd-db-near-quota" {
        severity: "warning at 80 % of the member's quota, error at 95 %",
        meaning: "an etcd member's database file nears its quota (from etcd's quota metric, else --etcd-arg quota-backend-bytes, else 2 GiB)",
        remediation: "compact and defragment that member with etcdctl; raise quota-backend-bytes on every server",
    }
    EtcdDbOverQuota = "etcd-db-over-quota" {
        severity: "error",
        meaning: "a member is at its quota, or within etcd's largest write (1.5 MiB) of it (NOSPACE), or every lock froze beside a member near it: writes are refused cluster-wide",
        remediation: "compact, defragment every member, then etcdctl alarm disarm",
    }
    EtcdDbFragmented = "etcd-db-fragmented" {
        severity: "warning",
        meaning: "under half of a member's file is in use and over 100 MiB is (etcd's own rule; needs :2381)",
        remediation: "defragment that member with etcdctl, one member at a time",
    }
    EtcdQuotaDiffers = "etcd-quota-differs" {
        severity: "warning",
        meaning: "etcd members run different quotas: the smallest bounds the cluster",
        remediation: "set the same --etcd-arg=quota-backend-bytes on every server",
    }
    KineCompactionStalled = "kine-compaction-stalled" {
        severity: "warning",
        meaning: "kine's compactions fail and none succeeded in 15 minutes of uptime: the database only grows",
        remediation: "read the server's log for kine's Compact errors",
    }
    DatastoreSlow = "datastore-slow" {
        severity: "warning",
        meaning: "single-object storage p99 over 1 s, WAL fsync p99 over 0.5 s or backend commit p99 over 0.25 s (lifetime p99 from one scrape)",
        remediation: "check the server's disk and CPU",
    }
    // Etcd members beyond quorum.
    EtcdMemberNameDuplicate = "etcd-member-name-duplicate" {
        severity: "error",
        meaning: "two or more Nodes carry one etcd.<prog>.cattle.io/node-name (a machine cloned with its etcd data, rancher/rke2#5482, k3s-io/k3s#9521): the servers fight over one member",
        remediation: "on the Node created last: stop the service, move /var/lib/rancher/<prog>/server/db aside, start it with a unique --node-name",
    }
    EtcdLearnerStuck = "etcd-learner-stuck" {
        severity: "error",
        meaning: "EtcdIsVoter False with MemberIsLearner for more than 15 minutes: k3s neither promotes nor removes the learner (it removes one stalled for 5); replaces member-not-voter for that Node",
        remediation: "check the server's and the etcd leader's log for learner promotion errors, disk and network latency; restart the service",
    }
    EtcdVoterHeartbeatStale = "etcd-voter-heartbeat-stale" {
        severity: "warning",
        meaning: "a Ready etcd server's EtcdIsVoter heartbeat is more than 15 minutes old; the etcd leader alone refreshes it for every Node every 5 minutes, so with none fresh the leader has stopped its member management (one finding, about the etcd leader), else the leader's update of that Node fails; the voter findings of that Node hang under it",
        remediation: "find the etcd leader (etcdctl endpoint status --cluster) and check its log; restart only the leader when no Node's condition is fresh",
    }
    DumpIncomplete = "dump-incomplete" {
        severity: "warning",
        meaning: "the dump lacks objects a check needs; that check did not run",
        remediation: "add the named kubectl output to the dump",
    }
    VersionAffected = "version-affected" {
        severity: "warning",
        meaning: "check: servers run a version affected by k3s-io/k3s#10046, so a split can come back after any restart, even after a repair",
        remediation: "upgrade to the release the finding names",
    }
    // The servers' flags (node-args) and snapshot schedule.
    NodeArgsSecretExposed = "node-args-secret-exposed" {
        severity: "error",
        meaning: "a <prog>.io/node-args or node-env annotation holds a secret that is not ******** (--etcd-s3-session-token, -t=... before the July 2026 releases, secrets in --*-arg): anyone who can read Nodes reads it",
        remediation: "remove the annotation (kubectl annotate node NODE <prog>.io/node-args- <prog>.io/node-config-hash-), rotate the secret, move it out of the flags",
    }
    EtcdConfigDrift = "etcd-config-drift" {
        severity: "warning",
        meaning: "etcd servers run with different --etcd-snapshot-* / --etcd-s3* flags (node-args)",
        remediation: "set the flags the same on every server",
    }
    SnapshotReconcileStalled = "snapshot-reconcile-stalled" {
        severity: "warning",
        meaning: "an etcd server's local-snapshots-timestamp is older than its reconcile interval (releases with periodic reconcile; else its snapshot schedule) plus a margin, or missing with snapshots enabled; or a failed ETCDSnapshotFile outlived the 24 h error TTL",
        remediation: "check the server's log for reconcile errors",
    }
    SnapshotS3ListingSuspect = "snapshot-s3-listing-suspect" {
        severity: "warning",
        meaning: "S3 is on and the s3-snapshots-timestamp is fresh, yet no S3 snapshot is as new as the schedule promises: S3 listing or upload fails",
        remediation: "run <prog> etcd-snapshot ls on a server and check S3 errors",
    }
    SnapshotS3Retention = "snapshot-s3-retention" {
        severity: "warning",
        meaning: "S3 keeps another number of snapshots than configured: --etcd-snapshot-retention ignored by S3 on the k3s-io/k3s#13769 releases, or more snapshots than the retention (not applied)",
        remediation: "set --etcd-s3-retention, or upgrade to the release the finding names",
    }
    SnapshotS3RetentionClusterWide = "snapshot-s3-retention-cluster-wide" {
        severity: "info",
        meaning: "S3 retention counts every etcd server's uploads together: M servers keep about N/M cycles, fewer than each keeps locally",
        remediation: "raise --etcd-s3-retention to local retention x servers",
    }
    // What the ETCDSnapshotFiles themselves say (`snapshot-files` check).
    SnapshotFailed = "snapshot-failed" {
        severity: "warning, error when every etcd node's newest snapshot (local or S3) failed",
        meaning: "an ETCDSnapshotFile with readyToUse false and an error from the last 24 h; names the node and the message",
        remediation: "fix what the error names, then k3s etcd-snapshot save on that node",
    }
    SnapshotDeletionStuck = "snapshot-deletion-stuck" {
        severity: "warning",
        meaning: "an ETCDSnapshotFile terminating for more than 5 minutes on the managed-etcd-snapshots-controller finalizer; says whether a fresh k3s-etcd holder exists (nobody else removes it)",
        remediation: "check the k3s-etcd holder's log; when the snapshot is truly gone, the kubectl patch the finding gives removes the finalizer",
    }
    SnapshotFileOfRemovedNode = "snapshot-file-of-removed-node" {
        severity: "warning",
        meaning: "a local ETCDSnapshotFile whose storage node is no current etcd Node, still present after a reconcile",
        remediation: "kubectl delete etcdsnapshotfiles.k3s.cattle.io NAME...; check that a server with a Node runs the reconcile",
    }
    SnapshotTokenRotated = "snapshot-token-rotated" {
        severity: "info",
        meaning: "ready snapshots carry different snapshot-token-hash values: restoring the older ones needs the old token (names the newest snapshot per hash; a missing hash is no mismatch)",
        remediation: "keep the old token with those snapshots",
    }
    SnapshotS3Foreign = "snapshot-s3-foreign" {
        severity: "warning",
        meaning: "S3 ETCDSnapshotFiles not named <name>-<node>-<unix> for a server of this cluster: a shared bucket or folder mixes clusters (k3s-io/k3s#13934)",
        remediation: "give each cluster its own --etcd-s3-folder or bucket",
    }
    // The `default/kubernetes` Endpoints.
    ApiserverEndpointStale = "apiserver-endpoint-stale" {
        severity: "warning (info when a server without a Node may own the address)",
        meaning: "the kubernetes Endpoints or EndpointSlice in default lists an address that is no current server's; agents' load balancers follow it (k3s-io/k3s#14594)",
        remediation: "check that no apiserver still advertises it, then delete its /registry/masterleases key with etcdctl on a server",
    }
    // S3 records that point nowhere.
    SnapshotRecordEmpty = "snapshot-record-empty" {
        severity: "warning, error when it is the newest S3 snapshot",
        meaning: "an ETCDSnapshotFile that is not a failed save yet has no spec.location or size 0: it points nowhere and cannot be restored; names the multi-server S3 save race (k3s-io/k3s#10989, rancher/rke2#6928) and its fixed release when the version has it",
        remediation: "take a snapshot now (k3s etcd-snapshot save), upgrade past the race (v1.28.15, v1.29.10, v1.30.6, v1.31.2), then delete the empty records",
    }
    // Certificates.
    ServingCertExpiring = "serving-cert-expiring" {
        severity: "warning inside k3s's 90-day renewal window, error within 14 days or expired",
        meaning: "the certificate presented at the address k3sdoctor connects to (read from a TLS handshake of its own, with the names it carries) expires soon; behind Rancher's proxy it is Rancher's certificate and the finding says so",
        remediation: "restart <prog> on each server, one at a time; check listener.cattle.io/static on kube-system/<prog>-serving",
    }
    KubeconfigCertExpiring = "kubeconfig-cert-expiring" {
        severity: "warning inside 90 days, error within 14 days or expired",
        meaning: "the client certificate k3sdoctor authenticates with (the kubeconfig's user) expires soon; a node's admin kubeconfig expires too",
        remediation: "restart <prog> on a server and use the renewed /etc/rancher/<prog>/<prog>.yaml",
    }
    // Secrets encryption.
    SecretsEncryptionDiverged = "secrets-encryption-diverged" {
        severity: "warning, error when a server's value is one k3s cannot read",
        meaning: "control-plane Nodes carry different <prog>.io/encryption-config-hash values (stage and config hash): `<prog> secrets-encrypt status` says Hash Match: false and the next secrets-encrypt command refuses; names the stage and hash per server",
        remediation: "restart <prog> on the servers that are behind, one at a time, then <prog> secrets-encrypt status",
    }
    // The cert monitor's and the re-encryption controller's Node Events.
    CertExpiring = "cert-expiring" {
        severity: "warning, error within 14 days of expiry or already expired",
        meaning: "the cert monitor's CertificateExpirationWarning Event on a server's Node: leaf certificates inside k3s's 90-day window; names the node, the files, subjects and dates (a later CertificateExpirationOK on the node supersedes it)",
        remediation: "restart <prog> on that node (it renews leaf certificates within 90 days of expiry on restart), then <prog> certificate check",
    }
    CaCertExpiring = "ca-cert-expiring" {
        severity: "warning, error within 14 days of expiry or already expired",
        meaning: "the cert monitor's CACertificateExpirationWarning Event: CA certificates inside the 365-day window; names the node, the files and dates",
        remediation: "plan a CA rotation: <prog> certificate rotate-ca, then restart every node",
    }
    SecretsEncryptionFailed = "secrets-encryption-failed" {
        severity: "error",
        meaning: "a SecretsUpdateError Event from the last 24 h on a server's Node: a secrets-encrypt step failed there; names the node and the error",
        remediation: "<prog> secrets-encrypt status on that node; fix what the error names, then run the step again",
    }
    SecretsEncryptionStuck = "secrets-encryption-stuck" {
        severity: "warning",
        meaning: "a server at stage reencrypt_request or reencrypt_active whose newest SecretsProgress or SecretsUpdateStart Event is more than an hour old, or absent (k3s-io/k3s#5489)",
        remediation: "<prog> secrets-encrypt status; check the Events and the <prog> log, restart <prog> on that server, then <prog> secrets-encrypt reencrypt --force",
    }
    // Rancher's snapshot records against the downstream snapshots.
    RancherSnapshotMissing = "rancher-snapshot-missing" {
        severity: "error (info while a restore runs: Rancher postpones records on purpose)",
        meaning: "a downstream snapshot has no Rancher record after the grace period (5 min on 2.11+, 15 min on 2.10 and earlier); names the cause the objects show: the backpopulate Feature off, the cluster not administrated or disconnected, no CAPI Machine for a local snapshot's node (2.11-2.14), a restore in progress, a name Rancher cannot map (< 2.14), or the version's known loop",
        remediation: "what the cause names: enable the Feature, delete the unannotated record of the 2.11.0-2.11.1 loop, upgrade Rancher",
    }
    RancherSnapshotOrphaned = "rancher-snapshot-orphaned" {
        severity: "warning",
        meaning: "a Rancher record with the etcdsnapshot.rke.io/snapshot-name annotation whose ETCDSnapshotFile is gone: Rancher should have deleted it, so its controller for the cluster is not running or the cluster is disconnected; on 2.10 and earlier, a record whose snapshot has neither an ETCDSnapshotFile nor a ConfigMap entry, which Rancher marks missing and keeps",
        remediation: "check the Rancher pods' logs for snapshotbackpopulate; kubectl -n NS delete etcdsnapshots.rke.cattle.io NAME...",
    }
    RancherSnapshotUnmanaged = "rancher-snapshot-unmanaged" {
        severity: "warning",
        meaning: "a Rancher 2.11+ record without the correlation annotation that matches no downstream snapshot: Rancher never deletes it (left by 2.10 or earlier, or made by hand for disaster recovery)",
        remediation: "kubectl -n NS delete etcdsnapshots.rke.cattle.io NAME..., after checking none is a manual disaster-recovery record",
    }
    RancherSnapshotDuplicate = "rancher-snapshot-duplicate" {
        severity: "warning",
        meaning: "two or more Rancher records for one snapshot: the UI lists it more than once",
        remediation: "kubectl -n NS delete etcdsnapshots.rke.cattle.io on all but the newest",
    }
    RancherSnapshotDrift = "rancher-snapshot-drift" {
        severity: "warning",
        meaning: "a Rancher record whose size, status, creation time, location, node, message or metadata differ from what Rancher's mapping makes of the snapshot (names the 2.11.2-2.11.3 resourceVersion loop where it applies)",
        remediation: "restart the Rancher pods so it reconciles every record; upgrade past the loop",
    }
    RancherSnapshotSizeUnknown = "rancher-snapshot-size-unknown" {
        severity: "error (warning when the ConfigMap has the entry)",
        meaning: "a Rancher 2.10-or-earlier record of a snapshot that still exists, with no size or status, or status.missing: the \"0 B\" snapshot, because the snapshot ConfigMap lacks its entry (under snapshot-missing-from-configmap, and through it lease-split)",
        remediation: "k3sdoctor snapshots backfill --fix",
    }
    RancherRestoreUnavailable = "rancher-restore-unavailable" {
        severity: "error for a gone machine, warning for restore mode none",
        meaning: "Rancher cannot restore from a record: a local snapshot whose machine no longer exists (2.11-2.14), or restore-mode-options none (2.14+) because the snapshot's metadata lacks the cluster spec, naming the missing extra-metadata ConfigMap when that is why",
        remediation: "restore from another snapshot; recreate the extra-metadata ConfigMap and take a new snapshot",
    }
    RancherBackpopulateOff = "rancher-backpopulate-off" {
        severity: "error",
        meaning: "Rancher's Feature v2prov-etcd-snapshot-backpopulate is disabled (2.11+): Rancher makes no snapshot records at all",
        remediation: "enable the Feature in Rancher (Global Settings > Feature Flags)",
    }
    RancherMachinePlanStuck = "rancher-machine-plan-stuck" {
        severity: "warning",
        meaning: "a v2prov machine's plan is never applied: its Machine's PlanApplied is False (the agent failed max-failures times), or (with the opt-in read of the plan Secrets) the agent's applied checksum is not the sha256 of the plan Rancher wrote 15 minutes or more ago; Rancher has no timeout, so the cluster waits forever. Nothing of the plan (it holds the join token) is read beyond its hash",
        remediation: "journalctl -u rancher-system-agent on the node",
    }
    // From the metadata of Secrets in kube-system (opt-in role).
    NodePasswordOrphaned = "node-password-orphaned" {
        severity: "warning (info when every server runs a release that deletes it itself)",
        meaning: "a kube-system Secret <node>.node-password.<prog> more than 10 minutes old whose Node does not exist (or whose owner Node is gone): the next join under that node name fails with \"Node password rejected\"; k3s deletes such Secrets itself since v1.31.14, v1.32.10, v1.33.6, v1.34.2 and 1.35",
        remediation: "kubectl -n kube-system delete secret <node>.node-password.<prog>",
    }
    ServingCertFrozen = "serving-cert-frozen" {
        severity: "warning",
        meaning: "kube-system/<prog>-serving carries listener.cattle.io/static: \"true\": dynamiclistener no longer renews the apiserver's serving certificate nor adds SANs (k3s-io/k3s#7312); lists the SANs from its listener.cattle.io/cn-* annotations",
        remediation: "kubectl -n kube-system annotate secret <prog>-serving listener.cattle.io/static-",
    }
    // The packaged components helm-controller installs.
    HelmchartFailed = "helmchart-failed" {
        severity: "error",
        meaning: "a HelmChart in kube-system whose install Job failed (Job condition Failed=True, e.g. BackoffLimitExceeded) or whose own Failed condition is True; k3s's and RKE2's charts first",
        remediation: "kubectl -n kube-system logs job/helm-install-NAME; fix what it names, then kubectl -n kube-system delete job helm-install-NAME so helm-controller runs it again",
    }
    HelmchartStuck = "helmchart-stuck" {
        severity: "warning",
        meaning: "a HelmChart's helm-install Job in kube-system neither complete nor failed more than 15 minutes after it started (often a release left pending-* by an interrupted upgrade, rancher/rke2#1124)",
        remediation: "kubectl -n kube-system logs job/helm-install-NAME; look for Helm release Secrets labelled owner=helm,status=pending-*, then delete the Job so helm-controller runs it again",
    }
    // Upgrades: system-upgrade-controller's Plans and the version-skew policy.
    UpgradePlanStuck = "upgrade-plan-stuck" {
        severity: "error when a server is left cordoned or a server's Job failed, warning otherwise",
        meaning: "a system-upgrade-controller Plan's upgrade of a node has not finished: its Job failed (DeadlineExceeded, BackoffLimitExceeded), the Plan says Complete=False/JobFailed, the Job runs past its deadline, or the node stays in status.applying with no Job longer than a Job may run (SUC deletes a failed Job after its TTL and from v0.15.3 does not re-create it); an agent's upgrade waiting on a server Plan that still applies says so",
        remediation: "kubectl -n NAMESPACE logs job/JOB; fix what it names, then edit the Plan to retry (SUC v0.15.3 and later) or let SUC up to v0.13.4 re-create the Job; kubectl uncordon NODE if you give the upgrade up (deleting the Plan leaves it cordoned)",
    }
    VersionSkew = "version-skew" {
        severity: "error",
        meaning: "the Nodes' versions breach Kubernetes' version-skew policy: a kubelet newer than the oldest apiserver, a kubelet more minors behind the newest apiserver than allowed (3 from 1.28 control planes, 2 before and for kubelets before 1.25), or apiservers more than one minor apart (one minor apart is mixed-versions)",
        remediation: "upgrade servers first, one minor and one server at a time, then agents",
    }
    // Admission webhooks in the path of the control plane's own writes.
    WebhookFailClosedDown = "webhook-fail-closed-down" {
        severity: "error (warning when it only may match)",
        meaning: "a Validating- or MutatingWebhookConfiguration's webhook with failurePolicy Fail (v1's default) matches writes the control plane must make (its locks, heartbeats, Nodes, Events, snapshot records, kube-system Secrets) and its Service has no ready endpoint or is missing: the apiserver rejects those writes",
        remediation: "kubectl get validatingwebhookconfiguration NAME -o yaml; restore its Service's backend, or set failurePolicy: Ignore or a namespaceSelector excluding kube-system; in an emergency, kubectl delete validatingwebhookconfiguration NAME",
    }
    WebhookBlocksControlPlane = "webhook-blocks-control-plane" {
        severity: "warning",
        meaning: "a fail-closed webhook (failurePolicy Fail) whose backend is up, or cannot be judged (a url: webhook), still matches writes the control plane must make: when its backend fails, those writes fail",
        remediation: "kubectl get validatingwebhookconfiguration NAME -o yaml; set failurePolicy: Ignore, or a namespaceSelector excluding kube-system (kubernetes.io/metadata.name NotIn [kube-system, kube-node-lease]) and rules that leave out the control plane's kinds",
    }
}

#[cfg(test)]
mod tests {
    use super::FindingCode;

    #[test]
    fn codes_serialise_as_their_stable_names() {
        for code in FindingCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
            let back: FindingCode = serde_json::from_value(code.as_str().into()).unwrap();
            assert_eq!(back, code);
        }
    }

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
