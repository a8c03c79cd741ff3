//! Findings about the ETCDSnapshotFiles themselves, as the ConfigMap comparison sees them:
//! CRs the controller never processed, and names that do not match their node and location.

use std::fmt;
use std::sync::Arc;

use super::snapshot_finding_context::{Said, Tally, plural};
use crate::diagnose::finding::{Finding, FindingCode, Severity, Spelled, SpelledItems};
use crate::diagnose::object_ref::ObjectRef;
use crate::model::snapshot_file::{CONTROLLER_FINALIZER, SnapshotFile};
use crate::model::snapshot_key::write_digest_mismatch;

fn names(said: &Said, files: &[Arc<SnapshotFile>]) -> Arc<[ObjectRef]> {
    let names: Vec<&str> = files.iter().map(|f| &*f.name).collect();
    said.snapshot_files(&names)
}

/// `snapshot-controller-idle`: CRs the controller never processed.
pub(super) fn controller_idle(said: &Said<'_>, tally: &Tally, out: &mut Vec<Finding>) {
    if !tally.without_finalizer.is_empty() {
        let mut f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotControllerIdle,
            "ETCDSnapshotFiles",
            format!(
                "{} older than a minute lack the finalizer {CONTROLLER_FINALIZER}, so the snapshot ConfigMap controller \
                 has not processed them: ",
                plural(
                    tally.without_finalizer.len(),
                    "ETCDSnapshotFile",
                    "ETCDSnapshotFiles"
                ),
            ),
        )
        .spelling_objects(
            names(said, &tally.without_finalizer),
            &said
                .cause
                .as_ref()
                .map(|(why, _)| format!(". Cause: {why}"))
                .unwrap_or_default(),
        );
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

/// Why each name does not match its digest, said from the CR when the message is written:
/// a sentence of ~230 bytes for each of 50,000 copied CRs was kept four times.
#[derive(Debug)]
struct DigestMismatches(Vec<Arc<SnapshotFile>>);

impl SpelledItems for DigestMismatches {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn write_item(&self, index: usize, out: &mut dyn fmt::Write) -> fmt::Result {
        write_digest_mismatch(&self.0[index], out)
    }
}

/// `snapshot-name-digest-mismatch`: names that do not match their node and location.
pub(super) fn digest_mismatch(said: &Said<'_>, tally: &Tally, out: &mut Vec<Finding>) {
    let files = &tally.digest_mismatches;
    if !files.is_empty() {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingCode::SnapshotNameDigestMismatch,
                "ETCDSnapshotFiles",
                format!(
                    "{} (edited, copied between clusters, or renamed by hand): ",
                    plural(
                        files.len(),
                        "name does not match its node and location",
                        "names do not match their node and location"
                    ),
                ),
            )
            .about(names(said, files))
            .spelling(
                Spelled::Items(Arc::new(DigestMismatches(files.clone()))),
                "",
            ),
        );
    }
}
