//! Lists read from the API server's watch cache: everything k3sdoctor lists on Rancher's
//! management cluster.
//!
//! A consistent list (no `resourceVersion`) with a page size is read from etcd page by page,
//! unless the apiserver is recent enough to serve pages from its cache; under a label selector
//! it decodes every object of the namespace to find the few the selector matches. A list at
//! `resourceVersion=0` is answered whole from the watch cache, the selector applied in memory:
//! on the Rancher benchmark's Kubernetes 1.24, 1,500 Machines came in one answer in 0.15–0.25
//! s against three pages of 0.2–0.45 s each, and etcd read nothing. The cache is fed by a
//! watch on etcd and runs behind it by the time an event takes to arrive, milliseconds on a
//! healthy server; it is what the informers of the server's own controllers (Rancher's among
//! them) read.
//!
//! An answer past the bound on one answer is read again consistently, page by page, which
//! keeps each answer under it.

use std::fmt::Debug;
use std::time::Instant;

use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;

use super::{PAGE_SIZE, Trace, list_with};
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::connect::paging::Paging;
use crate::input::read_error::answer_too_large;

/// Every object `selectors` (label and field selectors, no page size) matches, as the API
/// server's watch cache holds it (`resourceVersion=0`): one answer.
pub(crate) async fn list_cached<K, T>(
    api: &Api<K>,
    action: &str,
    conn: &Connection,
    trace: Trace<'_>,
    keep: impl Fn(K) -> T,
    selectors: ListParams,
) -> Result<Vec<T>, ReadError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    let started = Instant::now();
    let in_flight = conn.activity.begin(action);
    let answer = api.list(&selectors.clone().match_any()).await;
    drop(in_flight);
    let list = match answer {
        Ok(list) => list,
        Err(e) if answer_too_large(&e) => {
            trace(&format!(
                "{action}: the watch cache's answer is too large, reading it page by page"
            ));
            let paged = selectors.limit(PAGE_SIZE);
            return list_with(api, action, conn, trace, keep, paged).await;
        }
        Err(e) => return Err(ReadError::from_kube(&e, action, &conn.server)),
    };
    trace(&format!(
        "{action}: {} items in {} ms (from the watch cache)",
        list.items.len(),
        started.elapsed().as_millis()
    ));
    // One answer is one page, under the same bound on what a list may hold.
    Paging::default()
        .after_page(list.items.len(), None)
        .map_err(|lie| lie.refusal(action, &conn.server))?;
    Ok(list.items.into_iter().map(keep).collect())
}
