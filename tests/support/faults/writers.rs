//! Concurrent writers: several runs of the binary released at the same instant.
//!
//! Every run waits behind one FIFO, the starting gate (`Run::gated_by`), in a `dd` that reads
//! one byte. The gate is held open for writing by the test from the start, so a run that
//! reaches it late still finds its byte (no run can miss the release) and a run that is early
//! blocks until the bytes come. The test waits until every run sits in that read, then writes
//! all bytes in one `write`: the kernel wakes every reader at once.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::harness::{Output, Run, Running};
use crate::support::wait::wait_for;

pub(crate) struct StartingGate {
    path: PathBuf,
    /// Open for reading and writing: opening a FIFO so never blocks (Linux), and while it is
    /// open the runs' reads block instead of seeing end-of-file.
    held: File,
    _dir: tempfile::TempDir,
}

impl StartingGate {
    pub(crate) fn new() -> StartingGate {
        let dir = tempfile::tempdir().expect("a directory for the gate");
        let path = dir.path().join("gate");
        let c_path = std::ffi::CString::new(path.to_str().expect("utf-8 path")).unwrap();
        // SAFETY: mkfifo(3) with a valid NUL-terminated path has no memory-safety preconditions.
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        assert_eq!(made, 0, "mkfifo {}", path.display());
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the gate");
        StartingGate {
            path,
            held,
            _dir: dir,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Releases `runs` waiting runs with one write.
    pub(crate) fn release(&mut self, runs: usize) {
        self.held
            .write_all(&vec![b'g'; runs])
            .expect("write to the gate");
    }
}

/// Whether process `pid` (a gated run's shell) is waiting at the gate: its `dd` child exists
/// and sleeps. Falls back to "yes" where /proc cannot tell, so the release still happens.
fn at_the_gate(pid: u32) -> bool {
    let children = format!("/proc/{pid}/task/{pid}/children");
    let Ok(children) = std::fs::read_to_string(children) else {
        return true;
    };
    children.split_whitespace().any(|child| {
        let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        // The state is the field after the parenthesised command name.
        let state = stat
            .rsplit(") ")
            .next()
            .and_then(|rest| rest.split(' ').next());
        comm.trim() == "dd" && state == Some("S")
    })
}

/// Starts every run, waits until all of them sit at the gate, releases them together and
/// returns their outputs in the order given.
pub(crate) fn release_together(runs: Vec<Run>) -> Vec<Output> {
    let mut gate = StartingGate::new();
    let running: Vec<Running> = runs
        .into_iter()
        .map(|run| run.gated_by(gate.path()).spawn())
        .collect();
    let ready = wait_for(Duration::from_secs(10), || {
        running.iter().all(|r| at_the_gate(r.id()))
    });
    assert!(ready, "the runs did not reach the starting gate");
    gate.release(running.len());
    running.into_iter().map(Running::wait).collect()
}
