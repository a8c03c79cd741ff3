//! A tar stream walked header by header, so that nothing an archive declares is held in memory
//! before it is bounded. The `tar` crate reads a GNU long name, a long link name or a PAX header
//! into one buffer whatever size its header claims (`next_entry` → `read_all` in tar 0.4.46
//! `archive.rs`): a 1.5 GiB long name grew to 6 GiB before the byte cap stopped it. It also
//! expands a GNU sparse member's holes into zeros that no reader of the compressed stream counts,
//! and keeps one record per sparse chunk. Here an extension header past [`EXTENSION_LIMIT`] is
//! refused before a byte of it is read, and a sparse member is handed out unexpanded (its stored
//! bytes only) for the caller to skip. Header fields are still decoded by the crate's `Header`.

use std::io::{self, Read};

use tar::{GnuExtSparseHeader, Header, PaxExtensions};

/// The most a GNU long name, long link name or PAX header of one member may declare. A path is
/// at most 4 KiB on Linux (`PATH_MAX`) and a PAX header carries a few of them and the file's
/// extended attributes (each at most 64 KiB); 1 MiB leaves room and bounds what one member can
/// make us hold.
pub(super) const EXTENSION_LIMIT: u64 = 1 << 20;

const BLOCK: u64 = 512;

/// Why the walk stopped.
#[derive(Debug)]
pub(super) enum TarError {
    /// Cut short, corrupt, or a cap of the reader underneath.
    Io(io::Error),
    /// An extension header declared more than [`EXTENSION_LIMIT`]; nothing of it was read.
    Oversized { what: &'static str, size: u64 },
}

impl From<io::Error> for TarError {
    fn from(e: io::Error) -> Self {
        TarError::Io(e)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemberKind {
    File,
    HardLink,
    Symlink,
    /// GNU sparse (`tar --sparse`): only its stored chunks are in the stream.
    Sparse {
        expanded: u64,
    },
    /// Folders, devices, FIFOs, PAX global headers: nothing to read.
    Other,
}

/// One member: its name, link target and kind; its data is read from the stream itself
/// ([`TarStream`] implements `Read`, up to the member's end).
#[derive(Debug)]
pub(super) struct Member {
    pub path: Vec<u8>,
    pub link: Option<Vec<u8>>,
    pub kind: MemberKind,
    /// Bytes stored in the archive for it.
    pub size: u64,
}

pub(super) struct TarStream<R> {
    inner: R,
    /// Bytes of the current member not read yet.
    remaining: u64,
    /// Padding after the current member, up to the next header.
    padding: u64,
}

impl<R: Read> TarStream<R> {
    pub(super) fn new(inner: R) -> Self {
        TarStream {
            inner,
            remaining: 0,
            padding: 0,
        }
    }

    /// The next member, the rest of the current one skipped; `None` at the archive's end.
    pub(super) fn next_member(&mut self) -> Result<Option<Member>, TarError> {
        self.skip(self.remaining + self.padding)?;
        self.remaining = 0;
        self.padding = 0;
        let mut long_name: Option<Vec<u8>> = None;
        let mut long_link: Option<Vec<u8>> = None;
        let mut pax: Option<Vec<u8>> = None;
        loop {
            let mut block = [0u8; BLOCK as usize];
            if !self.block(&mut block)? || block.iter().all(|b| *b == 0) {
                if long_name.is_some() || long_link.is_some() || pax.is_some() {
                    return Err(corrupt("the archive ends after a header for a member"));
                }
                return Ok(None);
            }
            let header = Header::from_byte_slice(&block);
            check_sum(header)?;
            let kind = header.entry_type();
            let stored = header.entry_size()?;
            let recognized = header.as_gnu().is_some() || header.as_ustar().is_some();
            let extension = if !recognized {
                None
            } else if kind.is_gnu_longname() {
                Some(("GNU long name", &mut long_name))
            } else if kind.is_gnu_longlink() {
                Some(("GNU long link name", &mut long_link))
            } else if kind.is_pax_local_extensions() {
                Some(("PAX header", &mut pax))
            } else {
                None
            };
            if let Some((what, slot)) = extension {
                if stored > EXTENSION_LIMIT {
                    return Err(TarError::Oversized { what, size: stored });
                }
                if slot.is_some() {
                    return Err(corrupt("two extension headers describe one member"));
                }
                let mut bytes = Vec::with_capacity(stored as usize);
                (&mut self.inner).take(stored).read_to_end(&mut bytes)?;
                if (bytes.len() as u64) < stored {
                    return Err(corrupt("the archive ends inside a header"));
                }
                self.skip(padding(stored))?;
                *slot = Some(bytes);
                continue;
            }
            let kind = if kind.is_gnu_sparse() {
                let gnu = header
                    .as_gnu()
                    .ok_or_else(|| corrupt("a sparse member without a GNU header"))?;
                let expanded = gnu.real_size()?;
                if gnu.is_extended() {
                    self.skip_sparse_extensions()?;
                }
                MemberKind::Sparse { expanded }
            } else if kind.is_hard_link() {
                MemberKind::HardLink
            } else if kind.is_symlink() {
                MemberKind::Symlink
            } else if kind.is_file() || kind.is_contiguous() {
                MemberKind::File
            } else {
                MemberKind::Other
            };
            // The crate's precedence: a GNU long name, then PAX `path`, then the header's.
            let pax_value = |key: &str| {
                let pax = pax.as_deref()?;
                PaxExtensions::new(pax)
                    .filter_map(Result::ok)
                    .find(|e| e.key_bytes() == key.as_bytes())
                    .map(|e| e.value_bytes().to_vec())
            };
            let path = long_name
                .map(trim_nul)
                .or_else(|| pax_value("path"))
                .unwrap_or_else(|| header.path_bytes().into_owned());
            let link = long_link
                .map(trim_nul)
                .or_else(|| pax_value("linkpath"))
                .or_else(|| header.link_name_bytes().map(|l| l.into_owned()));
            // A PAX `size` overrides the header's: past 8 GiB the header cannot hold it.
            let size = match pax_value("size") {
                Some(value) => std::str::from_utf8(&value)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| corrupt("a PAX size that is not a number"))?,
                None => stored,
            };
            self.remaining = size;
            self.padding = padding(size);
            return Ok(Some(Member {
                path,
                link,
                kind,
                size,
            }));
        }
    }

    /// GNU sparse maps that did not fit the header: 512-byte blocks before the data, each
    /// saying whether another follows. Read one at a time; each counts in the stream.
    fn skip_sparse_extensions(&mut self) -> Result<(), TarError> {
        let mut ext = GnuExtSparseHeader::new();
        loop {
            if !self.block(ext.as_mut_bytes())? {
                return Err(corrupt("the archive ends inside a sparse map"));
            }
            if !ext.is_extended() {
                return Ok(());
            }
        }
    }

    /// One whole block; `false` at a clean end of the stream.
    fn block(&mut self, block: &mut [u8; 512]) -> Result<bool, TarError> {
        let mut read = 0;
        while read < block.len() {
            match self.inner.read(&mut block[read..])? {
                0 if read == 0 => return Ok(false),
                0 => return Err(corrupt("the archive ends inside a header")),
                n => read += n,
            }
        }
        Ok(true)
    }

    fn skip(&mut self, n: u64) -> Result<(), TarError> {
        let skipped = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
        if skipped < n {
            return Err(corrupt("the archive ends inside a member"));
        }
        Ok(())
    }
}

impl<R: Read> Read for TarStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let max = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        if max == 0 {
            return Ok(0);
        }
        let n = self.inner.read(&mut buf[..max])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the archive ends inside a member",
            ));
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}

fn check_sum(header: &Header) -> Result<(), TarError> {
    let bytes = header.as_bytes();
    let sum = bytes[..148]
        .iter()
        .chain(&bytes[156..])
        .fold(0u32, |a, b| a + u32::from(*b))
        + 8 * 32;
    if header.cksum()? != sum {
        return Err(corrupt("a header checksum does not match"));
    }
    Ok(())
}

fn padding(size: u64) -> u64 {
    (BLOCK - size % BLOCK) % BLOCK
}

fn trim_nul(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    bytes
}

fn corrupt(why: &str) -> TarError {
    TarError::Io(io::Error::new(io::ErrorKind::InvalidData, why.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that fails any read past `len` bytes: what was never to be read.
    struct Fence<'a> {
        bytes: &'a [u8],
        len: usize,
    }

    impl Read for Fence<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.len == 0 {
                return Err(io::Error::other("read past the header"));
            }
            let n = buf.len().min(self.len).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            self.len -= n;
            Ok(n)
        }
    }

    #[test]
    fn an_oversized_long_name_is_refused_from_its_header_alone() {
        let mut header = Header::new_gnu();
        header.set_path("././@LongLink").unwrap();
        header.set_entry_type(tar::EntryType::GNULongName);
        header.set_size(EXTENSION_LIMIT + 1);
        header.set_cksum();
        let fence = Fence {
            bytes: header.as_bytes(),
            len: 512,
        };
        match TarStream::new(fence).next_member() {
            Err(TarError::Oversized { what, size }) => {
                assert_eq!((what, size), ("GNU long name", EXTENSION_LIMIT + 1));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn members_and_their_data_follow_one_another_with_a_pax_size() {
        let mut builder = tar::Builder::new(Vec::new());
        builder
            .append_pax_extensions([("size", b"5".as_slice())])
            .unwrap();
        let mut header = Header::new_ustar();
        header.set_size(5);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, "a.yaml", &b"hello"[..])
            .unwrap();
        let mut header = Header::new_gnu();
        header.set_size(3);
        builder
            .append_data(&mut header, "b.json", &b"{}\n"[..])
            .unwrap();
        let tar = builder.into_inner().unwrap();
        let mut stream = TarStream::new(&tar[..]);
        let first = stream.next_member().unwrap().unwrap();
        assert_eq!((first.path.as_slice(), first.size), (&b"a.yaml"[..], 5));
        // Left unread: the next member is still found.
        let second = stream.next_member().unwrap().unwrap();
        assert_eq!(second.path, b"b.json");
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert_eq!(text, "{}\n");
        assert!(stream.next_member().unwrap().is_none());
    }
}
