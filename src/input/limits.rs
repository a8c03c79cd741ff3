//! How much of a support bundle is read: an archive from someone else's machine can be a
//! decompression bomb (a few KiB of gzip that inflate to terabytes) or hold millions of
//! entries, so every byte decompressed and every entry listed is counted against a cap.

use std::cell::Cell;
use std::io::Read;

/// Page size for lists, as kubectl uses.
pub(crate) const PAGE_SIZE: u32 = 500;

/// Items one list may hold. Far above anything k3sdoctor lists on a real cluster (5,000
/// Nodes is Kubernetes' stated limit; snapshot records and Events are fewer), and far below
/// what exhausts memory.
pub(crate) const MOST_ITEMS: usize = 100_000;

/// Pages one list may take: twice what [`MOST_ITEMS`] needs in full pages, since a server
/// may answer short pages (a selector filtering what it read).
pub(crate) const MOST_PAGES: usize = 2 * MOST_ITEMS / PAGE_SIZE as usize;

/// The most one answer (or one watch event) may hold. The largest k3sdoctor asks for is a
/// page of 500 Nodes, a few MiB; one object is at most etcd's 1.5 MiB request limit.
pub(crate) const MOST_BODY_BYTES: u64 = 64 * 1024 * 1024;

/// Decompressed bytes read from all `--from-file` inputs together. A troubleshoot bundle of a
/// large cluster with a week of logs inflates to a few hundred MiB; 2 GiB leaves room and
/// still stops a bomb long before memory or time run out.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Entries listed (files, folders, links) in all archives together: troubleshoot writes a
/// few per pod, so even a cluster of thousands of pods stays far below.
pub(crate) const DEFAULT_MAX_ENTRIES: u64 = 200_000;

/// Objects k3sdoctor keeps of one kind from all `--from-file` (or `--rancher-from-file`) inputs
/// together; those it does not use are dropped as they are read and never count. A large
/// cluster has a few thousand Nodes or snapshot records and an hour of Events in the tens of
/// thousands; what lies past this is refused rather than held, since memory follows what is
/// kept.
pub(crate) const MAX_OBJECTS_PER_KIND: usize = 100_000;

/// An archive inside an archive (a ticket's zip holding a collector's tarball) is opened; one
/// inside that is not.
pub(crate) const MAX_NESTING: u8 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BundleLimits {
    pub max_bytes: u64,
    pub max_entries: u64,
}

impl Default for BundleLimits {
    fn default() -> Self {
        BundleLimits {
            max_bytes: DEFAULT_MAX_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
        }
    }
}

/// Which cap a read ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CapHit {
    Bytes(u64),
    Entries(u64),
}

impl CapHit {
    pub(crate) fn describe(self) -> String {
        match self {
            CapHit::Bytes(limit) => format!(
                "decompresses to more than {} (--max-bundle-size); raise it if the bundle is genuine",
                shown(limit)
            ),
            CapHit::Entries(limit) => format!(
                "holds more than {limit} entries (--max-bundle-entries); raise it if the bundle is genuine"
            ),
        }
    }
}

/// What is left of the caps, shared by every reader of one run.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: BundleLimits,
    bytes: Cell<u64>,
    entries: Cell<u64>,
    hit: Cell<Option<CapHit>>,
}

impl Budget {
    pub(crate) fn new(limits: BundleLimits) -> Self {
        Budget {
            limits,
            bytes: Cell::new(0),
            entries: Cell::new(0),
            hit: Cell::new(None),
        }
    }

    /// The cap that stopped the read, if one did: an I/O error from a [`Counted`] reader is
    /// then this, not a broken file.
    pub(crate) fn hit(&self) -> Option<CapHit> {
        self.hit.get()
    }

    /// Counts one archive entry; `Err` once past the cap.
    pub(crate) fn entry(&self) -> Result<(), CapHit> {
        self.entries.set(self.entries.get() + 1);
        if self.entries.get() > self.limits.max_entries {
            let hit = CapHit::Entries(self.limits.max_entries);
            self.hit.set(Some(hit));
            return Err(hit);
        }
        Ok(())
    }

    /// Whether `n` more entries fit, without counting them: an archive that declares more is
    /// refused before its listing is read.
    pub(crate) fn room_for_entries(&self, n: u64) -> Result<(), CapHit> {
        if self.entries.get().saturating_add(n) > self.limits.max_entries {
            let hit = CapHit::Entries(self.limits.max_entries);
            self.hit.set(Some(hit));
            return Err(hit);
        }
        Ok(())
    }

    /// Counts `n` bytes about to be held; `Err` once past the cap.
    pub(crate) fn charge(&self, n: u64) -> Result<(), CapHit> {
        self.bytes.set(self.bytes.get().saturating_add(n));
        if self.bytes.get() > self.limits.max_bytes {
            let hit = CapHit::Bytes(self.limits.max_bytes);
            self.hit.set(Some(hit));
            return Err(hit);
        }
        Ok(())
    }
}

/// A decompressed stream whose bytes count against the [`Budget`].
pub(crate) struct Counted<'b, R> {
    inner: R,
    budget: &'b Budget,
}

impl<'b, R: Read> Counted<'b, R> {
    pub(crate) fn new(inner: R, budget: &'b Budget) -> Self {
        Counted { inner, budget }
    }
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(hit) = self.budget.hit() {
            return Err(std::io::Error::other(hit.describe()));
        }
        let n = self.inner.read(buf)?;
        self.budget
            .charge(n as u64)
            .map_err(|hit| std::io::Error::other(hit.describe()))?;
        Ok(n)
    }
}

/// `2 GiB`, `64 KiB`, `1000 B`: the largest binary unit that divides the size.
pub(crate) fn shown(bytes: u64) -> String {
    for (unit, scale) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{} {unit}", bytes / scale);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_past_the_byte_cap_fails_and_says_which_cap() {
        let budget = Budget::new(BundleLimits {
            max_bytes: 1000,
            max_entries: 10,
        });
        let mut sink = Vec::new();
        let err = Counted::new(std::io::repeat(b'a'), &budget)
            .read_to_end(&mut sink)
            .unwrap_err();
        assert!(err.to_string().contains("more than 1000 B"), "{err}");
        assert_eq!(budget.hit(), Some(CapHit::Bytes(1000)));
        let small = Budget::new(BundleLimits {
            max_bytes: 1000,
            max_entries: 10,
        });
        let mut sink = Vec::new();
        Counted::new(&[0u8; 1000][..], &small)
            .read_to_end(&mut sink)
            .unwrap();
        assert_eq!(small.hit(), None);
    }

    #[test]
    fn entries_past_the_cap_fail() {
        let budget = Budget::new(BundleLimits {
            max_bytes: 1000,
            max_entries: 2,
        });
        assert!(budget.entry().is_ok() && budget.entry().is_ok());
        assert_eq!(budget.entry(), Err(CapHit::Entries(2)));
    }

    #[test]
    fn sizes_show_in_the_largest_binary_unit_that_divides_them() {
        assert_eq!(shown(2 << 30), "2 GiB");
        assert_eq!(shown(64 << 10), "64 KiB");
        assert_eq!(shown(1000), "1000 B");
    }
}
