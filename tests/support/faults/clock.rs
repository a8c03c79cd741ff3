//! A steppable clock for the binary under test: libfaketime, preloaded, reads the offset from
//! a file on every call (`FAKETIME_NO_CACHE=1`), so a test steps the wall clock of a running
//! process as NTP does on a board without an RTC. The monotonic clock is left alone
//! (`FAKETIME_DONT_FAKE_MONOTONIC=1`): only wall time steps, as it does for real.
//!
//! libfaketime is Debian's `libfaketime` package (`.ci/run` installs it). Without it a test
//! fails under `CI=true` and skips with one line otherwise.

use std::path::{Path, PathBuf};

use super::super::harness::Run;

/// Where Debian (and Ubuntu) put the preloadable library.
const LIBFAKETIME: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
];

/// The offset file of one run; the offset starts at zero.
pub(crate) struct SteppedClock {
    library: PathBuf,
    dir: tempfile::TempDir,
}

impl SteppedClock {
    /// `None` (after one line) when libfaketime is not installed and this is not CI; under
    /// `CI=true` its absence fails the test, since CI installs it.
    pub(crate) fn new(test: &str) -> Option<SteppedClock> {
        let Some(library) = LIBFAKETIME.iter().map(Path::new).find(|p| p.exists()) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{test}: libfaketime is not installed (looked in {LIBFAKETIME:?}); CI installs the \
                 Debian packages libfaketime and faketime in .ci/run"
            );
            eprintln!(
                "{test}: skipped: libfaketime is not installed (apt-get install libfaketime faketime)"
            );
            return None;
        };
        let clock = SteppedClock {
            library: library.to_path_buf(),
            dir: tempfile::tempdir().expect("a directory for the clock offset"),
        };
        clock.step_to(0);
        Some(clock)
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("offset")
    }

    /// `run` with its wall clock under this offset.
    pub(crate) fn apply(&self, run: Run) -> Run {
        run.env("LD_PRELOAD", &self.library.display().to_string())
            .env(
                "FAKETIME_TIMESTAMP_FILE",
                &self.file().display().to_string(),
            )
            .env("FAKETIME_NO_CACHE", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
    }

    /// Sets the wall clock of the runs to real time plus `seconds` (negative: behind), at once.
    pub(crate) fn step_to(&self, seconds: i64) {
        // Written aside and renamed, so the process never reads a half-written file.
        let next = self.dir.path().join("offset.next");
        std::fs::write(&next, format!("{seconds:+}\n")).expect("write the clock offset");
        std::fs::rename(&next, self.file()).expect("replace the clock offset");
    }
}
