//! Which files a `--from-file` dump is made of: the files named, and the regular files
//! under the folders named (the bundle reader picks what it reads). A folder is a support bundle someone else
//! made, so the walk trusts nothing in it: only regular files are read; symbolic links are
//! followed only when they stay inside the folder given, and every folder and file at most once
//! (by device and inode), so a link cycle cannot make the walk loop or grow; FIFOs, sockets
//! and devices are skipped with a note, since opening one blocks or never ends.

use std::collections::HashSet;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::bounded_read::file_kind;
use crate::input::ReadError;
use crate::input::limits::{Budget, CapHit};

/// The files to read, in order, and what was skipped on the way.
#[derive(Debug, Default)]
pub(crate) struct DumpFiles {
    pub files: Vec<PathBuf>,
    pub notes: Vec<String>,
}

/// One `--from-file` argument.
#[derive(Debug)]
pub(crate) enum Input {
    Stdin,
    File(PathBuf),
    /// A folder and the regular files under it (links followed only inside it).
    Dir {
        root: PathBuf,
        files: Vec<PathBuf>,
        notes: Vec<String>,
    },
}

/// Device and inode: one identity per file whatever the path that reached it.
type FileId = (u64, u64);

fn id(meta: &Metadata) -> FileId {
    (meta.dev(), meta.ino())
}

/// The inputs `paths` name; a folder's entries count against `budget`'s entry cap as an
/// archive's do, and the walk stops at it.
pub(crate) fn collect(paths: &[PathBuf], budget: &Budget) -> Result<Vec<Input>, ReadError> {
    let mut walk = Walk {
        found: DumpFiles::default(),
        seen: HashSet::new(),
        budget,
    };
    let mut inputs = Vec::new();
    for path in paths {
        if is_stdin(path) {
            // kubectl's `-f -`: one stream, read once.
            if inputs.iter().any(|i| matches!(i, Input::Stdin)) {
                return Err(ReadError::new(
                    "--from-file - is given twice; standard input can be read only once"
                        .to_string(),
                ));
            }
            inputs.push(Input::Stdin);
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|e| {
            ReadError::new(format!(
                "cannot read dump {}: {e}; pass an existing file or directory to --from-file",
                path.display()
            ))
        })?;
        if meta.is_file() {
            if walk.seen.insert(id(&meta)) {
                inputs.push(Input::File(path.clone()));
            }
        } else if meta.is_dir() {
            let root = path.canonicalize().map_err(|e| {
                ReadError::new(format!(
                    "cannot read dump directory {}: {e}",
                    path.display()
                ))
            })?;
            walk.seen.insert(id(&meta));
            walk.directory(&root, path).map_err(|e| match e {
                WalkError::Read(e) => e,
                WalkError::Cap(hit) => ReadError::new(format!(
                    "the support bundle {} {}",
                    path.display(),
                    hit.describe()
                )),
            })?;
            inputs.push(Input::Dir {
                root: path.clone(),
                files: std::mem::take(&mut walk.found.files),
                notes: std::mem::take(&mut walk.found.notes),
            });
        } else {
            return Err(ReadError::new(format!(
                "dump {} is {}, not a file or directory: reading it could block or never end; save the \
                 dump to a file first (kubectl get ... -o yaml > dump.yaml) and pass that to --from-file",
                path.display(),
                file_kind(&meta)
            )));
        }
    }
    Ok(inputs)
}

/// `-` stands for standard input, as in kubectl's `-f -`.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

struct Walk<'b> {
    found: DumpFiles,
    /// Folders and files already taken: a second path to one of them (a link) adds nothing.
    seen: HashSet<FileId>,
    /// Every entry listed counts, as in an archive: a folder of millions of files is refused
    /// at the cap instead of being listed whole.
    budget: &'b Budget,
}

enum WalkError {
    Read(ReadError),
    Cap(CapHit),
}

impl Walk<'_> {
    fn directory(&mut self, root: &Path, dir: &Path) -> Result<(), WalkError> {
        let listing = std::fs::read_dir(dir).map_err(|e| {
            WalkError::Read(ReadError::new(format!(
                "cannot list dump directory {}: {e}",
                dir.display()
            )))
        })?;
        let mut entries = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| {
                WalkError::Read(ReadError::new(format!(
                    "cannot list dump directory {}: {e}",
                    dir.display()
                )))
            })?;
            self.budget.entry().map_err(WalkError::Cap)?;
            entries.push(entry.path());
        }
        entries.sort();
        // A directory without dump files reads as an empty dump, like a 0-byte file: the command
        // then names what it lacks and the kubectl command that adds it.
        for entry in entries {
            let Some(meta) = self.resolve(root, &entry) else {
                continue;
            };
            if meta.is_dir() {
                if self.seen.insert(id(&meta)) {
                    self.directory(root, &entry)?;
                }
            } else if meta.is_file() {
                if self.seen.insert(id(&meta)) {
                    self.found.files.push(entry);
                }
            } else {
                self.skip(&entry, &format!("it is {}", file_kind(&meta)));
            }
        }
        Ok(())
    }

    /// What `entry` is, following a symbolic link only when its target lies inside `root`.
    fn resolve(&mut self, root: &Path, entry: &Path) -> Option<Metadata> {
        let meta = match std::fs::symlink_metadata(entry) {
            Ok(meta) => meta,
            Err(e) => {
                self.skip(entry, &e.to_string());
                return None;
            }
        };
        if !meta.file_type().is_symlink() {
            return Some(meta);
        }
        let target = match entry.canonicalize() {
            Ok(target) => target,
            Err(e) => {
                self.skip(
                    entry,
                    &format!("a symbolic link that cannot be followed ({e})"),
                );
                return None;
            }
        };
        if !target.starts_with(root) {
            self.skip(
                entry,
                &format!(
                    "a symbolic link to {}, outside {} (links are followed only inside the folder given)",
                    target.display(),
                    root.display()
                ),
            );
            return None;
        }
        match std::fs::metadata(&target) {
            Ok(meta) => Some(meta),
            Err(e) => {
                self.skip(entry, &e.to_string());
                None
            }
        }
    }

    fn skip(&mut self, entry: &Path, why: &str) {
        self.found
            .notes
            .push(format!("skipped {} in the dump: {why}", entry.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::limits::BundleLimits;
    use std::os::unix::fs::symlink;

    fn walked(dir: &Path) -> DumpFiles {
        let budget = Budget::new(BundleLimits::default());
        match collect(&[dir.to_path_buf()], &budget).unwrap().pop() {
            Some(Input::Dir { files, notes, .. }) => DumpFiles { files, notes },
            other => panic!("{other:?}"),
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dump-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn links_outside_and_special_files_are_skipped_with_a_note() {
        let dir = temp_dir("outside");
        std::fs::write(dir.join("a.yaml"), "kind: List\n").unwrap();
        symlink("/dev/zero", dir.join("zero.yaml")).unwrap();
        symlink("/etc/hostname", dir.join("host.yaml")).unwrap();
        symlink(dir.join("a.yaml"), dir.join("b.yaml")).unwrap();
        let found = walked(&dir);
        assert_eq!(found.files, [dir.join("a.yaml")]);
        assert_eq!(found.notes.len(), 2, "{:?}", found.notes);
        assert!(found.notes.iter().all(|n| n.contains("outside")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn link_cycles_are_walked_once() {
        let dir = temp_dir("cycle");
        let mut inner = dir.clone();
        for level in 0..8 {
            inner = inner.join(format!("d{level}"));
            std::fs::create_dir(&inner).unwrap();
            // Two links back to the top at every level: 2^8 paths if each were followed.
            symlink(&dir, inner.join("up1")).unwrap();
            symlink("..", inner.join("up2")).unwrap();
        }
        std::fs::write(inner.join("x.json"), "{}").unwrap();
        let found = walked(&dir);
        assert_eq!(found.files, [inner.join("x.json")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_given_as_the_dump_is_an_error() {
        let budget = Budget::new(BundleLimits::default());
        let err = collect(&[PathBuf::from("/dev/zero")], &budget).unwrap_err();
        assert!(
            err.message
                .contains("dump /dev/zero is a character device, not a file or directory"),
            "{}",
            err.message
        );
    }
}
