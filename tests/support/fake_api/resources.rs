//! The resources the fake serves, how URL paths map onto them (kube-apiserver's `RequestInfo`
//! rules), and the static discovery documents (trimmed copies of wire samples 002, 003, 008, 009).

use serde_json::{Value, json};

/// One served resource type.
#[derive(Debug)]
pub(crate) struct ResourceDef {
    pub kind: &'static str,
    pub list_kind: &'static str,
    pub plural: &'static str,
    pub group: &'static str,
    pub version: &'static str,
    pub namespaced: bool,
    /// A custom resource: sorted keys, `metadata.generation`, `continue: ""` on the last page,
    /// list items carry `kind`/`apiVersion` (samples 091, 110–112).
    pub custom: bool,
    /// PUT to a missing name creates the object (Leases, sample 046; ConfigMaps 404, sample 054).
    pub create_on_update: bool,
    /// PUT without `metadata.resourceVersion` is accepted (ConfigMaps 053; Leases 422, sample 031).
    pub unconditional_update: bool,
}

pub(crate) const LEASES: ResourceDef = ResourceDef {
    kind: "Lease",
    list_kind: "LeaseList",
    plural: "leases",
    group: "coordination.k8s.io",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: true,
    unconditional_update: false,
};
pub(crate) const CONFIGMAPS: ResourceDef = ResourceDef {
    kind: "ConfigMap",
    list_kind: "ConfigMapList",
    plural: "configmaps",
    group: "",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};
pub(crate) const NODES: ResourceDef = ResourceDef {
    kind: "Node",
    list_kind: "NodeList",
    plural: "nodes",
    group: "",
    version: "v1",
    namespaced: false,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};
pub(crate) const ETCD_SNAPSHOT_FILES: ResourceDef = ResourceDef {
    kind: "ETCDSnapshotFile",
    list_kind: "ETCDSnapshotFileList",
    plural: "etcdsnapshotfiles",
    group: "k3s.cattle.io",
    version: "v1",
    namespaced: false,
    custom: true,
    create_on_update: false,
    unconditional_update: false,
};

/// `Endpoints default/kubernetes`, which kube-apiserver's endpoint reconciler writes.
pub(crate) const ENDPOINTS: ResourceDef = ResourceDef {
    kind: "Endpoints",
    list_kind: "EndpointsList",
    plural: "endpoints",
    group: "",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};
/// The `kubernetes` Service's EndpointSlices (`kubernetes.io/service-name=kubernetes`).
pub(crate) const ENDPOINT_SLICES: ResourceDef = ResourceDef {
    kind: "EndpointSlice",
    list_kind: "EndpointSliceList",
    plural: "endpointslices",
    group: "discovery.k8s.io",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// `events.k8s.io/v1` Events, which every repair records (create only; list for tests).
pub(crate) const EVENTS: ResourceDef = ResourceDef {
    kind: "Event",
    list_kind: "EventList",
    plural: "events",
    group: "events.k8s.io",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// core/v1 Events, which k3s's recorders write (the cert monitor's on Nodes, in default). The
/// real API server keeps them in the same storage as events.k8s.io/v1 ones; so does the fake.
pub(crate) const CORE_EVENTS: ResourceDef = ResourceDef {
    kind: "Event",
    list_kind: "EventList",
    plural: "events",
    group: "",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// core/v1 Secrets, for the metadata-only list of kube-system's (node passwords, the serving
/// certificate): `list.rs` answers a `PartialObjectMetadataList` when the request asks for one.
pub(crate) const SECRETS: ResourceDef = ResourceDef {
    kind: "Secret",
    list_kind: "SecretList",
    plural: "secrets",
    group: "",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// Namespaces as objects (seeded by tests that need one, e.g. kube-system's annotations);
/// whether a namespace exists for namespaced writes is `NAMESPACES` below.
pub(crate) const NAMESPACE_OBJECTS: ResourceDef = ResourceDef {
    kind: "Namespace",
    list_kind: "NamespaceList",
    plural: "namespaces",
    group: "",
    version: "v1",
    namespaced: false,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// helm-controller's `helm.cattle.io/v1` HelmCharts (packaged-charts), served while
/// `State::helm_crd_installed`.
pub(crate) const HELM_CHARTS: ResourceDef = ResourceDef {
    kind: "HelmChart",
    list_kind: "HelmChartList",
    plural: "helmcharts",
    group: "helm.cattle.io",
    version: "v1",
    namespaced: true,
    custom: true,
    create_on_update: false,
    unconditional_update: false,
};

/// `batch/v1` Jobs: helm-controller's `helm-install-*` (packaged-charts).
pub(crate) const JOBS: ResourceDef = ResourceDef {
    kind: "Job",
    list_kind: "JobList",
    plural: "jobs",
    group: "batch",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// system-upgrade-controller's `upgrade.cattle.io/v1` Plans (upgrade-plan-stuck), served while
/// `State::suc_crd_installed`.
pub(crate) const PLANS: ResourceDef = ResourceDef {
    kind: "Plan",
    list_kind: "PlanList",
    plural: "plans",
    group: "upgrade.cattle.io",
    version: "v1",
    namespaced: true,
    custom: true,
    create_on_update: false,
    unconditional_update: false,
};

/// core/v1 Services: those an admission webhook names (get by name).
pub(crate) const SERVICES: ResourceDef = ResourceDef {
    kind: "Service",
    list_kind: "ServiceList",
    plural: "services",
    group: "",
    version: "v1",
    namespaced: true,
    custom: false,
    create_on_update: false,
    unconditional_update: false,
};

/// `admissionregistration.k8s.io/v1` webhook configurations (cluster-scoped; list only).
pub(crate) const VALIDATING_WEBHOOKS: ResourceDef = ResourceDef {
    kind: "ValidatingWebhookConfiguration",
    list_kind: "ValidatingWebhookConfigurationList",
    plural: "validatingwebhookconfigurations",
    group: "admissionregistration.k8s.io",
    version: "v1",
    namespaced: false,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};
pub(crate) const MUTATING_WEBHOOKS: ResourceDef = ResourceDef {
    kind: "MutatingWebhookConfiguration",
    list_kind: "MutatingWebhookConfigurationList",
    plural: "mutatingwebhookconfigurations",
    group: "admissionregistration.k8s.io",
    version: "v1",
    namespaced: false,
    custom: false,
    create_on_update: false,
    unconditional_update: true,
};

/// Rancher's `management.cattle.io/v3` Clusters, served while `State::rancher_management`
/// (a fake standing in for Rancher's `local` cluster, for `--rancher-clusters`).
pub(crate) const MANAGEMENT_CLUSTERS: ResourceDef = ResourceDef {
    kind: "Cluster",
    list_kind: "ClusterList",
    plural: "clusters",
    group: "management.cattle.io",
    version: "v3",
    namespaced: false,
    custom: true,
    create_on_update: false,
    unconditional_update: false,
};
/// Rancher's `provisioning.cattle.io/v1` Clusters, as `MANAGEMENT_CLUSTERS`.
pub(crate) const PROVISIONING_CLUSTERS: ResourceDef = ResourceDef {
    kind: "Cluster",
    list_kind: "ClusterList",
    plural: "clusters",
    group: "provisioning.cattle.io",
    version: "v1",
    namespaced: true,
    custom: true,
    create_on_update: false,
    unconditional_update: false,
};

/// Every stored resource type.
pub(crate) const STORED: [&ResourceDef; 18] = [
    &LEASES,
    &CONFIGMAPS,
    &NODES,
    &ETCD_SNAPSHOT_FILES,
    &ENDPOINTS,
    &ENDPOINT_SLICES,
    &EVENTS,
    &NAMESPACE_OBJECTS,
    &CORE_EVENTS,
    &SECRETS,
    &HELM_CHARTS,
    &JOBS,
    &PLANS,
    &SERVICES,
    &VALIDATING_WEBHOOKS,
    &MUTATING_WEBHOOKS,
    &MANAGEMENT_CLUSTERS,
    &PROVISIONING_CLUSTERS,
];

/// Namespaces that exist (creating into any other answers 404 like sample 047).
pub(crate) const NAMESPACES: [&str; 3] = ["default", "kube-node-lease", "kube-system"];

impl ResourceDef {
    pub(super) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `leases.coordination.k8s.io`, or just `configmaps` in the core group.
    pub(super) fn qualified_resource(&self) -> String {
        qualify(self.plural, self.group)
    }

    /// `Lease.coordination.k8s.io`, or just `ConfigMap` in the core group.
    pub(super) fn qualified_kind(&self) -> String {
        qualify(self.kind, self.group)
    }

    pub(super) fn layout(&self) -> super::json::Layout {
        if self.custom {
            super::json::Layout::Sorted
        } else {
            super::json::Layout::Builtin(self.kind)
        }
    }

    pub(super) fn list_layout(&self) -> super::json::Layout {
        if self.custom {
            super::json::Layout::Sorted
        } else {
            super::json::Layout::Builtin(self.list_kind)
        }
    }
}

pub(crate) fn qualify(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{group}")
    }
}

pub(crate) fn by_kind(kind: &str) -> Option<&'static ResourceDef> {
    STORED.into_iter().find(|d| d.kind == kind)
}

/// [`by_kind`], told apart by `apiVersion` where two groups serve one kind (Event).
pub(crate) fn by_kind_and_version(kind: &str, api_version: &str) -> Option<&'static ResourceDef> {
    STORED
        .into_iter()
        .find(|d| d.kind == kind && d.api_version() == api_version)
}

pub(crate) fn by_plural(group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
    STORED
        .into_iter()
        .find(|d| d.group == group && d.version == version && d.plural == plural)
}

/// kube-apiserver's `RequestInfo`: what authorization sees.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestInfo {
    pub is_resource_request: bool,
    pub path: String,
    pub verb: String,
    pub api_prefix: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// The object name from the path only (`name` may come from a `metadata.name` field selector).
    pub path_name: String,
    /// `namespaces/<ns>` appeared in the path.
    pub namespaced_path: bool,
    /// Path segments after the resource name beyond the subresource (never served).
    pub extra_parts: bool,
}

/// Parse a request path the way `k8s.io/apiserver/pkg/endpoints/request.RequestInfoFactory` does.
pub(crate) fn request_info(
    method: &str,
    path: &str,
    query: &super::handlers::Query,
) -> RequestInfo {
    let parts: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .map(percent_decode)
        .collect();
    let mut info = RequestInfo {
        path: path.to_string(),
        verb: method.to_ascii_lowercase(),
        ..Default::default()
    };
    if parts.len() < 3 || (parts[0] != "api" && parts[0] != "apis") {
        return info;
    }
    let mut rest: &[String] = &parts;
    info.api_prefix = rest[0].clone();
    rest = &rest[1..];
    if info.api_prefix == "apis" {
        if rest.len() < 3 {
            return info;
        }
        info.api_group = rest[0].clone();
        rest = &rest[1..];
    }
    info.is_resource_request = true;
    info.api_version = rest[0].clone();
    rest = &rest[1..];
    info.verb = match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
    .to_string();
    if rest.first().map(String::as_str) == Some("namespaces") && rest.len() > 1 {
        info.namespace = rest[1].clone();
        info.namespaced_path = true;
        if rest.len() > 2 {
            rest = &rest[2..];
        }
    }
    if let Some(resource) = rest.first() {
        info.resource = resource.clone();
    }
    if rest.len() >= 2 {
        info.path_name = rest[1].clone();
        info.name = rest[1].clone();
    }
    if rest.len() >= 3 {
        info.subresource = rest[2].clone();
    }
    info.extra_parts = rest.len() > 3;
    if info.name.is_empty() && info.verb == "get" {
        let watch = matches!(query.get("watch"), Some("true" | "1"));
        info.verb = if watch { "watch" } else { "list" }.to_string();
        if let Some(name) = query
            .get("fieldSelector")
            .and_then(super::selectors::exact_name)
        {
            info.name = name;
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".to_string();
    }
    info
}

pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `/apis/<group>/<version>` documents (sample 003, 008) and the core `/api/v1` (002, trimmed).
pub(crate) fn discovery_resource_list(
    group: &str,
    version: &str,
    crd_installed: bool,
) -> Option<Value> {
    let verbs = json!([
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch"
    ]);
    match (group, version) {
        ("", "v1") => Some(json!({
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [
                {"name": "configmaps", "singularName": "", "namespaced": true, "kind": "ConfigMap",
                 "verbs": verbs, "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="},
                {"name": "endpoints", "singularName": "", "namespaced": true, "kind": "Endpoints",
                 "verbs": verbs, "shortNames": ["ep"], "storageVersionHash": "fWeeMqaN/OA="},
                {"name": "events", "singularName": "", "namespaced": true, "kind": "Event",
                 "verbs": verbs, "shortNames": ["ev"], "storageVersionHash": "r2yiGXH7wu8="},
                {"name": "namespaces", "singularName": "", "namespaced": false, "kind": "Namespace",
                 "verbs": verbs, "shortNames": ["ns"], "storageVersionHash": "Q3oi5N2YM8M="},
                {"name": "nodes", "singularName": "", "namespaced": false, "kind": "Node",
                 "verbs": verbs, "shortNames": ["no"], "storageVersionHash": "XwShjMxG9Fs="},
                {"name": "secrets", "singularName": "", "namespaced": true, "kind": "Secret",
                 "verbs": verbs, "storageVersionHash": "S6u1pOWzb84="}
            ]
        })),
        ("coordination.k8s.io", "v1") => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "coordination.k8s.io/v1",
            "resources": [{"name": "leases", "singularName": "", "namespaced": true, "kind": "Lease",
                           "verbs": verbs, "storageVersionHash": "gqkMMb/YqFM="}]
        })),
        ("discovery.k8s.io", "v1") => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "discovery.k8s.io/v1",
            "resources": [{"name": "endpointslices", "singularName": "", "namespaced": true,
                           "kind": "EndpointSlice", "verbs": verbs, "storageVersionHash": "Nx3SIv6I0mE="}]
        })),
        ("k3s.cattle.io", "v1") if crd_installed => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "k3s.cattle.io/v1",
            "resources": [{"name": "etcdsnapshotfiles", "singularName": "etcdsnapshotfile", "namespaced": false,
                           "kind": "ETCDSnapshotFile",
                           "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                           "storageVersionHash": "5Kx/jZUidRQ="}]
        })),
        ("events.k8s.io", "v1") => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "events.k8s.io/v1",
            "resources": [{"name": "events", "singularName": "", "namespaced": true, "kind": "Event",
                           "verbs": verbs, "shortNames": ["ev"], "storageVersionHash": "r2yiGXH7wu8="}]
        })),
        ("authorization.k8s.io", "v1") => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "authorization.k8s.io/v1",
            "resources": [{"name": "selfsubjectaccessreviews", "singularName": "", "namespaced": false,
                           "kind": "SelfSubjectAccessReview", "verbs": ["create"]}]
        })),
        _ => None,
    }
}

fn group_entry(name: &str) -> Value {
    let gv = json!({"groupVersion": format!("{name}/v1"), "version": "v1"});
    json!({"name": name, "versions": [gv.clone()], "preferredVersion": gv})
}

/// Served API groups, in the order `/apis` lists them (sample 009).
pub(crate) fn served_groups(crd_installed: bool) -> Vec<&'static str> {
    let mut groups = vec![
        "authorization.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
    ];
    if crd_installed {
        groups.push("k3s.cattle.io");
    }
    groups
}

/// `/apis` (APIGroupList, sample 009, trimmed to the served groups).
pub(crate) fn api_group_list(crd_installed: bool) -> Value {
    let groups: Vec<Value> = served_groups(crd_installed)
        .into_iter()
        .map(group_entry)
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>` (APIGroup).
pub(crate) fn api_group(name: &str, crd_installed: bool) -> Option<Value> {
    if !served_groups(crd_installed).contains(&name) {
        return None;
    }
    let mut doc = group_entry(name);
    let map = doc.as_object_mut().expect("object");
    map.insert("kind".into(), json!("APIGroup"));
    map.insert("apiVersion".into(), json!("v1"));
    Some(doc)
}

/// `/api` (APIVersions).
pub(crate) fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    })
}

/// `/version` (sample 001), always indented and written in this field order.
pub(crate) fn version_body(git_version: &str) -> String {
    let core = git_version.trim_start_matches('v');
    let mut nums = core.split(|c: char| !c.is_ascii_digit());
    let major = nums.next().unwrap_or("1");
    let minor = nums.next().unwrap_or("0");
    let fields = [
        ("major", major.to_string()),
        ("minor", minor.to_string()),
        ("gitVersion", git_version.to_string()),
        (
            "gitCommit",
            "0e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5".to_string(),
        ),
        ("gitTreeState", "clean".to_string()),
        ("buildDate", "2024-04-16T03:15:04Z".to_string()),
        ("goVersion", "go1.21.9".to_string()),
        ("compiler", "gc".to_string()),
        ("platform", "linux/amd64".to_string()),
    ];
    let lines: Vec<String> = fields
        .iter()
        .map(|(k, v)| {
            let mut s = format!("  \"{k}\": ");
            super::json::escape_into(&mut s, v);
            s
        })
        .collect();
    format!("{{\n{}\n}}", lines.join(",\n"))
}
