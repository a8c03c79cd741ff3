//! The clusters a fleet reads, and reading one: a kubeconfig context with its own client, or a
//! cluster Rancher manages, reached through Rancher's proxy on the Rancher's one client
//! (its credentials resolved once) and compared with Rancher's records read once for all of
//! them.

use kube::config::Kubeconfig;

use super::load::{Loaded, read_live_quietly};
use crate::diagnose::finding::FailOn;
use crate::diagnose::fleet::{FleetEntry, FleetMember};
use crate::exit::Failure;
use crate::input::connect::context_selection::{ContextSelection, select_contexts};
use crate::input::connect::{
    ConnectOptions, Connection, connect_context, find_kubeconfig, server_of,
};
use crate::input::live::Trace;
use crate::input::rancher::rancher_fleet::{RancherMember, rancher_members};
use crate::input::{ReadError, ReadFailureKind};
use crate::model::rancher::view::RancherView;
use crate::render::fleet::MemberWriter;
use crate::settings::{FleetSelection, Settings};

/// What one command reads and concludes per cluster.
pub(crate) struct FleetCommand<'a, R> {
    /// Read the snapshot objects too (`check`), not only the lease state (`leases`).
    pub snapshots: bool,
    pub fail_on: FailOn,
    pub analyse: &'a dyn Fn(Loaded) -> R,
    pub write_member: MemberWriter<'a, R>,
}

/// What a fleet reads: the contexts of one kubeconfig, or the clusters of one Rancher.
pub(super) enum Members {
    Contexts {
        kubeconfig: Box<Kubeconfig>,
        origin: String,
        names: Vec<String>,
    },
    Rancher {
        local: String,
        members: Vec<RancherMember>,
    },
}

impl Members {
    pub(super) fn len(&self) -> usize {
        match self {
            Members::Contexts { names, .. } => names.len(),
            Members::Rancher { members, .. } => members.len(),
        }
    }

    /// Where the members come from, for `-v`.
    pub(super) fn origin(&self) -> String {
        match self {
            Members::Contexts { origin, names, .. } => {
                format!("{} contexts of {origin}", names.len())
            }
            Members::Rancher { local, members } => {
                format!("{} clusters Rancher manages ({local})", members.len())
            }
        }
    }

    /// The server each member's suggested commands name with `--server`, beside the
    /// Rancher context (`None` for a kubeconfig context, named by `--context` alone).
    pub(super) fn server_for(&self, name: &str) -> Option<&str> {
        match self {
            Members::Contexts { .. } => None,
            Members::Rancher { members, .. } => members
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.server.as_str()),
        }
    }
}

/// The members `fleet` selects; a Rancher fleet also reads the management cluster (once).
pub(super) async fn select(
    settings: &Settings,
    fleet: &FleetSelection,
    with_records: bool,
    trace: Trace<'_>,
) -> Result<Members, Failure> {
    if let Some(pattern) = &fleet.rancher_clusters {
        let base = rancher_context(settings, fleet);
        let (local, members) =
            rancher_members(&base, pattern, with_records, fleet.parallel, trace).await?;
        return Ok(Members::Rancher { local, members });
    }
    let (kubeconfig, origin) = find_kubeconfig(fleet.kubeconfig.as_deref())?.ok_or_else(|| {
        Failure::Read(ReadError::new(
            "selecting contexts needs a kubeconfig and none was found (no --kubeconfig, KUBECONFIG unset, \
             no ~/.kube/config); pass --kubeconfig FILE",
        ))
    })?;
    let available: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let names = select_contexts(
        &available,
        ContextSelection {
            all: fleet.all_contexts,
            pattern: fleet.pattern.as_ref(),
            names: &fleet.names,
        },
        &origin,
    )?;
    Ok(Members::Contexts {
        kubeconfig: Box::new(kubeconfig),
        origin,
        names,
    })
}

/// How a Rancher fleet connects: the Rancher context (`--rancher-context`, else `--context`,
/// else the current one) with this run's kubeconfig and timeout.
pub(super) fn rancher_context(settings: &Settings, fleet: &FleetSelection) -> ConnectOptions {
    ConnectOptions {
        kubeconfig: fleet.kubeconfig.clone(),
        context: settings
            .rancher
            .context
            .clone()
            .or_else(|| fleet.names.first().cloned()),
        request_timeout: fleet.request_timeout,
        overrides: Default::default(),
    }
}

/// Reads and judges member `index`. A failure becomes the entry's outcome, never the run's:
/// the other clusters still get their verdict.
pub(super) async fn read_one<R: FleetMember>(
    members: &Members,
    index: usize,
    settings: &Settings,
    fleet: &FleetSelection,
    command: &FleetCommand<'_, R>,
    trace: Trace<'_>,
) -> (FleetEntry<R>, Vec<String>) {
    match members {
        Members::Contexts {
            kubeconfig,
            origin,
            names,
        } => {
            let context = names[index].as_str();
            let server = server_of(kubeconfig, context).unwrap_or_default();
            let conn = connect_context(kubeconfig, origin, context, fleet.request_timeout).await;
            judge(context, server, conn, None, settings, command, trace).await
        }
        Members::Rancher { members, .. } => {
            let member = &members[index];
            if let Some(why) = &member.disconnected {
                let mut error = ReadError::new(format!("unreachable (Rancher says: {why})"));
                error.kind = ReadFailureKind::Unreachable;
                return (
                    FleetEntry::unreadable(
                        member.name.clone(),
                        member.server.clone(),
                        &(&error).into(),
                    ),
                    Vec::new(),
                );
            }
            let view = member.rancher.clone().map(|side| match side {
                Ok(state) => RancherView::Read(Box::new(state)),
                Err(reason) => RancherView::NotChecked { reason },
            });
            let conn = match &member.prepared {
                Ok(prepared) => member.pool.connect(prepared, fleet.cluster_timeout),
                Err(e) => Err(e.clone()),
            };
            judge(
                &member.name,
                member.server.clone(),
                conn,
                view,
                settings,
                command,
                trace,
            )
            .await
        }
    }
}

async fn judge<R: FleetMember>(
    name: &str,
    server: String,
    conn: Result<Connection, ReadError>,
    rancher: Option<RancherView>,
    settings: &Settings,
    command: &FleetCommand<'_, R>,
    trace: Trace<'_>,
) -> (FleetEntry<R>, Vec<String>) {
    let conn = match conn {
        Ok(conn) => conn,
        Err(e) => {
            return (
                FleetEntry::unreadable(name.into(), server, &(&e).into()),
                Vec::new(),
            );
        }
    };
    let trace = |line: &str| trace(&format!("{name}: {line}"));
    match read_live_quietly(&conn, settings.judging, command.snapshots, &trace).await {
        Ok((mut loaded, notes)) => {
            loaded.state.rancher = rancher;
            (
                FleetEntry::checked(name.into(), conn.server, (command.analyse)(loaded)),
                notes,
            )
        }
        Err(failure) => {
            let error = match failure {
                Failure::Read(e) => e,
                // A --distro this cluster contradicts: its verdict would be wrong, so none.
                other => ReadError::new(other.to_string()),
            };
            (
                FleetEntry::unreadable(name.into(), conn.server, &(&error).into()),
                Vec::new(),
            )
        }
    }
}
