//! Getting a `ClusterState` for a command: from `--from-file` or from the cluster, with the
//! distro and the `now` the verdicts use.

use jiff::Timestamp;

use crate::distro::Distro;
use crate::exit::Failure;
use crate::input::connect::{ConnectOptions, Connection, connect};
use crate::input::dump::dump_coverage::{Primary, lacking};
use crate::input::limits::BundleLimits;
use crate::input::narrator::Narrator;
use crate::input::rancher::rancher_dump::read_rancher_dump;
use crate::input::rancher::rancher_live::read_rancher_view;
use crate::input::rancher::{RancherChoice, RancherView};
use crate::input::{ClusterState, ReadError, dump, live};
use crate::model::bundle_provenance as provenance;
use crate::model::kinds::Kind;
use crate::report::{Now, NowSource};
use crate::settings::{Judging, Source};

pub(crate) struct Loaded {
    pub state: ClusterState,
    pub distro: Distro,
    pub now: Now,
}

/// How much of the cluster a command reads: a dump is read whole whatever the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    /// Nodes, Leases and the lock ConfigMaps.
    Locks,
    /// Everything the snapshot commands need: the lock state (for the writer's version and
    /// the root cause) plus ETCDSnapshotFiles and the snapshot ConfigMaps.
    Snapshots,
    /// What `check` reads: the snapshot state plus the `kubernetes` Service's Endpoints and
    /// EndpointSlices (a dump carries whatever it holds of them).
    Everything,
}

pub(super) fn load_lease_state(
    source: &Source,
    judging: Judging,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    load(source, judging, Reach::Locks, None, tell)
}

pub(super) fn load_snapshot_state(
    source: &Source,
    judging: Judging,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    load(source, judging, Reach::Snapshots, None, tell)
}

/// What `snapshots list|diff` read, with Rancher's side as `check` reads it.
pub(super) fn load_snapshot_state_with_rancher(
    source: &Source,
    judging: Judging,
    rancher: &RancherChoice,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    load(source, judging, Reach::Snapshots, Some(rancher), tell)
}

/// Everything `check` reads, with Rancher's side where `rancher` (or the proxy URL) says.
pub(super) fn load_check_state(
    source: &Source,
    judging: Judging,
    rancher: &RancherChoice,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    load(source, judging, Reach::Everything, Some(rancher), tell)
}

fn load(
    source: &Source,
    judging: Judging,
    reach: Reach,
    rancher: Option<&RancherChoice>,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    let options = match source {
        Source::Files { paths, limits } => {
            let mut state = dump::read_dump(paths, *limits)?;
            tell.trace(&dump_summary(paths, &state));
            if let Some(choice) = rancher.filter(|c| !c.files.is_empty()) {
                state.rancher = Some(rancher_from_files(choice, *limits, &state)?);
            }
            let distro = judging.distro.or_else(|| state.detect_distro());
            return finish(judging, state, distro, tell);
        }
        Source::Live(options) => options,
    };
    runtime()?.block_on(async {
        let conn = connect_live(options, tell).await?;
        let mut loaded = read_live(&conn, judging, tell).await?;
        let trace = |line: &str| tell.trace(line);
        match reach {
            Reach::Locks => {}
            Reach::Snapshots => {
                live::read_snapshot_objects(&conn, loaded.distro, &mut loaded.state, &trace).await?
            }
            Reach::Everything => {
                read_check_objects(&conn, loaded.distro, &mut loaded.state, &trace).await?
            }
        }
        if let Some(choice) = rancher {
            loaded.state.rancher =
                read_rancher_view(options, &conn, choice, &loaded.state, &trace).await?;
        }
        Ok(loaded)
    })
}

/// `--rancher-from-file`: the management objects, narrowed to the downstream cluster. A
/// cluster that cannot be picked is refused (exit 2): the flags must name it.
fn rancher_from_files(
    choice: &RancherChoice,
    limits: BundleLimits,
    down: &ClusterState,
) -> Result<RancherView, Failure> {
    let objects = read_rancher_dump(&choice.files, limits)?;
    objects
        .select(choice.cluster.as_deref(), down)
        .map(|state| RancherView::Read(Box::new(state)))
        .map_err(|why| Failure::Refused(format!("--rancher-from-file {} {why}", objects.source)))
}

/// `-v` on a dump: what was found in which files (the dump's counterpart of the request lines).
fn dump_summary(paths: &[std::path::PathBuf], state: &ClusterState) -> String {
    let count = |n: Option<usize>, what: &str| match n {
        Some(n) => crate::render::plural(n, what),
        None => format!("no {what}s"),
    };
    let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "read {}: {}, {}, {}, {}",
        files.join(", "),
        count(state.leases.as_ref().map(Vec::len), Kind::Lease.name()),
        count(state.nodes.as_ref().map(Vec::len), Kind::Node.name()),
        count(
            state.configmaps.as_ref().map(Vec::len),
            "lock or snapshot ConfigMap"
        ),
        count(
            state.snapshot_files.as_ref().map(Vec::len),
            Kind::SnapshotFile.name()
        ),
    )
}

/// A dump without any of the command's primary objects is unreadable input (exit 3), not a
/// healthy cluster.
pub(super) fn require_primary(loaded: &Loaded, primary: Primary) -> Result<(), Failure> {
    match lacking(&loaded.state, primary) {
        Some(line) => Err(Failure::Read(ReadError::new(line))),
        None => Ok(()),
    }
}

pub(super) async fn read_live_snapshots(
    conn: &Connection,
    judging: Judging,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    let mut loaded = read_live(conn, judging, tell).await?;
    let trace = |line: &str| tell.trace(line);
    live::read_snapshot_objects(conn, loaded.distro, &mut loaded.state, &trace).await?;
    Ok(loaded)
}

/// A single-threaded runtime: k3sdoctor makes a handful of requests, mostly concurrently.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::Read(ReadError::new(format!(
                "cannot start the async runtime: {e}"
            )))
        })
}

pub(super) async fn connect_live(
    options: &ConnectOptions,
    tell: &dyn Narrator,
) -> Result<Connection, Failure> {
    let conn = connect(options).await?;
    if let Some(notice) = &conn.notice {
        tell.note(notice);
    }
    match &conn.proxy {
        Some(proxy) => tell.trace(&format!(
            "reading from {} through proxy {proxy}",
            conn.server
        )),
        None => tell.trace(&format!("reading from {}", conn.server)),
    }
    tell.watch_requests(&conn);
    Ok(conn)
}

pub(super) async fn read_live(
    conn: &Connection,
    judging: Judging,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    let trace = |line: &str| tell.trace(line);
    let (state, distro) = live::read_lease_state(conn, judging.distro, &trace).await?;
    finish(judging, state, distro, tell)
}

/// [`read_live`] and the kubelets' heartbeats, for the gates of a lock move.
pub(super) async fn read_live_for_a_move(
    conn: &Connection,
    judging: Judging,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    let trace = |line: &str| tell.trace(line);
    let mut loaded = read_live(conn, judging, tell).await?;
    let heartbeats = live::read_node_heartbeats(conn, &trace).await?;
    live::fill_heartbeats(heartbeats, &mut loaded.state);
    Ok(loaded)
}

/// A fleet member's read: the lease state, and the snapshot objects and the `kubernetes`
/// Endpoints (everything `check` reads) when `snapshots`; notes
/// are returned, not printed. Requests are traced through `trace`.
pub(super) async fn read_live_quietly(
    conn: &Connection,
    judging: Judging,
    snapshots: bool,
    trace: live::Trace<'_>,
) -> Result<(Loaded, Vec<String>), Failure> {
    let (state, distro) = live::read_lease_state(conn, judging.distro, trace).await?;
    let (mut loaded, notes) = settle(judging, state, distro)?;
    if snapshots {
        read_check_objects(conn, loaded.distro, &mut loaded.state, trace).await?;
    }
    Ok((loaded, notes))
}

/// What `check` reads beyond the locks, one cluster or each of a fleet alike: the snapshot
/// objects and, beside them, the rest of the control plane.
async fn read_check_objects(
    conn: &Connection,
    distro: Distro,
    state: &mut ClusterState,
    trace: live::Trace<'_>,
) -> Result<(), ReadError> {
    // After the snapshot lists, not beside them: on HTTP/1.1 each concurrent request opens a
    // connection and TLS handshake of its own, and measured on the real API server that cost
    // more than the overlap saved (docs/performance.md, "The rest of the control plane").
    live::read_snapshot_objects(conn, distro, state, trace).await?;
    let nodes = state.nodes().to_vec();
    live::ControlPlaneReads::read(conn, &nodes, trace)
        .await?
        .fill(state);
    Ok(())
}

/// A local clock far from the API server's explains odd ages in other tools' output.
fn skew_note(server: Timestamp) -> Option<String> {
    let skew = Timestamp::now().duration_since(server);
    (skew.abs() > jiff::SignedDuration::from_secs(30)).then(|| {
        format!(
            "note: this machine's clock is {} {} the API server's; ages are judged on the API server's clock",
            crate::age::short(skew.abs()),
            if skew.is_positive() { "ahead of" } else { "behind" }
        )
    })
}

fn finish(
    judging: Judging,
    state: ClusterState,
    distro: Option<Distro>,
    tell: &dyn Narrator,
) -> Result<Loaded, Failure> {
    let (loaded, notes) = settle(judging, state, distro)?;
    for bundle in &loaded.state.bundles {
        tell.note(&provenance::summary(bundle));
        for line in provenance::details(bundle) {
            tell.trace(&line);
        }
    }
    for note in notes {
        tell.note(&note);
    }
    Ok(loaded)
}

/// The distro and the `now` for what was read, and the notes worth telling the user (the
/// caller prints them: a fleet prefixes each with its context).
pub(super) fn settle(
    judging: Judging,
    state: ClusterState,
    distro: Option<Distro>,
) -> Result<(Loaded, Vec<String>), Failure> {
    // Every name the tool derives (locks, ConfigMaps, annotations) follows the distro; the wrong
    // one would report healthy locks as missing or write the wrong objects.
    if let Some(line) = judging.distro.and_then(|d| state.distro_contradiction(d)) {
        return Err(Failure::Refused(line));
    }
    let mut notes: Vec<String> = state.notes.iter().map(|n| format!("note: {n}")).collect();
    let distro = distro.unwrap_or_else(|| {
        notes.push(
            "note: could not tell k3s from RKE2 (no k3s/rke2 locks, no k3s/RKE2 node versions); assuming k3s, \
             use --distro to choose"
                .to_string(),
        );
        Distro::K3s
    });
    // Only a bundle has a collection time, and `--now` wins over it below.
    let collected = state.collected_at();
    let now = match (
        judging.now,
        collected,
        state.origin.is_dump(),
        state.newest_timestamp,
        state.server_time,
    ) {
        (Some(time), ..) => Now {
            time,
            source: NowSource::Flag,
        },
        (None, Some((time, from)), _, newest, _) => {
            notes.extend(collection_time_notes(time, &from, newest));
            Now {
                time,
                source: NowSource::BundleCollectionTime,
            }
        }
        (None, None, true, Some(time), _) => Now {
            time,
            source: NowSource::NewestInDump,
        },
        (None, None, false, _, Some(time)) => {
            notes.extend(skew_note(time));
            Now {
                time,
                source: NowSource::ApiServerClock,
            }
        }
        _ => Now {
            time: Timestamp::now(),
            source: NowSource::LocalClock,
        },
    };
    Ok((Loaded { state, distro, now }, notes))
}

/// Which `now` a bundle is judged at, and a word when it holds times well after that (a
/// collection that took minutes, or a clock running fast).
fn collection_time_notes(time: Timestamp, from: &str, newest: Option<Timestamp>) -> Vec<String> {
    let mut notes = vec![format!(
        "note: freshness is judged as of {}, when the support bundle was collected ({from}); override with --now",
        time.strftime("%Y-%m-%dT%H:%M:%SZ")
    )];
    if let Some(newest) = newest.filter(|n| n.duration_since(time).as_secs() > 60) {
        notes.push(format!(
            "note: the bundle holds times up to {}, after its recorded collection time (a slow collection, \
             or a clock that runs fast)",
            newest.strftime("%Y-%m-%dT%H:%M:%SZ")
        ));
    }
    notes
}
