//! What a dump or support bundle did not hold, said by the reader that knows why: the
//! analysers word their "not checked" findings with it instead of a generic kubectl hint.

/// One kind of object the input lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceGap {
    /// `Node`, `Lease`, `ConfigMap`, `ETCDSnapshotFile`.
    pub kind: &'static str,
    /// What is missing and why, e.g. `cluster-resources/leases/kube-system.json (the
    /// collector could not list leases: forbidden)`.
    pub missing: String,
    /// What would fill it.
    pub fix: String,
}
