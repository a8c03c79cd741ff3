//! The servers' metrics of a dump (`metrics/apiserver/<node>.txt`, `metrics/etcd/<node>.txt`)
//! as each server's reading, one per node. A dump without them says how to add them: the
//! datastore check is then not checked, never healthy.

use std::collections::BTreeMap;

use crate::input::bundle::metrics_files::{MetricsFile, MetricsRole};
use crate::input::metrics::scrape_reader::read_scrape;
use crate::model::collected::Collected;
use crate::model::dump_manifest::CONNECTION_STEM;
use crate::model::server_metrics::{DatastoreScrape, ServerMetrics};

/// How a hand-made dump adds a server's metrics.
pub(crate) const ADD_METRICS: &str = "add each server's as metrics/apiserver/<node>.txt (kubectl get --raw \
     /metrics --server https://<server ip>:6443 > metrics/apiserver/<node>.txt), or write the dump with k3sdoctor dump";

pub(super) fn server_metrics(files: Vec<MetricsFile>) -> Collected<Vec<ServerMetrics>> {
    if files.is_empty() {
        return Collected::NotInDump(format!("the dump holds no server metrics; {ADD_METRICS}"));
    }
    type Reads = (
        Option<(String, Result<DatastoreScrape, String>)>,
        Option<Result<DatastoreScrape, String>>,
    );
    let mut by_node: BTreeMap<String, Reads> = BTreeMap::new();
    for file in files {
        let read = read_scrape(&file.bytes).map_err(|e| format!("{}: {e}", file.name));
        let entry = by_node.entry(file.node).or_default();
        match file.role {
            MetricsRole::Apiserver => entry.0 = Some((file.name, read)),
            MetricsRole::Etcd => entry.1 = Some(read),
        }
    }
    Collected::Read(
        by_node
            .into_iter()
            .map(|(node, (apiserver, etcd))| {
                let (from, apiserver) = match apiserver {
                    Some((name, read)) => (name, read),
                    None => (
                        format!("metrics/etcd/{node}.txt"),
                        Err(format!("no metrics/apiserver/{node}.txt in the dump")),
                    ),
                };
                let behind_connection = node == CONNECTION_STEM;
                ServerMetrics {
                    // The server behind the dump's connection, whichever it was.
                    from: if behind_connection {
                        "the connection the dump was taken through".into()
                    } else {
                        from
                    },
                    node: (!behind_connection).then_some(node),
                    apiserver,
                    etcd,
                }
            })
            .collect(),
    )
}
