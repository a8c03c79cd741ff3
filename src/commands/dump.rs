//! `k3sdoctor dump [PATH]`: everything `check` reads, written into a folder or a `.tar.gz`
//! for `--from-file` later or on another machine. Nothing is written to the cluster.

mod contents;
mod target;

use self::contents::{DumpError, write_dump};
use self::target::DumpTarget;
use super::Ui;
use super::load::{connect_live, runtime};
use super::termination::Termination;
use crate::exit::{Exit, Failure};
use crate::input::ReadError;
use crate::settings::{DumpOptions, Settings, Source};

pub(crate) fn run(settings: &Settings, opts: &DumpOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    let Source::Live(options) = &settings.source else {
        return Err(Failure::Refused(
            "dump reads a live cluster, and --from-file already names a dump: pass it to check \
             (k3sdoctor --from-file PATH check)"
                .into(),
        )
        .into());
    };
    let now = jiff::Timestamp::now();
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let target = DumpTarget::choose(opts.path.as_deref(), &stamp)?;
    let staging = target.stage()?;
    let manifest = runtime()?.block_on(async {
        let mut termination = Termination::catch();
        let conn = connect_live(options, ui).await?;
        let trace = |line: &str| ui.trace(line);
        let taken_at = now.to_string();
        tokio::select! {
            written = write_dump(&conn, staging.path(), &taken_at, &trace) => match written {
                Ok(manifest) => Ok(manifest),
                Err(DumpError::Read(e)) => Err(Failure::Read(e)),
                Err(DumpError::Write(e)) => Err(Failure::Refused(format!(
                    "dump: cannot write into {}: {e}; nothing was written (k3sdoctor dump PATH elsewhere)",
                    target.path().display()
                ))),
            },
            () = termination.received() => Err(Failure::Read(ReadError::new(format!(
                "dump interrupted: nothing was written to {}",
                target.path().display()
            )))),
        }
    })?;
    target.finish(staging)?;
    let objects: usize = manifest.read.iter().map(|k| k.objects).sum();
    let metrics = manifest
        .metrics
        .iter()
        .filter(|m| m.apiserver.is_ok())
        .count();
    ui.note(&format!(
        "wrote {}: {objects} objects of {} kinds, the metrics of {metrics} server(s){}",
        target.path().display(),
        manifest.read.len(),
        if manifest.refused.is_empty() {
            String::new()
        } else {
            format!(
                "; refused: {} (manifest.json says why)",
                manifest
                    .refused
                    .iter()
                    .map(|r| r.kind.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
    Ok(Exit::Healthy)
}
