//! A tar archive read member by member: names normalised, links recorded, sparse members
//! skipped, every member counted against the entry cap.

use std::io::Read;

use super::{Opener, capped};
use crate::input::ReadError;
use crate::input::bundle::tar_stream::{EXTENSION_LIMIT, MemberKind, TarError, TarStream};
use crate::input::bundle::tree::{Link, Tree, is_log, normalize};

impl Opener<'_> {
    pub(super) fn tar(
        &mut self,
        name: &str,
        container: &str,
        reader: Box<dyn Read + '_>,
        depth: u8,
    ) -> Result<(), ReadError> {
        let mut tree = Tree::new(name, container);
        let mut stream = TarStream::new(reader);
        loop {
            let member = match stream.next_member() {
                Ok(Some(member)) => member,
                Ok(None) => break,
                Err(TarError::Io(e)) => return Err(self.broken(name, container, &e)),
                Err(TarError::Oversized { what, size }) => {
                    return Err(oversized_header(name, what, size));
                }
            };
            self.budget.entry().map_err(|hit| capped(name, hit))?;
            let raw = String::from_utf8_lossy(&member.path).into_owned();
            let Some(path) = normalize(&raw) else {
                tree.notes.push(format!(
                    "ignored the entry {raw} in {name}: its name climbs out of the archive"
                ));
                continue;
            };
            match member.kind {
                MemberKind::Symlink | MemberKind::HardLink => {
                    if let Some(target) = member.link {
                        tree.links.push(Link {
                            path,
                            target: String::from_utf8_lossy(&target).into_owned(),
                            hard: member.kind == MemberKind::HardLink,
                        });
                    }
                }
                MemberKind::Sparse { expanded } => {
                    if !is_log(&path) {
                        tree.notes.push(format!(
                            "skipped {path} in {name}: a GNU sparse member ({expanded} bytes once its holes are \
                             filled), which k3sdoctor does not expand; re-pack the bundle without tar --sparse \
                             if this file is needed"
                        ));
                    }
                }
                // Folders, devices, FIFOs: nothing to read, and never created anywhere.
                MemberKind::Other => {}
                MemberKind::File => {
                    self.entry(&mut tree, &path, member.size, Box::new(&mut stream), depth)
                        .map_err(|e| self.failed(name, container, e))?;
                }
            }
        }
        self.finish(&mut tree)?;
        self.trees.push(tree);
        Ok(())
    }
}

/// A GNU long name or PAX header larger than any real one: refused before it is read.
fn oversized_header(name: &str, what: &str, size: u64) -> ReadError {
    ReadError::new(format!(
        "cannot read the support bundle {name}: a {what} in it declares {}, more than the {} k3sdoctor \
         reads for one member (real ones take a few hundred bytes); the archive is corrupt or built to exhaust \
         memory, so ask for the bundle again",
        crate::input::limits::shown(size),
        crate::input::limits::shown(EXTENSION_LIMIT)
    ))
}
