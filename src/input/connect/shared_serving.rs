//! One reading of a serving certificate for every connection to the same host: the clusters
//! behind one Rancher are all served Rancher's certificate, read once instead of once each.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::model::served_certificates::Presented;

/// How long one reading stands for every cluster behind the same Rancher (`serve`'s rounds
/// read it again, and so see a renewed certificate).
const SHARED_FOR: Duration = Duration::from_secs(60);

#[derive(Default)]
pub(crate) struct SharedServing {
    last: tokio::sync::Mutex<Option<(Instant, Result<Presented, String>)>>,
}

impl SharedServing {
    /// The last reading while it is fresh, else `read`'s.
    pub(crate) async fn read_with(
        &self,
        read: impl Future<Output = Result<Presented, String>>,
    ) -> Result<Presented, String> {
        // Held while reading: the others wait for this one reading.
        let mut last = self.last.lock().await;
        if let Some((at, presented)) = last.as_ref()
            && at.elapsed() < SHARED_FOR
        {
            return presented.clone();
        }
        let presented = read.await;
        *last = Some((Instant::now(), presented.clone()));
        presented
    }
}
