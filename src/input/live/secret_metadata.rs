//! The metadata of the Secrets in kube-system, for the node password and serving certificate
//! checks. Asked for as a `PartialObjectMetadataList` (`Accept: application/json;
//! as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`), so the API server never sends a
//! Secret's data to k3sdoctor. RBAC cannot grant metadata alone: `list secrets` is the opt-in
//! role `k3sdoctor rbac secrets-metadata`, and without it the two checks say "not checked".

use std::time::Instant;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};

use super::refusal::read_or_refused;
use super::{Connection, PAGE_SIZE, ReadError, Trace};
use crate::input::connect::paging::{NextPage, Paging};
use crate::model::collected::Collected;
use crate::model::secret_metadata::{NAMESPACE, SecretMeta};

/// What a check without the role says.
pub(super) const NEEDS_ROLE: &str =
    "needs list secrets in kube-system: `k3sdoctor rbac secrets-metadata` prints the role";

/// `LIST /api/v1/namespaces/kube-system/secrets` as metadata, paged. A 403 is an answer: the
/// role is opt-in, so only the checks that need it say "not checked".
pub(super) async fn read_secret_metadata(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Collected<Vec<SecretMeta>>, ReadError> {
    read_or_refused(
        list_secret_metadata(conn, trace).await,
        trace,
        "node-passwords and serving-cert-static are not checked",
        |_| NEEDS_ROLE.into(),
    )
}

async fn list_secret_metadata(
    conn: &Connection,
    trace: Trace<'_>,
) -> Result<Vec<SecretMeta>, ReadError> {
    let mut secrets = Vec::new();
    each_secret_metadata(conn, trace, |meta| {
        secrets.push(SecretMeta::from_meta(meta))
    })
    .await?;
    Ok(secrets)
}

/// Every Secret of kube-system as metadata, page by page, each handed to `each`; how many.
pub(super) async fn each_secret_metadata(
    conn: &Connection,
    trace: Trace<'_>,
    mut each: impl FnMut(&ObjectMeta),
) -> Result<usize, ReadError> {
    let api: Api<Secret> = Api::namespaced(conn.client.clone(), NAMESPACE);
    let action = format!("list secrets in {NAMESPACE} (metadata only)");
    let mut params = ListParams::default().limit(PAGE_SIZE);
    let mut count = 0;
    let mut paging = Paging::default();
    loop {
        let started = Instant::now();
        let in_flight = conn.activity.begin(&action);
        let page = api
            .list_metadata(&params)
            .await
            .map_err(|e| ReadError::from_kube(&e, &action, &conn.server))?;
        drop(in_flight);
        trace(&format!(
            "{action}: {} items in {} ms",
            page.items.len(),
            started.elapsed().as_millis()
        ));
        let next = paging
            .after_page(page.items.len(), page.metadata.continue_)
            .map_err(|lie| lie.refusal(&action, &conn.server))?;
        for item in &page.items {
            each(&item.metadata);
            count += 1;
        }
        match next {
            NextPage::Continue(token) => params = params.continue_token(&token),
            NextPage::Done => return Ok(count),
        }
    }
}
