//! `k3sdoctor leases --watch`: the table (or a `LeaseReport`), then one line (or one
//! `LeaseChange` document) per change, until SIGINT or SIGTERM or until nobody reads stdout.

use std::io::Write as _;
use std::time::Duration;

use jiff::Timestamp;

use super::Ui;
use super::load::{connect_live, read_live, runtime};
use super::termination::Termination;
use crate::diagnose::leases::lease_changes::lease_changes;
use crate::diagnose::leases::{LeaseAnalysis, analyse_leases};
use crate::exit::Exit;
use crate::input::connect::ConnectOptions;
use crate::input::watch::{ClusterWatch, WatchNews, WatchScope};
use crate::render::lease_changes::{LeaseChangeDocument, write_document, write_line};
use crate::render::{self, OutputFormat};
use crate::report::LeaseReport;
use crate::settings::LeasesOptions;
use crate::settings::Settings;

/// Expiry happens without any event: the in-memory state is judged again this often (no
/// request is made).
const REJUDGE_EVERY: Duration = Duration::from_secs(1);

pub(crate) fn run(settings: &Settings, opts: &LeasesOptions, ui: &mut Ui) -> anyhow::Result<Exit> {
    let options = settings.live("--watch")?;
    runtime()?.block_on(watch(settings, options, opts, ui))
}

async fn watch(
    settings: &Settings,
    options: &ConnectOptions,
    opts: &LeasesOptions,
    ui: &mut Ui,
) -> anyhow::Result<Exit> {
    let mut termination = Termination::catch();
    let conn = connect_live(options, ui).await?;
    let loaded = read_live(&conn, settings.judging, ui).await?;
    // Freshness is judged on the API server's clock (when it sent one), carried forward by ours.
    let offset = loaded.now.time.duration_since(Timestamp::now());
    let clock = move || {
        let local = Timestamp::now();
        local.checked_add(offset).unwrap_or(local)
    };
    let mut last = analyse_leases(&loaded.state, loaded.distro, loaded.now.time);
    let report = LeaseReport::new(loaded.now, last.clone()).failing_on(opts.fail_on);
    match settings.output.format {
        format if format.is_structured() => write_document(&mut ui.out, format, &report)?,
        _ if ui.quiet => {}
        format => {
            ui.write_table_report(|out, style| {
                render::leases::write_table(out, &report, format == OutputFormat::Wide, style)?;
                // The change lines follow: set off by a blank line where prose surrounds them.
                out.gap()
            })?;
            ui.out.flush()?;
        }
    }

    let scope = WatchScope {
        distros: vec![loaded.distro],
        snapshots: false,
    };
    let mut watch = ClusterWatch::start(&conn, &scope);
    let mut rejudge = tokio::time::interval(REJUDGE_EVERY);
    let mut last_failure: Option<String> = None;
    loop {
        let judge = tokio::select! {
            () = termination.received() => break,
            news = watch.next() => match news {
                WatchNews::Changed => {
                    last_failure = None;
                    true
                }
                // Expiry is judged every second anyway; a renewal prints nothing.
                WatchNews::Unchanged | WatchNews::Renewed => false,
                WatchNews::Failed(failure) => {
                    let line = failure.line;
                    // The watcher retries with backoff; one line per distinct failure is enough.
                    if last_failure.as_ref() != Some(&line) {
                        ui.note(&format!("note: {line}"));
                        last_failure = Some(line);
                    }
                    false
                }
            },
            _ = rejudge.tick() => true,
        };
        if !judge || !watch.synced() {
            continue;
        }
        let now = clock();
        let next = analyse_leases(&watch.state(), loaded.distro, now);
        for change in lease_changes(&last, &next, now) {
            match settings.output.format {
                format if format.is_structured() => {
                    write_document(&mut ui.out, format, &LeaseChangeDocument::new(&change))?;
                }
                _ => write_line(&mut ui.out, &change)?,
            }
        }
        last = next;
        if ui.reader_gone.as_ref().is_some_and(|g| g.is_gone()) {
            // `leases --watch | head -3`: nobody reads what would follow.
            break;
        }
    }
    Ok(exit_for(&last, opts))
}

/// Interrupted or terminated, the exit code says what the locks looked like last.
fn exit_for(last: &LeaseAnalysis, opts: &LeasesOptions) -> Exit {
    if opts.fail_on.is_failure(&last.findings) {
        Exit::Findings
    } else {
        Exit::Healthy
    }
}
