//! What the snapshot finding builders share (`snapshot_findings`, `snapshot_entry_findings`,
//! `snapshot_cr_findings`, `snapshot_dump_gap`): the context they judge in, the per-CR tally,
//! what the findings about the ConfigMap say alike, and the split that explains them.

use std::cell::RefCell;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use super::entry_state::EntryState;
use super::snapshot_entry_count::{self, EntryCount};
use super::snapshot_row::SnapshotRow;
use crate::diagnose::finding::{FindingCode, Severity};
use crate::diagnose::leases::LeaseAnalysis;
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::cluster_state::ClusterState;
use crate::model::configmap_listing::Listed;
use crate::model::snapshot_file::SnapshotFile;

/// Per-CR observations the findings summarise.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// CRs past the grace period without the controller's finalizer.
    pub without_finalizer: Vec<Arc<SnapshotFile>>,
    /// CRs whose name's digest does not match their node and location.
    pub digest_mismatches: Vec<Arc<SnapshotFile>>,
    pub with_metadata: usize,
}

impl Tally {
    pub(super) fn count(
        &mut self,
        file: &Arc<SnapshotFile>,
        state: EntryState,
        now: Timestamp,
        grace: SignedDuration,
    ) {
        if !file.metadata.is_empty() {
            self.with_metadata += 1;
        }
        let old_enough = file.created.is_some_and(|c| now.duration_since(c) > grace);
        if state != EntryState::Deleting && old_enough && !file.has_controller_finalizer() {
            self.without_finalizer.push(Arc::clone(file));
        }
    }
}

pub(super) struct Context<'a> {
    pub distro: Distro,
    pub state: &'a ClusterState,
    pub leases: &'a LeaseAnalysis,
    pub cm_name: &'a str,
    pub extra_metadata_present: bool,
    pub bytes: usize,
    /// Why k3s's controller cannot be writing now (`snapshot_writer`), when known.
    pub not_writing: Option<&'a str>,
    /// What a pasted ConfigMap table shows of the snapshot ConfigMap (file, what), when no
    /// object of it was read.
    pub listed: Option<(&'a str, Listed)>,
    /// Its entry count against the snapshots that should have one, when it is all it shows.
    pub entry_count: Option<&'a EntryCount>,
}

/// Every item of a list: the message in JSON and YAML is complete, and the table view shows
/// five of the finding's `listed` items (`render::findings`).
pub(super) fn all(items: &[String]) -> String {
    items.join(", ")
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the findings about the ConfigMap say alike: its object, the split that explains
/// them (why, repair command) and the sentence that says so.
pub(super) struct Said<'a> {
    pub ctx: &'a Context<'a>,
    pub object: String,
    pub cause: Option<(String, String)>,
    /// `. Cause: …` or `. Nothing writes them now: …`, or nothing.
    pub because: String,
    /// What a pasted table shows of an empty or absent ConfigMap, or nothing.
    pub listed_empty: String,
    /// The lists of CRs the findings name so far: where every CR is missing, the same 50,000
    /// are missing, unprocessed and (when copied by hand) misnamed, and are kept once.
    named: RefCell<Vec<Arc<[ObjectRef]>>>,
}

impl<'a> Said<'a> {
    pub(super) fn new(ctx: &'a Context<'a>) -> Said<'a> {
        let cause = split_cause(ctx);
        let because = match (&cause, ctx.not_writing) {
            (Some((why, _)), _) => format!(". Cause: {why}"),
            // Young CRs count too: nothing will write their entries either.
            (None, Some(why)) => format!(". Nothing writes them now: {why}"),
            (None, None) => String::new(),
        };
        Said {
            object: format!("ConfigMap kube-system/{}", ctx.cm_name),
            listed_empty: snapshot_entry_count::known_empty(ctx.listed, ctx.cm_name),
            cause,
            because,
            ctx,
            named: RefCell::default(),
        }
    }

    /// The CRs `names`, as a finding refers to them: the list an earlier finding named, when
    /// it named the same ones in the same order.
    pub(super) fn snapshot_files(&self, names: &[&str]) -> Arc<[ObjectRef]> {
        let mut named = self.named.borrow_mut();
        let same = |list: &&Arc<[ObjectRef]>| {
            list.len() == names.len() && list.iter().zip(names).all(|(r, n)| r.name == *n)
        };
        if let Some(list) = named.iter().find(same) {
            return Arc::clone(list);
        }
        let list = ObjectRef::snapshot_files(names);
        named.push(Arc::clone(&list));
        list
    }

    pub(super) fn split_code(&self) -> Option<FindingCode> {
        self.cause.as_ref().map(|_| FindingCode::LeaseSplit)
    }
}

/// The names of the rows in `state`.
/// The CRs whose entry is in `state`, as the finding that names them refers to them.
pub(super) fn in_state(said: &Said, rows: &[SnapshotRow], state: EntryState) -> Arc<[ObjectRef]> {
    let names: Vec<&str> = rows
        .iter()
        .filter(|r| r.state == state)
        .map(|r| r.name())
        .collect();
    said.snapshot_files(&names)
}

/// The split on an affected version, when the leases show it: (why, repair command).
pub(super) fn split_cause(ctx: &Context<'_>) -> Option<(String, String)> {
    let split = ctx
        .leases
        .findings
        .iter()
        .any(|f| f.code == FindingCode::LeaseSplit && f.severity == Severity::Error);
    if !split {
        return None;
    }
    let etcd_holder = ctx
        .leases
        .locks
        .get(1)
        .and_then(|l| l.holder.clone())
        .unwrap_or_default();
    Some((
        format!(
            "{} and {} are held by different servers on an affected version, so the snapshot controller on {etcd_holder} \
             never started (k3s-io/k3s#10046)",
            ctx.distro.core_lock(),
            ctx.distro.etcd_lock()
        ),
        "k3sdoctor leases follow --fix".to_string(),
    ))
}
