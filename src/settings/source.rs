//! Where a run's cluster state comes from, and what it is judged with.

use std::path::PathBuf;

use jiff::Timestamp;

use crate::cli::DistroChoice;
use crate::distro::Distro;
use crate::input::connect::ConnectOptions;
use crate::input::limits::BundleLimits;

/// A live API server, or the dumps, bundles and pasted tables `--from-file` names.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Live(ConnectOptions),
    Files {
        paths: Vec<PathBuf>,
        limits: BundleLimits,
    },
}

/// What the verdicts are judged with besides the objects: `--now` and `--distro`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Judging {
    pub now: Option<Timestamp>,
    /// `None` for `--distro auto`: told from the objects.
    pub distro: Option<Distro>,
}

pub(super) fn explicit_distro(choice: DistroChoice) -> Option<Distro> {
    match choice {
        DistroChoice::Auto => None,
        DistroChoice::K3s => Some(Distro::K3s),
        DistroChoice::Rke2 => Some(Distro::Rke2),
    }
}
