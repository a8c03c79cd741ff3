//! Getting objects: from a live API server (`live`) or from `kubectl get -o yaml|json`
//! output (`dump`). Both fill the same `ClusterState`, which the rest of the tool reads.

pub mod bundle;
pub mod connect;
pub mod dump;
pub mod live;
pub mod narrator;
pub mod rancher;
pub mod watch;

pub use self::live::read_error::{ReadError, ReadFailureKind};
pub use crate::model::cluster_state::{ClusterState, Origin};
