//! A watch that lists afresh after every failure (kube-runtime's watcher underneath), so that
//! "working again" always means "listed again".

use std::pin::Pin;
use std::time::Duration;

use futures::stream::{self, Stream, StreamExt};
use kube::api::Api;
use kube::runtime::watcher::{self, Event};

/// A watch that starts over with a fresh list after every failure, waiting with backoff
/// first. kube's own watcher resumes a failed watch from its resourceVersion without a list,
/// and a watch that resumes brings no event until the object changes: a lock ConfigMap that
/// never changes (or does not exist) would then stay "failing" forever after one dropped
/// connection. A fresh list always ends in `InitDone`, which is when a watch counts as
/// working again; it also drops what was deleted while the watch was down.
pub(super) fn watcher<K>(
    api: Api<K>,
    config: watcher::Config,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    type Attempt<K> = Pin<Box<dyn Stream<Item = Result<Event<K>, watcher::Error>> + Send>>;
    struct Relisting<K: kube::Resource + Clone> {
        api: Api<K>,
        config: watcher::Config,
        attempt: Option<Attempt<K>>,
        backoff: RelistBackoff,
    }
    let start = Relisting {
        api,
        config,
        attempt: None,
        backoff: RelistBackoff::default(),
    };
    stream::unfold(start, |mut s| async move {
        let attempt = match &mut s.attempt {
            Some(attempt) => attempt,
            None => {
                tokio::time::sleep(s.backoff.before_next()).await;
                s.attempt
                    .insert(Box::pin(watcher::watcher(s.api.clone(), s.config.clone())))
            }
        };
        let item = attempt.next().await?;
        match &item {
            Ok(Event::InitDone) => s.backoff.succeeded(),
            Ok(_) => {}
            Err(_) => {
                s.attempt = None;
                s.backoff.failed();
            }
        }
        Some((item, s))
    })
}

/// The wait before a fresh list: none at first, then 1 s doubling to 30 s while the lists
/// keep failing (kube's default backoff has the same shape), back to none after a list.
#[derive(Debug, Default)]
struct RelistBackoff {
    failures: u32,
}

impl RelistBackoff {
    fn before_next(&self) -> Duration {
        match self.failures {
            0 => Duration::ZERO,
            n => Duration::from_secs(1 << (n - 1).min(5)).min(Duration::from_secs(30)),
        }
    }

    fn failed(&mut self) {
        self.failures = self.failures.saturating_add(1);
    }

    fn succeeded(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_lists_back_off_while_they_fail_and_not_after_one_succeeds() {
        let mut backoff = RelistBackoff::default();
        assert_eq!(backoff.before_next(), Duration::ZERO);
        let waits: Vec<u64> = (0..8)
            .map(|_| {
                backoff.failed();
                backoff.before_next().as_secs()
            })
            .collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        backoff.succeeded();
        assert_eq!(backoff.before_next(), Duration::ZERO);
    }
}
