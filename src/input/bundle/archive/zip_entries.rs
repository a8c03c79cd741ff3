//! A zip archive read entry by entry, its central directory counted against the caps before
//! the zip crate holds it.

use std::io::{Read, Seek};

use super::{Opener, capped};
use crate::input::ReadError;
use crate::input::bundle::tree::{Link, Tree, normalize};
use crate::input::bundle::zip_directory;
use crate::input::limits::Counted;

impl Opener<'_> {
    pub(super) fn zip<R: Read + Seek>(
        &mut self,
        name: &str,
        mut reader: R,
        depth: u8,
    ) -> Result<(), ReadError> {
        // The crate holds every entry's name, extra fields and comment as it opens the file:
        // their number and bytes are counted first.
        let declared =
            zip_directory::declared(&mut reader).map_err(|e| self.broken(name, "zip", &e))?;
        if let Some(directory) = declared {
            self.budget
                .room_for_entries(directory.entries)
                .and_then(|()| self.budget.charge(directory.bytes))
                .map_err(|hit| capped(name, hit))?;
        }
        let mut tree = Tree::new(name, "zip");
        let mut zip = zip::ZipArchive::new(reader).map_err(|e| self.broken(name, "zip", &e))?;
        for index in 0..zip.len() {
            self.budget.entry().map_err(|hit| capped(name, hit))?;
            let mut file = zip
                .by_index(index)
                .map_err(|e| self.broken(name, "zip", &e))?;
            let raw = String::from_utf8_lossy(file.name_raw()).into_owned();
            let Some(path) = normalize(&raw) else {
                tree.notes.push(format!(
                    "ignored the entry {raw} in {name}: its name climbs out of the archive"
                ));
                continue;
            };
            if file.is_dir() {
                continue;
            }
            if file.is_symlink() {
                let mut target = String::new();
                Counted::new((&mut file).take(4096), self.budget)
                    .read_to_string(&mut target)
                    .map_err(|e| self.broken(name, "zip", &e))?;
                tree.links.push(Link {
                    path,
                    target,
                    hard: false,
                });
                continue;
            }
            let size = file.size();
            let counted = Counted::new(&mut file, self.budget);
            self.entry(&mut tree, &path, size, Box::new(counted), depth)
                .map_err(|e| self.failed(name, "zip", e))?;
        }
        self.finish(&mut tree)?;
        self.trees.push(tree);
        Ok(())
    }
}
