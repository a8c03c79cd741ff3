//! Findings about the ETCDSnapshotFiles themselves, as the ConfigMap comparison sees them:
//! CRs the controller never processed, and names that do not match their node and location.

use super::snapshot_finding_context::{Said, Tally, all, plural};
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::model::snapshot_file::CONTROLLER_FINALIZER;

/// `snapshot-controller-idle`: CRs the controller never processed.
pub(super) fn controller_idle(said: &Said<'_>, tally: &Tally, out: &mut Vec<Finding>) {
    if !tally.without_finalizer.is_empty() {
        let mut f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotControllerIdle,
            "ETCDSnapshotFiles",
            format!(
                "{} older than a minute lack the finalizer {CONTROLLER_FINALIZER}, so the snapshot ConfigMap controller \
                 has not processed them: {}{}",
                plural(
                    tally.without_finalizer.len(),
                    "ETCDSnapshotFile",
                    "ETCDSnapshotFiles"
                ),
                all(&tally.without_finalizer),
                said.cause
                    .as_ref()
                    .map(|(why, _)| format!(". Cause: {why}"))
                    .unwrap_or_default()
            ),
        )
        .about_listing(ObjectRef::snapshot_files(&tally.without_finalizer));
        f = f.caused_by(said.split_code());
        f.remediation = match &said.cause {
            Some((_, fix)) => fix.clone(),
            None => format!(
                "check the {} service log on the {} holder for \"Reconciling snapshot ConfigMap data\"",
                said.ctx.distro.server_unit(),
                said.ctx.distro.etcd_lock()
            ),
        };
        out.push(f);
    }
}

/// `snapshot-name-digest-mismatch`: names that do not match their node and location.
pub(super) fn digest_mismatch(tally: &Tally, out: &mut Vec<Finding>) {
    if !tally.digest_mismatches.is_empty() {
        let whys: Vec<String> = tally
            .digest_mismatches
            .iter()
            .map(|(_, why)| why.clone())
            .collect();
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotNameDigestMismatch,
                "ETCDSnapshotFiles",
                format!(
                    "{} (edited, copied between clusters, or renamed by hand): {}",
                    plural(
                        whys.len(),
                        "name does not match its node and location",
                        "names do not match their node and location"
                    ),
                    all(&whys)
                ),
            )
            .about(ObjectRef::snapshot_files(
                &tally
                    .digest_mismatches
                    .iter()
                    .map(|(name, _)| name.clone())
                    .collect::<Vec<_>>(),
            ))
            .listing(&whys),
        );
    }
}
