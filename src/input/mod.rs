//! Getting objects: from a live API server (`live`) or from `kubectl get -o yaml|json`
//! output (`dump`). Both fill the same `ClusterState`, which the rest of the tool reads.

pub(crate) mod bundle;
pub(crate) mod connect;
pub(crate) mod dump;
pub(crate) mod files;
pub(crate) mod limits;
pub(crate) mod live;
pub(crate) mod metrics;
pub(crate) mod narrator;
pub(crate) mod rancher;
pub(crate) mod read_error;
pub(crate) mod watch;

pub(crate) use self::read_error::{ReadError, ReadFailureKind};
pub(crate) use crate::model::cluster_state::{ClusterState, Origin};
