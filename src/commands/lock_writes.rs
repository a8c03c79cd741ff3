//! The I/O half of `leases follow`: reading the lock's copies, the permission check and the
//! preconditioned writes (a dry run is the same write). Every write carries the resourceVersion that was read and
//! `fieldManager=k3sdoctor`; nothing is retried blindly.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

use crate::apply::{FIELD_MANAGER, WriteError};
use crate::distro::LOCK_NAMESPACE;
use crate::follow::follow_plan::LockCopy;
use crate::follow::lock_edit::{
    HolderEdit, configmap_record, configmap_with_holder, lease_with_holder,
};
use crate::follow::lock_objects::{LockObjects, WrittenCopy};
use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::own_access_review::{WriterRole, denied, may};
use crate::model::lock::LockRecord;

pub(super) async fn read_lock_objects(
    conn: &Connection,
    lock: &str,
    copies: &[LockCopy],
) -> Result<LockObjects, ReadError> {
    let mut objects = LockObjects::default();
    for copy in copies {
        match copy {
            LockCopy::Lease => {
                let api: Api<Lease> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
                objects.lease = api.get_opt(lock).await.map_err(|e| {
                    ReadError::from_kube(&e, &format!("get lease kube-system/{lock}"), &conn.server)
                })?;
            }
            LockCopy::ConfigMap => {
                let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
                objects.configmap = api.get_opt(lock).await.map_err(|e| {
                    ReadError::from_kube(
                        &e,
                        &format!("get configmap kube-system/{lock}"),
                        &conn.server,
                    )
                })?;
            }
        }
    }
    Ok(objects)
}

/// Asks the API server whether this user may update every copy; the error names the
/// permission that is missing and `role`, the role that grants it.
pub(super) async fn check_permissions(
    conn: &Connection,
    lock: &str,
    copies: &[LockCopy],
    role: WriterRole,
) -> Result<(), ReadError> {
    for copy in copies {
        let (group, resource) = match copy {
            LockCopy::Lease => ("coordination.k8s.io", "leases"),
            LockCopy::ConfigMap => ("", "configmaps"),
        };
        if !may(conn, group, resource, "update", Some(lock)).await? {
            let shown = if group.is_empty() {
                resource.to_string()
            } else {
                format!("{resource}.{group}")
            };
            return Err(denied("update", &shown, lock, role));
        }
    }
    Ok(())
}

/// PUTs one copy with the edit, preconditioned on the resourceVersion in `objects`.
pub(super) async fn write_copy(
    conn: &Connection,
    lock: &str,
    copy: LockCopy,
    objects: &LockObjects,
    edit: HolderEdit<'_>,
    dry_run: bool,
) -> Result<WrittenCopy, WriteError> {
    let params = PostParams {
        dry_run,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    let verb = if dry_run { "dry-run update" } else { "update" };
    let object = copy.object(lock);
    let fail = |e: kube::Error| {
        WriteError::from_kube(&e, &format!("{verb} {object}"), &conn.server, dry_run)
    };
    let missing = || {
        WriteError::Other(ReadError::new(format!(
            "{object} disappeared before it could be written; nothing was written to it"
        )))
    };
    let (resource_version, renew_time) = match copy {
        LockCopy::Lease => {
            let current = objects.lease.as_ref().ok_or_else(missing)?;
            let api: Api<Lease> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
            let written = api
                .replace(lock, &params, &lease_with_holder(current, edit))
                .await
                .map_err(fail)?;
            (
                written.metadata.resource_version.clone(),
                LockRecord::from_lease(&written).renew_time,
            )
        }
        LockCopy::ConfigMap => {
            let current = objects.configmap.as_ref().ok_or_else(missing)?;
            let next = configmap_with_holder(current, edit)
                .map_err(|m| WriteError::Other(ReadError::new(m)))?;
            let api: Api<ConfigMap> = Api::namespaced(conn.client.clone(), LOCK_NAMESPACE);
            let written = api.replace(lock, &params, &next).await.map_err(fail)?;
            (
                written.metadata.resource_version.clone(),
                configmap_record(&written).and_then(|r| r.renew_time),
            )
        }
    };
    Ok(WrittenCopy {
        object,
        resource_version: resource_version.unwrap_or_default(),
        renew_time,
    })
}
