//! What a zip's central directory declares, read before the `zip` crate reads it: the crate
//! (9.8.2, `ZipArchive::new`) parses every entry's name, extra fields and comment into memory
//! up front (up to 192 KiB of them per entry), before k3sdoctor sees the first entry. Their
//! number and size are checked against the caps first.

use std::io::{self, Read, Seek, SeekFrom};

const EOCD_SIGNATURE: [u8; 4] = *b"PK\x05\x06";
const ZIP64_LOCATOR_SIGNATURE: [u8; 4] = *b"PK\x06\x07";
const ZIP64_EOCD_SIGNATURE: [u8; 4] = *b"PK\x06\x06";
/// The end record (22 bytes) and the longest comment it may carry.
const SEARCH: u64 = 22 + 0xFFFF;

/// The entries the central directory lists and its size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Directory {
    pub entries: u64,
    pub bytes: u64,
}

/// The central directory the last end record names (the one the crate tries first); `None`
/// when there is none (the crate then refuses the file itself).
pub(super) fn declared<R: Read + Seek>(reader: &mut R) -> io::Result<Option<Directory>> {
    let len = reader.seek(SeekFrom::End(0))?;
    let start = len.saturating_sub(SEARCH);
    reader.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    reader.take(SEARCH).read_to_end(&mut tail)?;
    reader.seek(SeekFrom::Start(0))?;
    let Some(at) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == EOCD_SIGNATURE)
    else {
        return Ok(None);
    };
    let eocd = &tail[at..];
    let entries = u64::from(u16::from_le_bytes([eocd[10], eocd[11]]));
    let bytes = u64::from(u32::from_le_bytes([eocd[12], eocd[13], eocd[14], eocd[15]]));
    if entries != 0xFFFF && bytes != 0xFFFF_FFFF {
        return Ok(Some(Directory { entries, bytes }));
    }
    // Zip64: a locator just before the end record points to the larger record.
    let eocd_at = start + at as u64;
    let Some(locator_at) = eocd_at.checked_sub(20) else {
        return Ok(Some(Directory { entries, bytes }));
    };
    let mut locator = [0u8; 20];
    reader.seek(SeekFrom::Start(locator_at))?;
    reader.read_exact(&mut locator)?;
    if locator[..4] != ZIP64_LOCATOR_SIGNATURE {
        return Ok(Some(Directory { entries, bytes }));
    }
    let record_at = u64::from_le_bytes(locator[8..16].try_into().unwrap_or_default());
    let mut record = [0u8; 56];
    reader.seek(SeekFrom::Start(record_at))?;
    let found = reader.read_exact(&mut record).is_ok() && record[..4] == ZIP64_EOCD_SIGNATURE;
    reader.seek(SeekFrom::Start(0))?;
    if !found {
        return Ok(Some(Directory { entries, bytes }));
    }
    let field = |at: usize| u64::from_le_bytes(record[at..at + 8].try_into().unwrap_or_default());
    Ok(Some(Directory {
        entries: field(32),
        bytes: field(40),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    #[test]
    fn the_end_record_gives_the_entries_and_the_directorys_size() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        for name in ["a.json", "b/c.yaml", "d"] {
            zip.start_file(name, options).unwrap();
            zip.write_all(b"{}").unwrap();
        }
        zip.set_comment("a comment that moves the end record")
            .unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let found = declared(&mut Cursor::new(&bytes)).unwrap().unwrap();
        assert_eq!(found.entries, 3);
        // Three 46-byte headers and their names.
        assert_eq!(found.bytes, 3 * 46 + 6 + 8 + 1);
        assert_eq!(declared(&mut Cursor::new(b"not a zip")).unwrap(), None);
    }
}
