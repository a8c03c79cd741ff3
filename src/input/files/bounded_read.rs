//! Reading a file the user named (a dump, a kubeconfig, a backup) without trusting it: only a
//! regular file is opened, and no more than a cap is read. `/dev/zero`, a FIFO or a socket
//! would otherwise block forever or grow memory without bound.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// A dump file: `kubectl get` of every Node, Lease, ConfigMap and ETCDSnapshotFile of a large
/// cluster is tens of MiB; 256 MiB leaves room for whole support bundles in one file.
pub(crate) const DUMP_FILE_LIMIT: u64 = 256 * 1024 * 1024;

/// A kubeconfig: a few contexts with embedded certificates are KiBs; kubectl's own merged
/// configs with hundreds of contexts stay well under 4 MiB.
pub(crate) const KUBECONFIG_LIMIT: u64 = 4 * 1024 * 1024;

/// A ConfigMap backup: the API server refuses ConfigMaps whose data passes 1 MiB, and its JSON
/// (escaping, metadata, managedFields) stays within a few times that; 4 MiB.
pub(crate) const BACKUP_LIMIT: u64 = 4 * 1024 * 1024;

/// Why a file was not read; the caller words it with the file's role and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BoundedReadError {
    #[error("{0}")]
    Io(String),
    /// A FIFO, socket, device or directory: reading it may block or never end.
    #[error("is not a regular file (it is {0})")]
    NotRegular(&'static str),
    #[error("is larger than {limit} bytes ({size} bytes)")]
    TooLarge { size: u64, limit: u64 },
    #[error("is not UTF-8 text")]
    NotUtf8,
}

/// What kind of file `meta` describes, in words.
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Checks, without opening it, that `path` (symlinks followed) is a regular file of at most
/// `limit` bytes; for readers that open the file themselves (kube's kubeconfig loader).
pub(crate) fn ensure_regular_file(path: &Path, limit: u64) -> Result<(), BoundedReadError> {
    let meta = std::fs::metadata(path).map_err(|e| BoundedReadError::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(BoundedReadError::NotRegular(file_kind(&meta)));
    }
    if meta.len() > limit {
        return Err(BoundedReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    Ok(())
}

/// The text of the regular file `path`, at most `limit` bytes. The type is checked before
/// opening (opening a FIFO blocks until a writer comes) and again on the open handle; the
/// read itself stops one byte past the cap, so a file that grows meanwhile is still bounded.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, BoundedReadError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|_| BoundedReadError::NotUtf8)
}

/// The first `n` bytes (fewer if it is shorter) of the regular file `path`: enough to tell
/// an archive from text.
pub(crate) fn read_head(path: &Path, n: u64) -> Result<Vec<u8>, BoundedReadError> {
    ensure_regular_file(path, u64::MAX)?;
    let file = File::open(path).map_err(|e| BoundedReadError::Io(e.to_string()))?;
    let mut head = Vec::new();
    file.take(n)
        .read_to_end(&mut head)
        .map_err(|e| BoundedReadError::Io(e.to_string()))?;
    Ok(head)
}

/// [`read_text`] without the UTF-8 check.
pub(crate) fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    ensure_regular_file(path, limit)?;
    let file = File::open(path).map_err(|e| BoundedReadError::Io(e.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| BoundedReadError::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(BoundedReadError::NotRegular(file_kind(&meta)));
    }
    read_bounded_bytes(file, limit, meta.len())
}

/// Standard input as bytes, at most `limit`: a dump or an archive piped in. Like a file, the
/// read stops one byte past the cap, so an endless pipe (`yes |`) is refused instead of
/// filling memory.
pub(crate) fn read_stdin_bytes(limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    read_bounded_bytes(std::io::stdin().lock(), limit, 0)
}

fn read_bounded_bytes(
    reader: impl Read,
    limit: u64,
    size_hint: u64,
) -> Result<Vec<u8>, BoundedReadError> {
    let mut bytes = Vec::with_capacity(size_hint.min(limit) as usize);
    reader
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BoundedReadError::Io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(BoundedReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        let err = read_text(Path::new("/dev/zero"), 1024).unwrap_err();
        assert_eq!(err, BoundedReadError::NotRegular("a character device"));
        let dir = std::env::temp_dir().join(format!("bounded-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.yaml");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Would block forever if it were opened.
        assert_eq!(
            read_text(&fifo, 1024).unwrap_err(),
            BoundedReadError::NotRegular("a FIFO")
        );
        assert_eq!(
            read_text(&dir, 1024).unwrap_err(),
            BoundedReadError::NotRegular("a directory")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_stream_past_the_cap_is_refused_after_one_byte_more() {
        let endless = std::io::repeat(b'y');
        assert_eq!(
            read_bounded_bytes(endless, 1024, 0).unwrap_err(),
            BoundedReadError::TooLarge {
                size: 1025,
                limit: 1024
            }
        );
        assert_eq!(
            read_bounded_bytes(&b"kind: List"[..], 1024, 0).unwrap(),
            b"kind: List"
        );
    }

    #[test]
    fn files_past_the_cap_are_refused() {
        let dir = std::env::temp_dir().join(format!("bounded-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big.yaml");
        std::fs::write(&file, vec![b'a'; 2048]).unwrap();
        assert_eq!(
            read_text(&file, 1024).unwrap_err(),
            BoundedReadError::TooLarge {
                size: 2048,
                limit: 1024
            }
        );
        assert_eq!(read_text(&file, 2048).unwrap().len(), 2048);
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text(&file, 1024).unwrap_err(),
            BoundedReadError::NotUtf8
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
