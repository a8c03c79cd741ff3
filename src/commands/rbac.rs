//! `k3sdoctor rbac [read-only|repair|serve|heal|rancher|secrets-metadata]`: the roles each use needs, as YAML for
//! `kubectl apply -f -`, so an RBAC error can name a command instead of a README section.
//!
//! One source: the manifests in deploy/ (the read-only ClusterRole and Role that the CronJob
//! and serve ship, the repair Role); tests keep them identical to the README's blocks.

use crate::cli::RbacUse;
use crate::exit::Exit;

use super::Ui;

const READ_ONLY_CLUSTER_ROLE: &str = include_str!("../../deploy/base/serve-clusterrole.yaml");
const READ_ONLY_ROLE: &str = include_str!("../../deploy/base/serve-role.yaml");
const READ_ONLY_ROLE_KUBE_SYSTEM: &str =
    include_str!("../../deploy/base/serve-role-kube-system.yaml");
const READ_ONLY_ROLE_KUBE_NODE_LEASE: &str =
    include_str!("../../deploy/base/serve-role-kube-node-lease.yaml");
const SERVE_AUTH_CLUSTER_ROLE: &str = include_str!("../../deploy/base/serve-auth-clusterrole.yaml");
const REPAIR_ROLE: &str = include_str!("../../deploy/repair-role.yaml");
const HEAL_ROLE: &str = include_str!("../../deploy/heal/heal-role.yaml");
const RANCHER_ROLES: &str = include_str!("../../deploy/rancher/rancher-read-only.yaml");
const RANCHER_MACHINE_PLANS_ROLE: &str =
    include_str!("../../deploy/rancher/rancher-machine-plans.yaml");
const SECRETS_METADATA_ROLE: &str = include_str!("../../deploy/secrets-metadata-role.yaml");

/// A manifest without the comment that opens it (it speaks of the file and its tests).
fn object(manifest: &str) -> &str {
    manifest
        .find("apiVersion:")
        .map_or(manifest, |start| &manifest[start..])
}

/// The YAML `rbac` prints for `role`.
pub(crate) fn roles(role: RbacUse, bin_name: &str) -> String {
    let read_only = |header: &str| {
        format!(
            "{header}\
             # Bind: kubectl create clusterrolebinding k3sdoctor-read-only --clusterrole k3sdoctor-read-only --user NAME\n\
             #       kubectl -n default create rolebinding k3sdoctor-read-only --role k3sdoctor-read-only --user NAME\n\
             #       kubectl -n kube-system create rolebinding k3sdoctor-read-only --role k3sdoctor-read-only --user NAME\n\
             #       kubectl -n kube-node-lease create rolebinding k3sdoctor-read-only --role k3sdoctor-read-only --user NAME\n\
             # The ClusterRole and the Role in kube-system (the locks' Leases) are needed by every command.\n\
             # Without the Role in default only apiserver-endpoint-stale and the Node Event checks are not checked;\n\
             # without the one in kube-node-lease a lock move's gates judge by Ready alone.\n\
             {}---\n{}---\n{}---\n{}",
            object(READ_ONLY_CLUSTER_ROLE),
            object(READ_ONLY_ROLE),
            object(READ_ONLY_ROLE_KUBE_SYSTEM),
            object(READ_ONLY_ROLE_KUBE_NODE_LEASE)
        )
    };
    match role {
        RbacUse::ReadOnly => read_only(&format!(
            "# {bin_name} rbac read-only: check, leases (and --watch), snapshots list|diff, serve and\n\
             # every command without --fix. Nodes and ETCDSnapshotFiles are cluster-scoped; the\n\
             # locks' Leases are read in kube-system only.\n"
        )),
        RbacUse::Serve => format!(
            "{}---\n\
             # serve --metrics-auth kubernetes (the default) reviews the bearer tokens sent to\n\
             # /metrics and /report; --metrics-auth=none needs no more than the read-only role.\n\
             # Bind: kubectl create clusterrolebinding k3sdoctor-serve-auth --clusterrole k3sdoctor-serve-auth --user NAME\n\
             {}",
            read_only(&format!(
                "# {bin_name} rbac serve: the read-only role (its watches use list and watch) and\n\
                 # the token reviews; deploy/ ships both with a ServiceAccount, Deployment and Service.\n"
            )),
            object(SERVE_AUTH_CLUSTER_ROLE)
        ),
        RbacUse::Repair => format!(
            "# {bin_name} rbac repair: what leases follow --fix and snapshots backfill|restore --fix\n\
             # write with; bind it together with the read-only role ({bin_name} rbac read-only).\n\
             # A Role in kube-system: everything a repair writes lives there.\n\
             # Bind: kubectl -n kube-system create rolebinding k3sdoctor-repair --role k3sdoctor-repair --user NAME\n\
             {}",
            object(REPAIR_ROLE)
        ),
        RbacUse::Heal => format!(
            "# {bin_name} rbac heal: what serve --heal needs on top of serve's read-only role\n\
             # ({bin_name} rbac serve), in kube-system only; deploy/heal/ ships it with the flag.\n\
             # Bind: kubectl -n kube-system create rolebinding k3sdoctor-heal --role k3sdoctor-heal \\\n\
             #         --serviceaccount kube-system:k3sdoctor-serve\n\
             {}",
            object(HEAL_ROLE)
        ),
        RbacUse::Rancher => format!(
            "# {bin_name} rbac rancher: what check reads on Rancher's management (\"local\") cluster\n\
             # to compare Rancher's snapshot records; apply it there, not on the downstream cluster.\n\
             # The Role is for the workspace of the clusters (fleet-default unless you use others).\n\
             # Bind: kubectl create clusterrolebinding k3sdoctor-rancher-read-only --clusterrole k3sdoctor-rancher-read-only --user NAME\n\
             #       kubectl -n fleet-default create rolebinding k3sdoctor-rancher-read-only --role k3sdoctor-rancher-read-only --user NAME\n\
             {}---\n\
             # Opt-in, for rancher-machine-plan-stuck from the plan Secrets: RBAC cannot narrow list to\n\
             # one Secret type, so this Role may read every Secret of the workspace; {bin_name} asks only\n\
             # for type rke.cattle.io/machine-plan and keeps only each plan's sha256 (it holds the join token).\n\
             # Bind: kubectl -n fleet-default create rolebinding k3sdoctor-rancher-machine-plans --role k3sdoctor-rancher-machine-plans --user NAME\n\
             {}",
            object(RANCHER_ROLES),
            object(RANCHER_MACHINE_PLANS_ROLE)
        ),
        RbacUse::SecretsMetadata => format!(
            "# {bin_name} rbac secrets-metadata: opt-in, for node-password-orphaned and\n\
             # serving-cert-frozen. check asks for the metadata of the Secrets in kube-system only,\n\
             # but RBAC cannot narrow list to metadata: this role may read their data too.\n\
             # The RoleBinding is for the CronJob's ServiceAccount; for a person instead:\n\
             #   kubectl -n kube-system create rolebinding k3sdoctor-secrets-metadata --role k3sdoctor-secrets-metadata --user NAME\n\
             {}",
            object(SECRETS_METADATA_ROLE)
        ),
    }
}

pub(crate) fn run(role: RbacUse, bin_name: &str, ui: &mut Ui) -> anyhow::Result<Exit> {
    let yaml = roles(role, bin_name);
    let written = ui
        .out
        .write_all(yaml.as_bytes())
        .and_then(|()| ui.out.flush());
    crate::render::tolerate_closed_pipe(written.map_err(Into::into))?;
    Ok(Exit::Healthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_use_prints_its_objects() {
        let read_only = roles(RbacUse::ReadOnly, "k3sdoctor");
        assert!(read_only.contains("kind: ClusterRole\nmetadata:\n  name: k3sdoctor-read-only\n"));
        assert!(read_only.contains(
            "kind: Role\nmetadata:\n  name: k3sdoctor-read-only\n  namespace: default\n"
        ));
        assert!(read_only.contains(
            "kind: Role\nmetadata:\n  name: k3sdoctor-read-only\n  namespace: kube-system\n"
        ));
        assert!(read_only.contains(
            "kind: Role\nmetadata:\n  name: k3sdoctor-read-only\n  namespace: kube-node-lease\n"
        ));
        assert!(!read_only.contains("The README"), "{read_only}");
        let serve = roles(RbacUse::Serve, "k3sdoctor");
        assert!(serve.contains(object(&read_only)), "{serve}");
        assert!(serve.ends_with(object(SERVE_AUTH_CLUSTER_ROLE)), "{serve}");
        let repair = roles(RbacUse::Repair, "k3sdoctor");
        assert!(repair.contains(
            "kind: Role\nmetadata:\n  name: k3sdoctor-repair\n  namespace: kube-system\n"
        ));
        let secrets = roles(RbacUse::SecretsMetadata, "k3sdoctor");
        assert!(secrets.contains(
            "kind: Role\nmetadata:\n  name: k3sdoctor-secrets-metadata\n  namespace: kube-system\n"
        ));
        assert!(secrets.contains("kind: RoleBinding\n"), "{secrets}");
        assert!(secrets.contains("cannot narrow"), "{secrets}");
        let heal = roles(RbacUse::Heal, "k3sdoctor");
        assert!(
            heal.contains(
                "kind: Role\nmetadata:\n  name: k3sdoctor-heal\n  namespace: kube-system\n"
            )
        );
    }

    /// Every kind of the table is granted where the live reads need it, and docs/rbac.md
    /// names it: a kind added to the table without its rule fails here.
    #[test]
    fn the_read_only_roles_grant_every_kind_of_the_table() {
        use crate::model::kinds::{KINDS, Kind};
        let granted = |manifests: &[&str], group: &str, plural: &str| {
            let rules = manifests.iter().flat_map(|manifest| {
                serde_yaml_ng::Deserializer::from_str(manifest)
                    .map(|doc| serde::Deserialize::deserialize(doc).unwrap())
                    .collect::<Vec<serde_json::Value>>()
            });
            rules.into_iter().any(|role| {
                role["rules"].as_array().into_iter().flatten().any(|rule| {
                    let has = |field: &str, want: &str| {
                        rule[field]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|v| v == want)
                    };
                    has("apiGroups", group)
                        && has("resources", plural)
                        && (has("verbs", "list") || has("verbs", "get"))
                })
            })
        };
        let read_only = [
            READ_ONLY_CLUSTER_ROLE,
            READ_ONLY_ROLE,
            READ_ONLY_ROLE_KUBE_SYSTEM,
        ];
        let docs = include_str!("../../docs/rbac.md");
        for row in &KINDS {
            // Secrets' metadata is an opt-in role of its own.
            let roles: &[&str] = if row.kind == Kind::Secret {
                &[SECRETS_METADATA_ROLE]
            } else {
                &read_only
            };
            assert!(
                granted(roles, row.group(), row.plural),
                "{} ({}) is read but no read-only rule grants it",
                row.name,
                row.resource()
            );
            assert!(
                docs.contains(row.plural),
                "docs/rbac.md does not name {}",
                row.plural
            );
        }
    }
}
