//! Why a watch failed, in the words and labels the rest of the tool uses: the one-shot reads'
//! messages (`ReadError::from_kube`) and a reason short enough for a metric label.

use kube::runtime::watcher;

use crate::input::ReadError;
use crate::model::kinds::Kind;

/// Why a watch failed, as a metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchFailureReason {
    Forbidden,
    Unauthorized,
    NotFound,
    Other,
}

impl WatchFailureReason {
    pub(crate) fn label(self) -> &'static str {
        match self {
            WatchFailureReason::Forbidden => "forbidden",
            WatchFailureReason::Unauthorized => "unauthorized",
            WatchFailureReason::NotFound => "not_found",
            WatchFailureReason::Other => "other",
        }
    }
}

/// One failed attempt of one watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WatchFailure {
    /// The watch's name, e.g. `leases`, `configmaps/k3s-etcd`, `etcdsnapshotfiles`.
    pub resource: String,
    pub reason: WatchFailureReason,
    /// One line for a person, ending in `; retrying`.
    pub line: String,
}

/// The verb phrase the one-shot reads use for the same objects.
pub(super) fn action(resource: &str) -> String {
    match resource.split_once('/') {
        Some((_, name)) => format!("watch configmap kube-system/{name}"),
        None if resource == "leases" => "watch leases in kube-system".into(),
        None if resource == Kind::SnapshotFile.row().plural => {
            format!("watch {}", Kind::SnapshotFile.row().resource())
        }
        None => format!("watch {resource}"),
    }
}

pub(super) fn reason(error: &watcher::Error) -> WatchFailureReason {
    let code = match error {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s.code,
        watcher::Error::WatchError(s) => s.code,
        _ => 0,
    };
    match code {
        401 => WatchFailureReason::Unauthorized,
        403 => WatchFailureReason::Forbidden,
        404 => WatchFailureReason::NotFound,
        _ => WatchFailureReason::Other,
    }
}

/// A watch error in the words the one-shot reads use (`ReadError::from_kube`).
pub(super) fn describe(error: &watcher::Error, action: &str, server: &str) -> String {
    match error {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => ReadError::from_kube(e, action, server).message,
        watcher::Error::WatchError(status) => format!(
            "{action}: the API server ended the watch: {} ({})",
            status.message, status.code
        ),
        watcher::Error::NoResourceVersion => {
            format!("{action}: {server} sent no resourceVersion to resume from")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_failures_are_named_as_the_reads_name_them() {
        assert_eq!(action("leases"), "watch leases in kube-system");
        assert_eq!(
            action("configmaps/k3s-etcd"),
            "watch configmap kube-system/k3s-etcd"
        );
        assert_eq!(
            action("etcdsnapshotfiles"),
            "watch etcdsnapshotfiles.k3s.cattle.io"
        );
    }

    #[test]
    fn failures_are_labelled_by_status_code() {
        let status = |code| kube::core::Status {
            code,
            ..Default::default()
        };
        let api =
            |code| watcher::Error::InitialListFailed(kube::Error::Api(Box::new(status(code))));
        assert_eq!(reason(&api(403)), WatchFailureReason::Forbidden);
        assert_eq!(reason(&api(401)), WatchFailureReason::Unauthorized);
        assert_eq!(reason(&api(404)), WatchFailureReason::NotFound);
        assert_eq!(reason(&api(500)), WatchFailureReason::Other);
        assert_eq!(
            reason(&watcher::Error::NoResourceVersion),
            WatchFailureReason::Other
        );
    }
}
