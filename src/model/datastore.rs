//! Which datastore a cluster runs on, told from what the API shows of its servers. It decides
//! what bookkeeping to expect: k3s runs no leader election on sqlite (`NoLeaderElect =
//! !etcdConfig.LeaderElect` in pkg/cluster, and kine's sqlite endpoint asks for none), so a
//! default single-server install has no `k3s` lock and no snapshot records, and that is healthy.

use serde::Serialize;

use super::node::NodeFacts;
use crate::distro::Distro;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "why")]
pub(crate) enum Datastore {
    /// Embedded etcd: the etcd role, `etcd.<prog>.cattle.io/*` annotations or `--cluster-init`.
    EmbeddedEtcd,
    /// Kine on sqlite: one server, none of the above and no `--datastore-endpoint`. No leader
    /// election, no etcd snapshots.
    Sqlite,
    /// Kine on MySQL, Postgres or an external etcd (`--datastore-endpoint`, or several servers
    /// without etcd): leader election as on etcd, no etcd snapshots.
    ExternalSql,
    /// Not told from this input; the reason.
    Unknown(String),
}

impl Datastore {
    /// From the Nodes, `None` when no Nodes were read.
    pub(crate) fn of(nodes: Option<&[NodeFacts]>, distro: Distro) -> Datastore {
        let Some(nodes) = nodes else {
            return Datastore::Unknown("no Nodes were read".into());
        };
        let servers: Vec<&NodeFacts> = nodes.iter().filter(|n| n.is_server()).collect();
        if servers.is_empty() {
            return Datastore::Unknown("no server Node was read".into());
        }
        let etcd_annotation = |n: &NodeFacts| {
            n.annotations
                .keys()
                .any(|k| k.starts_with(&format!("etcd.{}.cattle.io/", distro.prog())))
        };
        if servers
            .iter()
            .any(|n| n.has_etcd_role() || etcd_annotation(n))
        {
            return Datastore::EmbeddedEtcd;
        }
        let args: Vec<_> = servers
            .iter()
            .filter_map(|n| n.node_args(distro).and_then(Result::ok))
            .collect();
        if args.iter().any(|a| a.value("datastore-endpoint").is_some()) {
            return Datastore::ExternalSql;
        }
        if args.iter().any(|a| a.enabled("cluster-init")) {
            return Datastore::EmbeddedEtcd;
        }
        // sqlite is one server's file: more servers without etcd share an external datastore.
        if servers.len() > 1 {
            return Datastore::ExternalSql;
        }
        if args.is_empty() {
            return Datastore::Unknown(format!(
                "the server has no etcd role and its {}.io/node-args annotation was not read, so sqlite \
                 cannot be told from an external datastore",
                distro.prog()
            ));
        }
        Datastore::Sqlite
    }

    /// Whether the servers elect leaders (the `<prog>` lock); `None`: cannot be told.
    pub(crate) fn elects_leaders(&self) -> Option<bool> {
        match self {
            Datastore::Sqlite => Some(false),
            Datastore::EmbeddedEtcd | Datastore::ExternalSql => Some(true),
            Datastore::Unknown(_) => None,
        }
    }

    /// As the summary line says it.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Datastore::EmbeddedEtcd => "embedded etcd",
            Datastore::Sqlite => "sqlite: no leader election, no etcd snapshots",
            Datastore::ExternalSql => "external datastore",
            Datastore::Unknown(_) => "datastore not known",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn server(name: &str, labels: &[&str], annotations: &[(&str, &str)]) -> NodeFacts {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|r| (format!("node-role.kubernetes.io/{r}"), "true".to_string()))
            .collect();
        let annotations: BTreeMap<String, String> = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
        }))
        .unwrap();
        NodeFacts::from_api(&node)
    }

    const ARGS: &str = "k3s.io/node-args";

    #[test]
    fn each_datastore_is_told_from_what_the_servers_show() {
        let k3s = Distro::K3s;
        let sqlite = [server(
            "s1",
            &["control-plane", "master"],
            &[(ARGS, r#"["server"]"#)],
        )];
        assert_eq!(Datastore::of(Some(&sqlite), k3s), Datastore::Sqlite);
        assert_eq!(Datastore::Sqlite.elects_leaders(), Some(false));

        let etcd = [server(
            "s1",
            &["control-plane", "etcd"],
            &[(ARGS, r#"["server"]"#)],
        )];
        assert_eq!(Datastore::of(Some(&etcd), k3s), Datastore::EmbeddedEtcd);
        let annotated = [server(
            "s1",
            &["control-plane"],
            &[("etcd.k3s.cattle.io/node-name", "s1-x")],
        )];
        assert_eq!(
            Datastore::of(Some(&annotated), k3s),
            Datastore::EmbeddedEtcd
        );
        let init = [server(
            "s1",
            &["control-plane"],
            &[(ARGS, r#"["server","--cluster-init"]"#)],
        )];
        assert_eq!(Datastore::of(Some(&init), k3s), Datastore::EmbeddedEtcd);

        let external = [server(
            "s1",
            &["control-plane"],
            &[(ARGS, r#"["server","--datastore-endpoint","********"]"#)],
        )];
        assert_eq!(Datastore::of(Some(&external), k3s), Datastore::ExternalSql);
        let two = [
            server("s1", &["control-plane"], &[]),
            server("s2", &["control-plane"], &[]),
        ];
        assert_eq!(Datastore::of(Some(&two), k3s), Datastore::ExternalSql);

        let no_args = [server("s1", &["control-plane"], &[])];
        assert!(matches!(
            Datastore::of(Some(&no_args), k3s),
            Datastore::Unknown(_)
        ));
        assert_eq!(Datastore::of(Some(&no_args), k3s).elects_leaders(), None);
        assert!(matches!(Datastore::of(None, k3s), Datastore::Unknown(_)));
    }
}
