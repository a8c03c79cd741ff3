//! Every kind of object k3sdoctor reads from a downstream cluster, declared once: its API
//! type, where it lives, which of its objects are used, the kubectl command that adds it to a
//! dump and the checks it feeds. The dump reader, the "not in dump" hints, bundle provenance,
//! finding object references and the RBAC test derive from this table, so a new kind is one
//! row here and one arm where it fills the state (the compiler finds the arm).

use crate::distro::LOCK_NAMESPACE;
use crate::version::shapes::EndpointsKind;

/// Where the apiserver addresses live: the `kubernetes` Service's namespace and name.
pub(crate) const SERVICE_NAMESPACE: &str = "default";
pub(crate) const SERVICE_NAME: &str = "kubernetes";

/// A kind k3sdoctor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Node,
    Lease,
    ConfigMap,
    SnapshotFile,
    Endpoints,
    EndpointSlice,
    Event,
    Secret,
    HelmChart,
    Job,
    Plan,
    ValidatingWebhookConfiguration,
    MutatingWebhookConfiguration,
    Service,
}

/// Which objects of a kind are used; the rest are dropped as they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Used {
    All,
    InNamespace(&'static str),
    /// Every object in one namespace, and system-upgrade-controller's in its Plans'
    /// namespaces: its `default-controller-env` ConfigMap (by name) and its Jobs (by their
    /// `upgrade.cattle.io/plan` label, which the dump reader judges where it parses them).
    AlsoUpgrades(&'static str),
    /// Kept in every namespace (an admission webhook may name a Service in any); the
    /// namespace given is where `check`'s own read of the kind looks besides.
    Everywhere(&'static str),
}

/// One row of the table.
#[derive(Debug)]
pub(crate) struct KindRow {
    pub(crate) kind: Kind,
    /// The name the API gives it, as `kind:` says it.
    pub(crate) name: &'static str,
    /// `group/version`, or `v1` for the core group.
    pub(crate) api_version: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) namespaced: bool,
    pub(crate) used: Used,
    /// Served by a CustomResourceDefinition, so collectors file it as `<plural>.<group>`.
    pub(crate) custom: bool,
    /// Support-bundle collectors hold it (Events and Secrets are read only from dumps).
    pub(crate) in_bundles: bool,
    /// The checks (as `check` names them) its objects feed.
    pub(crate) feeds: &'static [&'static str],
}

/// The table, in the order dumps and reports list kinds.
pub(crate) const KINDS: [KindRow; 14] = [
    KindRow {
        kind: Kind::Node,
        name: "Node",
        api_version: "v1",
        plural: "nodes",
        namespaced: false,
        used: Used::All,
        custom: false,
        in_bundles: true,
        feeds: &["leases", "membership", "etcd-config", "snapshot-schedule"],
    },
    KindRow {
        kind: Kind::Lease,
        name: "Lease",
        api_version: "coordination.k8s.io/v1",
        plural: "leases",
        namespaced: true,
        used: Used::InNamespace(LOCK_NAMESPACE),
        custom: false,
        in_bundles: true,
        feeds: &["leases"],
    },
    KindRow {
        kind: Kind::ConfigMap,
        name: "ConfigMap",
        api_version: "v1",
        plural: "configmaps",
        namespaced: true,
        used: Used::AlsoUpgrades(LOCK_NAMESPACE),
        custom: false,
        in_bundles: true,
        feeds: &["leases", "snapshots", "upgrade-plans"],
    },
    KindRow {
        kind: Kind::SnapshotFile,
        name: "ETCDSnapshotFile",
        api_version: "k3s.cattle.io/v1",
        plural: "etcdsnapshotfiles",
        namespaced: false,
        used: Used::All,
        custom: true,
        in_bundles: true,
        feeds: &["snapshots", "snapshot-files", "snapshot-schedule"],
    },
    KindRow {
        kind: Kind::Endpoints,
        name: "Endpoints",
        api_version: "v1",
        plural: "endpoints",
        namespaced: true,
        // The kubernetes Service's, and those of the Services the admission webhooks name.
        used: Used::Everywhere(SERVICE_NAMESPACE),
        custom: false,
        in_bundles: true,
        feeds: &["apiserver-endpoints", "admission-webhooks"],
    },
    KindRow {
        kind: Kind::EndpointSlice,
        name: "EndpointSlice",
        api_version: "discovery.k8s.io/v1",
        plural: "endpointslices",
        namespaced: true,
        used: Used::Everywhere(SERVICE_NAMESPACE),
        custom: false,
        in_bundles: true,
        feeds: &["apiserver-endpoints", "admission-webhooks"],
    },
    // `kubectl get events -A`: which are about Nodes shows only inside the object, so every
    // core/v1 Event is kept by the reader and the rest dropped when typed.
    KindRow {
        kind: Kind::Event,
        name: "Event",
        api_version: "v1",
        plural: "events",
        namespaced: true,
        used: Used::All,
        custom: false,
        in_bundles: false,
        feeds: &[],
    },
    // The node passwords and the serving certificate, metadata only.
    KindRow {
        kind: Kind::Secret,
        name: "Secret",
        api_version: "v1",
        plural: "secrets",
        namespaced: true,
        used: Used::InNamespace(LOCK_NAMESPACE),
        custom: false,
        in_bundles: false,
        feeds: &[],
    },
    // k3s's and RKE2's packaged components and their install Jobs live in kube-system.
    KindRow {
        kind: Kind::HelmChart,
        name: "HelmChart",
        api_version: "helm.cattle.io/v1",
        plural: "helmcharts",
        namespaced: true,
        used: Used::InNamespace(LOCK_NAMESPACE),
        custom: true,
        in_bundles: true,
        feeds: &["packaged-charts"],
    },
    KindRow {
        kind: Kind::Job,
        name: "Job",
        api_version: "batch/v1",
        plural: "jobs",
        namespaced: true,
        used: Used::AlsoUpgrades(LOCK_NAMESPACE),
        custom: false,
        in_bundles: true,
        feeds: &["packaged-charts", "upgrade-plans"],
    },
    // system-upgrade-controller's Plans, in whichever namespace it runs (`system-upgrade`
    // in the k3s and RKE2 docs, `cattle-system` under Rancher).
    KindRow {
        kind: Kind::Plan,
        name: "Plan",
        api_version: "upgrade.cattle.io/v1",
        plural: "plans",
        namespaced: true,
        used: Used::All,
        custom: true,
        in_bundles: true,
        feeds: &["upgrade-plans"],
    },
    // Admission webhooks in the path of the control plane's writes, and the Services they name.
    KindRow {
        kind: Kind::ValidatingWebhookConfiguration,
        name: "ValidatingWebhookConfiguration",
        api_version: "admissionregistration.k8s.io/v1",
        plural: "validatingwebhookconfigurations",
        namespaced: false,
        used: Used::All,
        custom: false,
        in_bundles: true,
        feeds: &["admission-webhooks"],
    },
    KindRow {
        kind: Kind::MutatingWebhookConfiguration,
        name: "MutatingWebhookConfiguration",
        api_version: "admissionregistration.k8s.io/v1",
        plural: "mutatingwebhookconfigurations",
        namespaced: false,
        used: Used::All,
        custom: false,
        in_bundles: true,
        feeds: &["admission-webhooks"],
    },
    KindRow {
        kind: Kind::Service,
        name: "Service",
        api_version: "v1",
        plural: "services",
        namespaced: true,
        used: Used::All,
        custom: false,
        in_bundles: true,
        feeds: &["admission-webhooks"],
    },
];

impl Kind {
    pub(crate) fn row(self) -> &'static KindRow {
        // The table lists every kind once, in declaration order.
        &KINDS[self as usize]
    }

    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    /// The kind a `kind:` names, whatever its apiVersion.
    pub(crate) fn named(name: &str) -> Option<Kind> {
        KINDS
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.kind)
    }

    /// The kind of an object that says `apiVersion` and `kind`.
    pub(crate) fn of(api_version: &str, kind: &str) -> Option<Kind> {
        KINDS
            .iter()
            .find(|row| row.name == kind && row.api_version == api_version)
            .map(|row| row.kind)
    }
}

/// The object k3s's apiaddresses controller follows, as a kind.
impl From<EndpointsKind> for Kind {
    fn from(kind: EndpointsKind) -> Kind {
        match kind {
            EndpointsKind::Endpoints => Kind::Endpoints,
            EndpointsKind::EndpointSlice => Kind::EndpointSlice,
        }
    }
}

impl KindRow {
    /// `etcdsnapshotfiles.k3s.cattle.io` for a custom resource, the plural otherwise: how
    /// kubectl and the collectors name it.
    pub(crate) fn resource(&self) -> String {
        match (self.custom, self.api_version.rsplit_once('/')) {
            (true, Some((group, _))) => format!("{}.{group}", self.plural),
            _ => self.plural.to_string(),
        }
    }

    /// Its folder under troubleshoot's `cluster-resources/`.
    pub(crate) fn troubleshoot_folder(&self) -> String {
        if self.custom {
            format!("custom-resources/{}", self.resource())
        } else {
            self.plural.to_string()
        }
    }

    /// The API group: `""` for the core group.
    pub(crate) fn group(&self) -> &'static str {
        self.api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }

    pub(crate) fn version(&self) -> &'static str {
        self.api_version
            .rsplit_once('/')
            .map_or(self.api_version, |(_, version)| version)
    }

    /// The namespace its objects are used from, for a namespaced kind read from one.
    pub(crate) fn namespace(&self) -> &'static str {
        match self.used {
            Used::InNamespace(ns) | Used::Everywhere(ns) | Used::AlsoUpgrades(ns) => ns,
            Used::All => "",
        }
    }

    /// Whether k3sdoctor uses the object `namespace/name` of this kind.
    pub(crate) fn uses(&self, namespace: &str, name: &str) -> bool {
        match self.used {
            Used::All | Used::Everywhere(_) => true,
            Used::InNamespace(ns) => namespace == ns,
            Used::AlsoUpgrades(ns) => {
                namespace == ns
                    || self.kind == Kind::Job
                    || name == crate::model::upgrade_plans::CONTROLLER_ENV
            }
        }
    }
}

/// The kubectl command that dumps `kinds`, which share one scope: `kubectl -n default get
/// endpoints,endpointslices -o yaml`, `kubectl get events -A -o yaml`.
pub(crate) fn dump_command(kinds: &[Kind]) -> String {
    let plurals: Vec<&str> = kinds.iter().map(|k| k.row().plural).collect();
    let scope = match kinds.first().map(|k| k.row()) {
        Some(KindRow {
            used: Used::InNamespace(ns) | Used::Everywhere(ns) | Used::AlsoUpgrades(ns),
            ..
        }) => format!("-n {ns} "),
        _ => String::new(),
    };
    let all_namespaces = match kinds.first().map(|k| k.row()) {
        Some(row) if row.namespaced && row.used == Used::All => " -A",
        _ => "",
    };
    format!(
        "kubectl {scope}get {}{all_namespaces} -o yaml",
        plurals.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_its_own_row() {
        for (at, row) in KINDS.iter().enumerate() {
            assert_eq!(row.kind as usize, at, "{}", row.name);
            assert_eq!(Kind::named(row.name), Some(row.kind));
            assert_eq!(Kind::of(row.api_version, row.name), Some(row.kind));
        }
        assert_eq!(Kind::of("v1", "ETCDSnapshotFile"), None, "the group counts");
        assert_eq!(
            Kind::SnapshotFile.row().resource(),
            "etcdsnapshotfiles.k3s.cattle.io"
        );
        assert_eq!(Kind::Job.row().resource(), "jobs");
        assert_eq!(Kind::Plan.row().resource(), "plans.upgrade.cattle.io");
        let (jobs, configmaps) = (Kind::Job.row(), Kind::ConfigMap.row());
        assert!(jobs.uses("system-upgrade", "apply-server-plan-on-s1-with-abc"));
        assert!(configmaps.uses("system-upgrade", "default-controller-env"));
        assert!(!configmaps.uses("system-upgrade", "other"));
        assert!(configmaps.uses("kube-system", "k3s"));
        assert_eq!(configmaps.namespace(), "kube-system");
        assert_eq!(
            Kind::HelmChart.row().troubleshoot_folder(),
            "custom-resources/helmcharts.helm.cattle.io"
        );
    }

    #[test]
    fn dump_commands_say_the_scope_the_kinds_are_used_in() {
        assert_eq!(
            dump_command(&[Kind::Endpoints, Kind::EndpointSlice]),
            "kubectl -n default get endpoints,endpointslices -o yaml"
        );
        assert_eq!(
            dump_command(&[Kind::Event]),
            "kubectl get events -A -o yaml"
        );
        assert_eq!(
            dump_command(&[Kind::HelmChart, Kind::Job]),
            "kubectl -n kube-system get helmcharts,jobs -o yaml"
        );
        assert_eq!(dump_command(&[Kind::Node]), "kubectl get nodes -o yaml");
        assert_eq!(dump_command(&[Kind::Plan]), "kubectl get plans -A -o yaml");
        assert_eq!(
            dump_command(&[Kind::SnapshotFile]),
            "kubectl get etcdsnapshotfiles -o yaml"
        );
    }
}
