//! Where a dump goes, and how it gets there whole: everything is written into a staging folder
//! beside the target, which becomes the target (a rename) or is packed into it (a `.tar.gz`
//! written beside and renamed) only once complete. An interrupted or failed dump removes its
//! staging folder; the target never exists half-written.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Failure;

/// The path given, or the default name; refused when something is already there.
pub(super) struct DumpTarget {
    path: PathBuf,
    archive: bool,
}

/// The staging folder, removed when dropped unless it was moved into place.
pub(super) struct Staging {
    path: PathBuf,
    kept: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.kept {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

impl Staging {
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

fn is_archive(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

impl DumpTarget {
    pub(super) fn choose(given: Option<&Path>, stamp: &str) -> Result<DumpTarget, Failure> {
        let path = given
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(format!("k3sdoctor-dump-{stamp}.tar.gz")));
        if fs::symlink_metadata(&path).is_ok() {
            return Err(Failure::Refused(format!(
                "dump: {} already exists; name a new folder or .tar.gz file (k3sdoctor dump PATH)",
                path.display()
            )));
        }
        Ok(DumpTarget {
            archive: is_archive(&path),
            path,
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    fn beside(&self, suffix: &str) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "k3sdoctor-dump".into());
        self.path
            .with_file_name(format!(".{name}.{suffix}-{}", std::process::id()))
    }

    pub(super) fn stage(&self) -> Result<Staging, Failure> {
        let path = self.beside("partial");
        fs::create_dir_all(&path).map_err(|e| cannot_write(&path, &e))?;
        Ok(Staging { path, kept: false })
    }

    /// Moves the complete staging folder into place, or packs it into the archive.
    pub(super) fn finish(&self, mut staging: Staging) -> Result<(), Failure> {
        if !self.archive {
            fs::rename(&staging.path, &self.path).map_err(|e| cannot_write(&self.path, &e))?;
            staging.kept = true;
            return Ok(());
        }
        let packing = self.beside("tar.gz");
        let packed = pack(&staging.path, &packing, &self.folder_name());
        let moved = packed.and_then(|()| fs::rename(&packing, &self.path));
        if let Err(e) = moved {
            let _ = fs::remove_file(&packing);
            return Err(cannot_write(&self.path, &e));
        }
        Ok(())
    }

    /// The one folder inside the archive: its name without `.tar.gz`.
    fn folder_name(&self) -> String {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name.trim_end_matches(".tar.gz")
            .trim_end_matches(".tgz")
            .to_string()
    }
}

fn pack(folder: &Path, archive: &Path, inside: &str) -> std::io::Result<()> {
    let file = fs::File::create(archive)?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    tar.append_dir_all(inside, folder)?;
    let mut file = tar.into_inner()?.finish()?;
    file.flush()?;
    file.sync_all()
}

fn cannot_write(path: &Path, e: &std::io::Error) -> Failure {
    Failure::Refused(format!(
        "dump: cannot write {}: {e}; pick a writable place (k3sdoctor dump PATH)",
        path.display()
    ))
}
