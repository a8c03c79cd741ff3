//! How each server's datastore grew between serve's polls, for `etcd-db-near-quota`'s "at
//! that pace the quota is reached in …": one `check` reads a size once and can say nothing
//! of its pace. A size is a gauge, so a process restart in between changes nothing; a defrag
//! shows as shrinking. Pure: each poll's time is an argument.

use std::collections::{BTreeMap, VecDeque};

use jiff::{SignedDuration, Timestamp};

use super::datastore_latency::server_label;
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics, SizeGrowth};

/// The longest look back: an hour of polls, as predict_linear's shortest useful window.
const WINDOW: SignedDuration = SignedDuration::from_hours(1);
/// Shorter than this, two reads of a size polled every 30 s by the apiserver say nothing.
const SHORTEST: SignedDuration = SignedDuration::from_mins(5);

/// Which of a server's answers a size came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Answer {
    Apiserver,
    Etcd,
}

/// The sizes of the last hour's polls, per server and answer.
#[derive(Debug, Default)]
pub(crate) struct SizeHistory {
    samples: BTreeMap<(String, Answer), VecDeque<(Timestamp, f64)>>,
}

impl SizeHistory {
    /// Keeps one poll's sizes, read at `at`, and forgets what is older than the window.
    pub(crate) fn record(&mut self, reads: &[ServerMetrics], at: Timestamp) {
        for read in reads {
            for (answer, scrape) in answers(read) {
                let Some(bytes) = scrape.size_bytes() else {
                    continue;
                };
                let kept = self
                    .samples
                    .entry((server_label(read), answer))
                    .or_default();
                kept.push_back((at, bytes));
                while kept
                    .front()
                    .is_some_and(|(t, _)| at.duration_since(*t) > WINDOW)
                {
                    kept.pop_front();
                }
            }
        }
        self.samples.retain(|_, kept| {
            kept.back()
                .is_some_and(|(t, _)| at.duration_since(*t) <= WINDOW)
        });
    }

    /// Sets each scrape's growth: from the oldest kept size to this one, when at least
    /// [`SHORTEST`] apart.
    pub(crate) fn annotate(&self, reads: &mut [ServerMetrics]) {
        for read in reads.iter_mut() {
            let server = server_label(read);
            let each = |answer: Answer, scrape: &mut DatastoreScrape| {
                let kept = self.samples.get(&(server.clone(), answer));
                scrape.growth = kept.and_then(|kept| {
                    let (first, earlier) = kept.front()?;
                    let (last, later) = kept.back()?;
                    let over = last.duration_since(*first);
                    (over >= SHORTEST).then_some(SizeGrowth {
                        bytes: later - earlier,
                        over,
                    })
                });
            };
            if let Ok(scrape) = read.apiserver.as_mut() {
                each(Answer::Apiserver, scrape);
            }
            if let Some(Ok(scrape)) = read.etcd.as_mut() {
                each(Answer::Etcd, scrape);
            }
        }
    }
}

fn answers(read: &ServerMetrics) -> impl Iterator<Item = (Answer, &DatastoreScrape)> {
    let apiserver = read.apiserver.as_ref().ok().map(|s| (Answer::Apiserver, s));
    let etcd = read
        .etcd
        .as_ref()
        .and_then(|e| e.as_ref().ok())
        .map(|s| (Answer::Etcd, s));
    apiserver.into_iter().chain(etcd)
}

#[cfg(test)]
mod tests;
