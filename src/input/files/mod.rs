//! Files nobody vetted, opened safely: which files `--from-file` names (a folder walked, links
//! followed within bounds) and reads bounded in size and kind, shared by the dump and bundle
//! readers, the kubeconfig loader and `snapshots restore`'s backup.

pub(crate) mod bounded_read;
pub(crate) mod dump_files;

/// What every "cannot parse" of an input file ends with.
pub(crate) const DUMP_HINT: &str = "a dump is what `kubectl get ... -o yaml` or `-o json` prints";
