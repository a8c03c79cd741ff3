//! Ending a long-running command cleanly on SIGINT or SIGTERM.

/// SIGINT (Ctrl-C) and SIGTERM (`kill`, a pod being stopped), caught from the start so a
/// signal that arrives while the first table is printed still ends the watch cleanly.
pub struct Termination {
    #[cfg(unix)]
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Termination {
    pub fn catch() -> Termination {
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

    pub async fn received(&mut self) {
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
