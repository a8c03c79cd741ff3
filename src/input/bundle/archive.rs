//! Opening whatever `--from-file` names, by its content: gzip, xz, bzip2 or zstd compressed
//! tar, plain tar, zip, a folder, or one (possibly compressed) YAML/JSON file. Everything is
//! read as a stream into memory: nothing is written to disk, so no entry name can reach a
//! path outside; links are resolved inside the archive only ([`Tree::finish`]).

use std::io::{Cursor, Read};
use std::path::Path;

use super::container::{Container, peek, sniff};
use super::tree::{FILE_LIMIT, Tree, is_log, wanted};
use crate::input::ReadError;
use crate::input::limits::{Budget, CapHit, Counted, MAX_NESTING};

mod tar_members;
mod zip_entries;

/// Reads inputs into [`Tree`]s, one per archive (a nested one is a tree of its own).
pub(super) struct Opener<'b> {
    pub budget: &'b Budget,
    pub trees: Vec<Tree>,
}

impl<'b> Opener<'b> {
    pub(super) fn new(budget: &'b Budget) -> Self {
        Opener {
            budget,
            trees: Vec::new(),
        }
    }

    /// A regular file the user named whose first bytes are `head`: opened as the archive it is;
    /// `false` when it is no archive (the caller reads it as a dump).
    pub(super) fn file(&mut self, path: &Path, head: &[u8]) -> Result<bool, ReadError> {
        let name = path.display().to_string();
        let kind = sniff(head);
        if kind == Container::Plain {
            return Ok(false);
        }
        let file = std::fs::File::open(path)
            .map_err(|e| ReadError::new(format!("cannot read {name}: {e}")))?;
        if kind == Container::Zip {
            self.zip(&name, file, 0)?;
        } else {
            self.stream(&name, Box::new(std::io::BufReader::new(file)), 0)?;
        }
        Ok(true)
    }

    /// Bytes already in memory (standard input): opened if they are an archive.
    pub(super) fn bytes(&mut self, name: &str, bytes: Vec<u8>) -> Result<bool, ReadError> {
        match sniff(&bytes) {
            Container::Plain => Ok(false),
            Container::Zip => self.zip(name, Cursor::new(bytes), 0).map(|_| true),
            _ => self
                .stream(name, Box::new(Cursor::new(bytes)), 0)
                .map(|_| true),
        }
    }

    /// A folder's file that is not YAML/JSON: opened as a nested archive if it is one.
    pub(super) fn nested_file(
        &mut self,
        tree: &mut Tree,
        path: &Path,
        rel: &str,
    ) -> Result<(), ReadError> {
        // A file beside the dumps that cannot be read is a note, not a reason to refuse the
        // folder (and not "truncated archive" advice: it may be no archive at all).
        let opened = std::fs::File::open(path)
            .and_then(|file| peek(Box::new(std::io::BufReader::new(file))));
        match opened {
            Ok((_, reader)) => self.maybe_nested(tree, rel, reader, 1),
            Err(e) => {
                tree.notes
                    .push(format!("skipped {rel} in {}: {e}", tree.name));
                Ok(())
            }
        }
    }

    fn stream<'a>(
        &mut self,
        name: &str,
        reader: Box<dyn Read + 'a>,
        depth: u8,
    ) -> Result<(), ReadError>
    where
        'b: 'a,
    {
        let (head, reader) = peek(reader).map_err(|e| self.broken(name, "file", &e))?;
        let decoded: Box<dyn Read + 'a> = match sniff(&head) {
            Container::Gzip => Box::new(flate2::read::MultiGzDecoder::new(reader)),
            Container::Xz => Box::new(lzma_rust2::XzReader::new(reader, true)),
            Container::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(reader)),
            Container::Zstd => Box::new(
                ruzstd::decoding::StreamingDecoder::new(reader)
                    .map_err(|e| self.broken(name, "zstd", &std::io::Error::other(e)))?,
            ),
            Container::Tar => {
                return self.tar(
                    name,
                    "tar",
                    Box::new(Counted::new(reader, self.budget)),
                    depth,
                );
            }
            Container::Zip => {
                let bytes = self.slurp(name, "zip", Box::new(Counted::new(reader, self.budget)))?;
                return self.zip(name, Cursor::new(bytes), depth);
            }
            Container::Plain => {
                return Err(ReadError::new(format!(
                    "{name} is neither an archive nor a dump; pass a support bundle or kubectl get -o yaml output"
                )));
            }
        };
        let compression = match sniff(&head) {
            Container::Gzip => "gzip",
            Container::Xz => "xz",
            Container::Bzip2 => "bzip2",
            _ => "zstd",
        };
        let counted: Box<dyn Read + 'a> = Box::new(Counted::new(decoded, self.budget));
        let (inner, counted) = peek(counted).map_err(|e| self.broken(name, compression, &e))?;
        match sniff(&inner) {
            Container::Tar => self.tar(name, &format!("{compression} tar"), counted, depth),
            Container::Zip => {
                let bytes = self.slurp(name, compression, counted)?;
                self.zip(name, Cursor::new(bytes), depth)
            }
            // `dump.yaml.gz`: one compressed file, read as that file, under a plain file's cap.
            _ => {
                let bytes =
                    self.slurp(name, compression, Box::new(counted.take(FILE_LIMIT + 1)))?;
                if bytes.len() as u64 > FILE_LIMIT {
                    return Err(super::unreadable(
                        name,
                        &crate::input::files::bounded_read::BoundedReadError::TooLarge {
                            size: bytes.len() as u64,
                            limit: FILE_LIMIT,
                        },
                    ));
                }
                let mut tree = Tree::new(name, &format!("{compression} file"));
                tree.single = true;
                let inner_name = name
                    .rsplit_once('.')
                    .map_or(name, |(stem, _)| stem)
                    .to_string();
                tree.insert(&inner_name, bytes);
                self.trees.push(tree);
                Ok(())
            }
        }
    }

    /// All of a stream. The reader is already counted against the budget (by the decoder's or
    /// the archive's `Counted`): counting it here again made every byte count twice.
    fn slurp(
        &self,
        name: &str,
        what: &str,
        mut reader: Box<dyn Read + '_>,
    ) -> Result<Vec<u8>, ReadError> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| self.broken(name, what, &e))?;
        Ok(bytes)
    }

    /// [`Tree::finish`], each link charged its target's size against the byte cap.
    fn finish(&self, tree: &mut Tree) -> Result<(), ReadError> {
        tree.finish(|bytes| self.budget.charge(bytes))
            .map_err(|hit| capped(&tree.name, hit))
    }

    /// One file entry: kept if a layout could read it, opened if it is an archive and nesting
    /// allows, streamed past otherwise.
    fn entry(
        &mut self,
        tree: &mut Tree,
        path: &str,
        size: u64,
        mut reader: Box<dyn Read + '_>,
        depth: u8,
    ) -> Result<(), EntryError> {
        if wanted(path) {
            if size > FILE_LIMIT {
                tree.notes.push(format!(
                    "skipped {path} in {}: larger than {} bytes",
                    tree.name, FILE_LIMIT
                ));
                return Ok(());
            }
            let mut bytes = Vec::with_capacity(size.min(1 << 20) as usize);
            (&mut reader)
                .take(FILE_LIMIT + 1)
                .read_to_end(&mut bytes)
                .map_err(EntryError::Io)?;
            tree.insert(path, bytes);
            return Ok(());
        }
        if is_log(path) {
            return Ok(());
        }
        self.maybe_nested(tree, path, reader, depth + 1)
            .map_err(EntryError::Nested)
    }

    fn maybe_nested(
        &mut self,
        tree: &mut Tree,
        path: &str,
        reader: Box<dyn Read + '_>,
        depth: u8,
    ) -> Result<(), ReadError> {
        let inner_name = format!("{}:{path}", tree.name);
        let (head, reader) =
            peek(reader).map_err(|e| self.broken(&tree.name, &tree.container, &e))?;
        if sniff(&head) == Container::Plain {
            return Ok(());
        }
        if depth > MAX_NESTING {
            tree.notes.push(format!(
                "did not open the archive {inner_name}: it is inside an archive that is itself inside one, \
                 and k3sdoctor opens one level; unpack the outer archive and pass the inner one"
            ));
            return Ok(());
        }
        if sniff(&head) == Container::Zip {
            let bytes = self.slurp(&inner_name, "zip", reader)?;
            return self.zip(&inner_name, Cursor::new(bytes), depth);
        }
        self.stream(&inner_name, reader, depth)
    }

    fn failed(&self, name: &str, container: &str, e: EntryError) -> ReadError {
        match e {
            EntryError::Io(io) => self.broken(name, container, &io),
            EntryError::Nested(read) => read,
        }
    }

    /// A read that failed: a cap, or an archive cut short or corrupt.
    fn broken(&self, name: &str, container: &str, e: &dyn std::fmt::Display) -> ReadError {
        if let Some(hit) = self.budget.hit() {
            return capped(name, hit);
        }
        ReadError::new(format!(
            "cannot read the support bundle {name}: the {container} data is truncated or corrupt ({e}); \
             ask for the file again (an upload or mail size limit often cuts it short) or check it with `tar -tf`/`unzip -t`"
        ))
    }
}

enum EntryError {
    Io(std::io::Error),
    Nested(ReadError),
}

fn capped(name: &str, hit: CapHit) -> ReadError {
    ReadError::new(format!("the support bundle {name} {}", hit.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_dump_counts_each_byte_once_against_the_cap() {
        use std::io::Write;
        let dump = "apiVersion: v1\nkind: List\nitems: []\n".repeat(100);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(dump.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let cap = |max_bytes: u64| {
            let budget = Budget::new(crate::input::limits::BundleLimits {
                max_bytes,
                max_entries: 10,
            });
            let mut opener = Opener::new(&budget);
            opener
                .bytes("dump.yaml.gz", gz.clone())
                .map(|_| opener.trees.len())
        };
        // Counted twice, it needed twice its size.
        assert_eq!(cap(dump.len() as u64 + 64).ok(), Some(1));
        assert!(cap(dump.len() as u64 / 2).is_err());
    }
}
