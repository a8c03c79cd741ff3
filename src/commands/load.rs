//! Getting a `ClusterState` for a command: from `--from-file` or from the cluster, with the
//! distro and the `now` the verdicts use.

use jiff::Timestamp;

use super::Ui;
use crate::cli::{DistroChoice, GlobalArgs};
use crate::cluster::connect::{ConnectOptions, connect};
use crate::cluster::{ClusterState, ReadError, dump, live};
use crate::distro::Distro;
use crate::exit::Failure;
use crate::report::{Now, NowSource};

pub struct Loaded {
    pub state: ClusterState,
    pub distro: Distro,
    pub now: Now,
}

pub fn load_lease_state(global: &GlobalArgs, ui: &Ui) -> Result<Loaded, Failure> {
    let explicit = match global.distro {
        DistroChoice::Auto => None,
        DistroChoice::K3s => Some(Distro::K3s),
        DistroChoice::Rke2 => Some(Distro::Rke2),
    };
    let (state, distro) = if global.from_file.is_empty() {
        read_live(global, explicit, ui)?
    } else {
        let state = dump::read_dump(&global.from_file)?;
        let distro = explicit.or_else(|| state.detect_distro());
        (state, distro)
    };
    for note in &state.notes {
        ui.note(&format!("note: {note}"));
    }
    let distro = distro.unwrap_or_else(|| {
        ui.note("note: could not tell k3s from RKE2 (no k3s/rke2 locks, no k3s/RKE2 node versions); assuming k3s, use --distro to choose");
        Distro::K3s
    });
    let now = match (global.now, state.origin.is_dump(), state.newest_timestamp) {
        (Some(time), _, _) => Now {
            time,
            source: NowSource::Flag,
        },
        (None, true, Some(time)) => Now {
            time,
            source: NowSource::NewestInDump,
        },
        _ => Now {
            time: Timestamp::now(),
            source: NowSource::LocalClock,
        },
    };
    Ok(Loaded { state, distro, now })
}

fn read_live(
    global: &GlobalArgs,
    explicit: Option<Distro>,
    ui: &Ui,
) -> Result<(ClusterState, Option<Distro>), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ReadError::new(format!("cannot start the async runtime: {e}")))?;
    let opts = ConnectOptions {
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
        request_timeout: global.request_timeout.0,
    };
    let trace = |line: &str| ui.trace(line);
    let result = runtime.block_on(async {
        let conn = connect(&opts).await?;
        ui.trace(&format!("reading from {}", conn.server));
        live::read_lease_state(&conn, explicit, &trace).await
    })?;
    Ok(result)
}
