//! What an input is, told by its first bytes, never its name: gzip, xz, bzip2 or zstd
//! compressed data, zip, tar, or anything else (a dump's text).

use std::io::{Cursor, Read};

/// What the first bytes of a stream say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Container {
    Gzip,
    Xz,
    Bzip2,
    Zstd,
    Zip,
    Tar,
    /// Anything else: a dump's text, a log, a binary.
    Plain,
}

/// Enough to see every magic number, tar's `ustar` at offset 257 included.
const HEAD: usize = 512;

pub(super) fn sniff(head: &[u8]) -> Container {
    if head.starts_with(&[0x1f, 0x8b]) {
        Container::Gzip
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Container::Xz
    } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
        Container::Bzip2
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Container::Zstd
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Container::Zip
    } else if head.get(257..262) == Some(b"ustar") {
        Container::Tar
    } else {
        Container::Plain
    }
}

/// The first [`HEAD`] bytes of `reader` (fewer at its end), and a reader that still yields
/// all of it.
pub(super) fn peek<'a>(
    mut reader: Box<dyn Read + 'a>,
) -> std::io::Result<(Vec<u8>, Box<dyn Read + 'a>)> {
    let mut head = Vec::with_capacity(HEAD);
    (&mut reader).take(HEAD as u64).read_to_end(&mut head)?;
    let again = Cursor::new(head.clone()).chain(reader);
    Ok((head, Box::new(again)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_name_the_container() {
        assert_eq!(sniff(&[0x1f, 0x8b, 8]), Container::Gzip);
        assert_eq!(sniff(b"\xfd7zXZ\x00\x00"), Container::Xz);
        assert_eq!(sniff(b"BZh91AY"), Container::Bzip2);
        assert_eq!(sniff(b"BZhello"), Container::Plain);
        assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd]), Container::Zstd);
        assert_eq!(sniff(b"PK\x03\x04"), Container::Zip);
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff(&tar), Container::Tar);
        assert_eq!(sniff(b"apiVersion: v1\n"), Container::Plain);
        assert_eq!(sniff(b""), Container::Plain);
    }
}
