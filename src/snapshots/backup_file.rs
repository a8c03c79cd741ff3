//! The backup file a ConfigMap repair saves before it writes: where it goes, and how it is
//! written so that a failure never leaves a partial file behind, and only its owner can read
//! it: it holds snapshot metadata and can hold Rancher's cluster spec.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::ConfigMap;

/// Where a backup records the cluster it was taken from: the UID of its `kube-system`
/// Namespace, the usual cluster ID (Rancher and most tools use it; it lives as long as the
/// cluster's datastore). The ConfigMap's own UID is kept in `metadata.uid`, as read.
pub(crate) const CLUSTER_ID_ANNOTATION: &str = "k3sdoctor.io/cluster-id";

/// `./<configmap>.<resourceVersion>.backup.json`: the resourceVersion tells backups apart.
pub(crate) fn default_backup_path(name: &str, cm: &ConfigMap) -> PathBuf {
    let rv = cm.metadata.resource_version.as_deref().unwrap_or("unknown");
    PathBuf::from(format!("{name}.{rv}.backup.json"))
}

/// Saves the ConfigMap as read, before anything changes it, with the cluster's identity when it
/// is known (`snapshots restore` compares it). Never overwrites a file, and never leaves a
/// partial one: see `write_new_file`.
pub(crate) fn write_backup(
    path: &Path,
    original: &ConfigMap,
    cluster_id: Option<&str>,
) -> std::io::Result<()> {
    let mut saved = original.clone();
    if let Some(id) = cluster_id {
        saved
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(CLUSTER_ID_ANNOTATION.to_string(), id.to_string());
    }
    let mut bytes = serde_json::to_vec_pretty(&saved)?;
    bytes.push(b'\n');
    write_new_file(path, &bytes)
}

/// Mode of every backup file, as kubectl writes kubeconfigs: owner read and write only.
pub(crate) const BACKUP_FILE_MODE: u32 = 0o600;

/// Writes `bytes` to `path`, which must not exist yet, all or nothing: into a temporary file
/// in the same directory, fsynced, then hard-linked into place (a link, unlike a rename,
/// fails when `path` exists, so a file that appeared meanwhile is never replaced). On any
/// error the temporary file is removed, so a full disk leaves nothing that would block a
/// retry with the same path. The temporary file is created with [`BACKUP_FILE_MODE`] (the
/// umask may only narrow it), not chmodded after the write, so no other user can open it
/// in between; the link puts that same inode, mode and all, in place.
pub(crate) fn write_new_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the file exists and a backup never overwrites one",
        ));
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "backup".into());
    let temp = dir.join(format!(".{file_name}.{}.partial", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(BACKUP_FILE_MODE)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::hard_link(&temp, path)
    })();
    // The temporary name goes in every case: after a link the data lives on under `path`.
    let _ = std::fs::remove_file(&temp);
    result?;
    // The new directory entry survives a crash only once the directory is synced too.
    if let Ok(dir) = std::fs::File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_file_is_written_whole_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        write_new_file(&path, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        assert_eq!(entries(dir.path()), vec!["b.json".to_string()]);
    }

    #[test]
    fn a_backup_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        write_new_file(&path, b"{}\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    #[test]
    fn an_existing_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, b"original").unwrap();
        let err = write_new_file(&path, b"new").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"original");
        assert_eq!(entries(dir.path()), vec!["b.json".to_string()]);
    }

    #[test]
    fn a_failed_write_leaves_no_file_behind() {
        let dir = tempfile::tempdir().unwrap();
        // A directory that does not exist: the temporary file cannot even be created.
        let path = dir.path().join("missing").join("b.json");
        assert!(write_new_file(&path, b"{}").is_err());
        assert!(!path.exists());
        assert!(entries(dir.path()).is_empty());
    }
}
