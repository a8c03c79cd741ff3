//! Ending a long-running command cleanly on SIGINT or SIGTERM.

/// SIGINT (Ctrl-C) and SIGTERM (`kill`, a pod being stopped), caught from the start so a
/// signal that arrives while the first table is printed still ends the watch cleanly.
pub(super) struct Termination {
    #[cfg(unix)]
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Termination {
    pub(super) fn catch() -> Termination {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Termination {
                signals: signal(SignalKind::interrupt())
                    .and_then(|int| Ok((int, signal(SignalKind::terminate())?)))
                    .ok(),
            }
        }
        #[cfg(not(unix))]
        Termination {}
    }

    pub(super) async fn received(&mut self) {
        #[cfg(unix)]
        if let Some((int, term)) = &mut self.signals {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// How long an object is read again for a report after a write whose answer was lost or a
/// stop: the report must not hang on the server that failed the write.
pub(super) const REREAD_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Termination {
    /// Runs `send` (a write already on its way) to its end through a first SIGINT/SIGTERM:
    /// `on_first` says so and `interrupted` remembers it. `None` when a second signal comes
    /// first: the write was sent and its answer never came.
    pub(super) async fn finish_first<T>(
        &mut self,
        send: impl std::future::Future<Output = T>,
        interrupted: &mut bool,
        on_first: impl Fn(),
    ) -> Option<T> {
        tokio::pin!(send);
        loop {
            tokio::select! {
                // The request goes out before a pending signal is looked at.
                biased;
                done = &mut send => return Some(done),
                _ = self.received() => {
                    if *interrupted {
                        return None;
                    }
                    *interrupted = true;
                    on_first();
                }
            }
        }
    }
}
