//! A `/metrics` answer read line by line as it arrives, keeping only the datastore series
//! (`DatastoreScrape`), so its memory does not grow with the answer: an apiserver's answer
//! runs to megabytes, and a hostile or broken one may not end. What is past the cap is not
//! read and the read fails, rather than judging a half answer (the histograms would be short).

use super::sample_line::{Line, Sample, read_line};
use crate::model::server_metrics::{DatastoreScrape, KineCompactions, StorageSize};

/// The most of one answer read: an apiserver with every resource's latency buckets answers
/// a few MiB.
pub(crate) const MOST_METRICS_BYTES: usize = 16 << 20;
/// One line longer than this is not a metrics line.
const MOST_LINE_BYTES: usize = 64 << 10;

/// The apiserver's size metric by era (newest first): 1.28 serves the two newer ones.
const SIZE_METRICS: [&str; 3] = [
    "apiserver_storage_size_bytes",
    "apiserver_storage_db_total_size_in_bytes",
    "etcd_db_total_size_in_bytes",
];

/// Single-object storage calls (`pkg/storage/etcd3/store.go` records these operation names);
/// lists take seconds on big clusters by design and have their own SLO.
const OBJECT_OPERATIONS: [&str; 4] = ["get", "create", "update", "delete"];

fn over_cap(limit: usize) -> String {
    format!(
        "its metrics answer is over {} MiB, more than k3sdoctor reads",
        limit >> 20
    )
}

pub(crate) struct ScrapeReader {
    scrape: DatastoreScrape,
    /// The rank in `SIZE_METRICS` of the size kept (lower is newer).
    size_rank: usize,
    etcd_debugging_total: Option<f64>,
    line: Vec<u8>,
    read: usize,
    limit: usize,
}

impl Default for ScrapeReader {
    fn default() -> Self {
        ScrapeReader::with_limit(MOST_METRICS_BYTES)
    }
}

impl ScrapeReader {
    pub(crate) fn with_limit(limit: usize) -> ScrapeReader {
        ScrapeReader {
            scrape: DatastoreScrape::default(),
            size_rank: SIZE_METRICS.len(),
            etcd_debugging_total: None,
            line: Vec::new(),
            read: 0,
            limit,
        }
    }

    /// The next bytes of the answer, in any split.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.read += bytes.len();
        if self.read > self.limit {
            return Err(over_cap(self.limit));
        }
        let Some(last) = memchr::memrchr(b'\n', bytes) else {
            return self.carry(bytes);
        };
        let (mut whole, rest) = bytes.split_at(last + 1);
        if !self.line.is_empty() {
            // The line an earlier piece began ends at this piece's first newline.
            let end = memchr::memchr(b'\n', whole).unwrap_or(last);
            self.line.extend_from_slice(&whole[..end]);
            let line = std::mem::take(&mut self.line);
            let done = utf8(&line).and_then(|text| self.line_done(text));
            self.line = line;
            self.line.clear();
            done?;
            whole = &whole[end + 1..];
        }
        // No byte of a multi-byte character is a newline, so the piece's whole lines are text
        // or not as one: checked at once, not line by line.
        let text = utf8(whole)?;
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &text.as_bytes()[start..]) {
            // Read where it lies, not copied.
            self.line_done(&text[start..start + end])?;
            start += end + 1;
        }
        self.carry(rest)
    }

    /// The start of a line the next piece goes on with.
    fn carry(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.line.extend_from_slice(bytes);
        if self.line.len() > MOST_LINE_BYTES {
            return Err(format!(
                "a line of its metrics answer is over {} KiB; it is not the metrics text format",
                MOST_LINE_BYTES >> 10
            ));
        }
        Ok(())
    }

    /// The series read; an answer with none of them is an error saying so.
    pub(crate) fn finish(mut self) -> Result<DatastoreScrape, String> {
        let last = std::mem::take(&mut self.line);
        self.line_done(utf8(&last)?)?;
        if self.scrape.etcd_total_bytes.is_none() {
            self.scrape.etcd_total_bytes = self.etcd_debugging_total;
        }
        if self.read == 0 {
            return Err("its metrics answer is empty".into());
        }
        Ok(self.scrape)
    }

    fn line_done(&mut self, line: &str) -> Result<(), String> {
        match read_line(line, is_read)? {
            Line::Sample(sample) => self.sample(&sample),
            Line::Blank | Line::Skipped => Ok(()),
        }
    }

    /// A sample of a series read: its labels first, and its value only when they say it counts
    /// (most of an apiserver's lines are list latencies, which do not).
    fn sample(&mut self, s: &Sample) -> Result<(), String> {
        let scrape = &mut self.scrape;
        let bucket = |h: &mut crate::model::histogram::Histogram| -> Result<(), String> {
            if let Some(le) = s.label("le").and_then(|le| parse_bound(&le)) {
                h.add(le, s.value()?);
            }
            Ok(())
        };
        match s.name() {
            "etcd_request_duration_seconds_bucket" => {
                let operation = s.label("operation").unwrap_or_default();
                if OBJECT_OPERATIONS.contains(&operation.as_ref()) {
                    bucket(&mut scrape.object_requests)?;
                }
            }
            "etcd_disk_wal_fsync_duration_seconds_bucket" => bucket(&mut scrape.wal_fsync)?,
            "etcd_disk_backend_commit_duration_seconds_bucket" => {
                bucket(&mut scrape.backend_commit)?
            }
            "kine_compact_total" => {
                let counts = scrape
                    .kine_compactions
                    .get_or_insert_with(KineCompactions::default);
                match s.label("result").as_deref() {
                    Some("success") => counts.success += s.value()?,
                    Some("error") => counts.error += s.value()?,
                    _ => {}
                }
            }
            "process_start_time_seconds" => scrape.process_start = Some(s.value()?),
            "etcd_mvcc_db_total_size_in_bytes" => scrape.etcd_total_bytes = Some(s.value()?),
            "etcd_debugging_mvcc_db_total_size_in_bytes" => {
                self.etcd_debugging_total = Some(s.value()?)
            }
            "etcd_mvcc_db_total_size_in_use_in_bytes" => {
                scrape.etcd_in_use_bytes = Some(s.value()?)
            }
            "etcd_server_quota_backend_bytes" => scrape.etcd_quota_bytes = Some(s.value()?),
            name => {
                if let Some(rank) = SIZE_METRICS.iter().position(|m| *m == name) {
                    self.size(rank, s.value()?);
                }
            }
        }
        Ok(())
    }

    /// The newest era's size wins; -1 (the apiserver could not ask) counts only when no
    /// newer metric has a value.
    fn size(&mut self, rank: usize, value: f64) {
        if rank > self.size_rank {
            return;
        }
        if value < 0.0 || !value.is_finite() {
            if self.scrape.storage_size.is_none() {
                self.scrape.storage_size_failed = true;
            }
            return;
        }
        self.size_rank = rank;
        self.scrape.storage_size_failed = false;
        self.scrape.storage_size = Some(StorageSize {
            bytes: value,
            metric: SIZE_METRICS[rank],
        });
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|_| "its metrics answer is not UTF-8 text".to_string())
}

/// The series [`ScrapeReader::sample`] takes, besides [`SIZE_METRICS`]: the other lines are
/// only checked.
const READ_SERIES: [&str; 9] = [
    "etcd_request_duration_seconds_bucket",
    "etcd_disk_wal_fsync_duration_seconds_bucket",
    "etcd_disk_backend_commit_duration_seconds_bucket",
    "kine_compact_total",
    "process_start_time_seconds",
    "etcd_mvcc_db_total_size_in_bytes",
    "etcd_debugging_mvcc_db_total_size_in_bytes",
    "etcd_mvcc_db_total_size_in_use_in_bytes",
    "etcd_server_quota_backend_bytes",
];

fn is_read(name: &str) -> bool {
    READ_SERIES.contains(&name) || SIZE_METRICS.contains(&name)
}

fn parse_bound(le: &str) -> Option<f64> {
    match le {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        _ => le.parse().ok(),
    }
}

/// Where an answer's bytes go as they arrive: its datastore series ([`ScrapeReader`]), or
/// its text as it came (`k3sdoctor dump`).
pub(crate) trait AnswerSink: Default {
    type Out;
    fn feed(&mut self, bytes: &[u8]) -> Result<(), String>;
    fn finish(self) -> Result<Self::Out, String>;
}

impl AnswerSink for ScrapeReader {
    type Out = DatastoreScrape;
    fn feed(&mut self, bytes: &[u8]) -> Result<(), String> {
        ScrapeReader::feed(self, bytes)
    }
    fn finish(self) -> Result<DatastoreScrape, String> {
        ScrapeReader::finish(self)
    }
}

/// The answer's text, up to the same cap.
#[derive(Default)]
pub(crate) struct AnswerText(Vec<u8>);

impl AnswerSink for AnswerText {
    type Out = Vec<u8>;
    fn feed(&mut self, bytes: &[u8]) -> Result<(), String> {
        if self.0.len() + bytes.len() > MOST_METRICS_BYTES {
            return Err(over_cap(MOST_METRICS_BYTES));
        }
        self.0.extend_from_slice(bytes);
        Ok(())
    }
    fn finish(self) -> Result<Vec<u8>, String> {
        Ok(self.0)
    }
}

/// A whole answer at once (a dump's file).
pub(crate) fn read_scrape(text: &[u8]) -> Result<DatastoreScrape, String> {
    let mut reader = ScrapeReader::default();
    reader.feed(text)?;
    reader.finish()
}

#[cfg(test)]
mod tests;
