//! What goes into a dump, read and written one kind at a time: `<plural>.json` for each kind
//! of the kinds table (a typed `List`, as the API server answers it), each server's metrics
//! text, and the manifest. Objects are written as their pages arrive.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::input::ReadError;
use crate::input::connect::Connection;
use crate::input::live::raw_objects::{RawRead, read_raw, webhook_services};
use crate::input::live::server_certificates::MOST_HANDSHAKES_AT_ONCE;
use crate::input::live::server_metrics::read_servers;
use crate::input::live::{Trace, read_apiserver_endpoints};
use crate::input::metrics::scrape_reader::AnswerText;
use crate::model::dump_manifest::{
    CONNECTION_STEM, KindRead, MANIFEST_FILE, MANIFEST_KIND, Manifest, MetricsEntry, Refusal,
};
use crate::model::kinds::{KINDS, Kind};
use crate::model::node::NodeFacts;

/// Why a dump stopped: the cluster, or the disk.
pub(super) enum DumpError {
    Read(ReadError),
    Write(std::io::Error),
}

impl From<ReadError> for DumpError {
    fn from(e: ReadError) -> Self {
        DumpError::Read(e)
    }
}

impl From<std::io::Error> for DumpError {
    fn from(e: std::io::Error) -> Self {
        DumpError::Write(e)
    }
}

/// Writes everything into `folder`; the manifest last, so a folder with one is complete.
pub(super) async fn write_dump(
    conn: &Connection,
    folder: &Path,
    taken_at: &str,
    trace: Trace<'_>,
) -> Result<Manifest, DumpError> {
    let mut manifest = Manifest {
        kind: MANIFEST_KIND.into(),
        k3sdoctor_version: env!("CARGO_PKG_VERSION").into(),
        server: conn.server.clone(),
        context: conn.context.clone(),
        taken_at: taken_at.into(),
        ..Manifest::default()
    };
    let mut nodes = Vec::new();
    // The Services the webhooks name go in with their Endpoints, which come first in the table.
    let services = webhook_services(conn, trace).await?;
    for row in &KINDS {
        let file = format!("{}.json", row.plural);
        let path = folder.join(&file);
        let mut out = ListWriter::create(&path, row.api_version, row.name)?;
        let mut each = |object: Value| {
            if row.kind == Kind::Node
                && let Ok(node) = k8s_openapi::api::core::v1::Node::deserialize(&object)
            {
                nodes.push(NodeFacts::from_api(&node));
            }
            out.item(&object)
        };
        let read = read_raw(conn, row.kind, &services, &mut each, trace).await??;
        match read {
            RawRead::Read(objects) => {
                out.finish()?;
                manifest.read.push(KindRead {
                    kind: row.name.into(),
                    file,
                    objects,
                });
            }
            RawRead::Refused(action) => {
                drop(out);
                fs::remove_file(&path)?;
                manifest.refused.push(Refusal {
                    kind: row.name.into(),
                    refused: action,
                });
            }
            RawRead::NotServed => {
                drop(out);
                fs::remove_file(&path)?;
                manifest.not_served.push(row.name.into());
            }
        }
    }
    manifest.metrics = write_metrics(conn, folder, &nodes, trace).await?;
    let text = serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?;
    fs::write(folder.join(MANIFEST_FILE), text)?;
    Ok(manifest)
}

/// Each server's answers as they came, under `metrics/apiserver/` and `metrics/etcd/`.
async fn write_metrics(
    conn: &Connection,
    folder: &Path,
    nodes: &[NodeFacts],
    trace: Trace<'_>,
) -> Result<Vec<MetricsEntry>, DumpError> {
    // Without the addresses (refused, say) the Nodes' own still are read.
    let endpoints = read_apiserver_endpoints(conn, trace).await.ok();
    let published: Vec<(&str, Option<i32>)> =
        endpoints.iter().flat_map(|e| e.addresses()).collect();
    let dials = tokio::sync::Semaphore::new(MOST_HANDSHAKES_AT_ONCE);
    let reads = read_servers::<AnswerText>(conn, nodes, &published, &dials).await;
    let mut entries = Vec::new();
    for read in reads {
        let stem = read.node.clone().unwrap_or_else(|| CONNECTION_STEM.into());
        let save = |role: &str,
                    answer: Result<Vec<u8>, String>|
         -> std::io::Result<Result<String, String>> {
            let text = match answer {
                Ok(text) => text,
                Err(why) => return Ok(Err(why)),
            };
            let file = format!("metrics/{role}/{stem}.txt");
            let path = folder.join(&file);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(&path, text)?;
            Ok(Ok(file))
        };
        let apiserver = save("apiserver", read.apiserver)?;
        let etcd = match read.etcd {
            Some(answer) => Some(save("etcd", answer)?),
            None => None,
        };
        entries.push(MetricsEntry {
            server: read.node.unwrap_or(read.from),
            apiserver,
            etcd,
        });
    }
    Ok(entries)
}

/// A typed `List` written an item at a time.
struct ListWriter {
    out: BufWriter<fs::File>,
    first: bool,
}

impl ListWriter {
    fn create(path: &Path, api_version: &str, kind: &str) -> std::io::Result<ListWriter> {
        let mut out = BufWriter::new(fs::File::create(path)?);
        // The core group's lists say v1; others their own group, as the API server answers.
        write!(
            out,
            "{{\"apiVersion\":{},\"kind\":{},\"items\":[",
            Value::String(api_version.into()),
            Value::String(format!("{kind}List"))
        )?;
        Ok(ListWriter { out, first: true })
    }

    fn item(&mut self, object: &Value) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.out.write_all(b"\n")?;
        serde_json::to_writer(&mut self.out, object).map_err(std::io::Error::other)
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }
}
