//! Whether kine still serves an old revision. kine (sqlite, MySQL, Postgres) compacts every 5
//! minutes to the revision it saw a tick earlier, keeping the newest 1,000 (kine
//! `pkg/logstructured/sqllog/sql.go`; since k3s v1.34.1 the apiserver's 5-minute compactor
//! drives the same pass). A LIST at a revision written long ago, with
//! `resourceVersionMatch=Exact`, answers 410 Expired once that revision is compacted: a
//! success means no compaction has reached it. Metrics say the same only where kine's are
//! published; this answer needs nothing but a LIST.

use jiff::Timestamp;
use serde_json::Value;

/// The revisions kine keeps whatever their age.
const KINE_KEEPS: u64 = 1_000;
/// How far behind the current revision a probed one must be: twice what kine keeps, so a
/// busy minute between the two reads cannot bring it back inside.
pub(crate) const BEHIND_ENOUGH: u64 = 2 * KINE_KEEPS;

/// A revision and when it was written: an object's `resourceVersion` and the newest time its
/// metadata records (`managedFields[].time`, or `creationTimestamp` when that is newer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenRevision {
    pub revision: u64,
    pub at: Timestamp,
    /// `Job kube-system/helm-install-traefik`.
    pub object: String,
}

impl WrittenRevision {
    /// From an object of `kind` as JSON (list items carry no kind); `None` without a numeric `resourceVersion` or without
    /// managedFields (then nothing says when it was last written: `creationTimestamp` alone
    /// would date an object updated since to its creation).
    pub(crate) fn of_json(kind: &str, object: &Value) -> Option<WrittenRevision> {
        let meta = &object["metadata"];
        let revision = meta["resourceVersion"].as_str()?.parse().ok()?;
        let time = |v: &Value| v.as_str()?.parse::<Timestamp>().ok();
        let managed = meta["managedFields"].as_array().filter(|m| !m.is_empty())?;
        let at = managed
            .iter()
            .map(|entry| time(&entry["time"]))
            .chain([time(&meta["creationTimestamp"])])
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()?;
        let name = meta["name"].as_str().unwrap_or("?");
        let object = match meta["namespace"].as_str() {
            Some(ns) => format!("{kind} {ns}/{name}"),
            None => format!("{kind} {name}"),
        };
        Some(WrittenRevision {
            revision,
            at,
            object,
        })
    }

    /// The oldest of several: revisions only grow, so the smallest was written first.
    pub(crate) fn oldest<'a>(
        candidates: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> Option<WrittenRevision> {
        candidates
            .into_iter()
            .filter_map(|(kind, object)| WrittenRevision::of_json(kind, object))
            .min_by_key(|w| w.revision)
    }
}

/// What the LIST at the old revision answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProbeAnswer {
    /// 410 Expired: compacted.
    Compacted,
    /// 200: still in the database.
    Retained,
    /// Anything else, with what it was.
    Failed(String),
}

/// One probe: the revision asked for, the current one, and the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KineProbe {
    pub written: WrittenRevision,
    pub current: u64,
    pub answer: ProbeAnswer,
}

#[cfg(test)]
mod tests;
