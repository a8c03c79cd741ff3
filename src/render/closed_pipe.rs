//! Standard output that a reader may close early (`k3sdoctor check | head -1`).

use std::io::{ErrorKind, Result, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Once the reader has gone, writes succeed and go nowhere: what is left to print has no
/// reader, and the exit code must still be the verdict's rather than a write error. Any
/// other error (a full disk) is still reported.
pub(crate) struct ClosedPipeTolerant<W> {
    inner: W,
    closed: ReaderGone,
}

/// Whether the reader of a [`ClosedPipeTolerant`] has gone: a command that would otherwise
/// print forever (`leases --watch | head`) stops when it has.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReaderGone(Arc<AtomicBool>);

impl ReaderGone {
    pub(crate) fn is_gone(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl<W: Write> ClosedPipeTolerant<W> {
    pub(crate) fn new(inner: W) -> Self {
        ClosedPipeTolerant {
            inner,
            closed: ReaderGone::default(),
        }
    }

    pub(crate) fn reader_gone(&self) -> ReaderGone {
        self.closed.clone()
    }

    fn absorb(&mut self, result: Result<()>) -> Result<()> {
        match result {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed.set();
                Ok(())
            }
            other => other,
        }
    }
}

impl<W: Write> Write for ClosedPipeTolerant<W> {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        if self.closed.is_gone() {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed.set();
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> Result<()> {
        if self.closed.is_gone() {
            return Ok(());
        }
        let result = self.inner.flush();
        self.absorb(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe whose reader leaves after `room` bytes.
    struct Pipe {
        room: usize,
        written: Vec<u8>,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(ErrorKind::BrokenPipe.into());
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writes_after_the_reader_left_are_dropped_not_errors() {
        let mut out = ClosedPipeTolerant::new(Pipe {
            room: 6,
            written: Vec::new(),
        });
        let gone = out.reader_gone();
        writeln!(out, "first").unwrap();
        assert!(!gone.is_gone());
        writeln!(out, "second line").unwrap();
        writeln!(out, "x").unwrap();
        out.flush().unwrap();
        assert!(gone.is_gone(), "the handle sees what the writer saw");
        assert_eq!(out.inner.written, b"first\n");
    }

    #[test]
    fn other_errors_still_fail() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> Result<usize> {
                Err(std::io::Error::other("No space left on device"))
            }
            fn flush(&mut self) -> Result<()> {
                Ok(())
            }
        }
        let mut out = ClosedPipeTolerant::new(Full);
        assert!(writeln!(out, "x").is_err());
    }
}
