//! Cluster-admin access to the test cluster for setting it up and observing it, independent of
//! k3sdoctor's own client code: plain JSON over the kube client.

use std::path::Path;

use serde_json::{Value, json};

pub(crate) struct AdminApi {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
}

/// A leader-election record as client-go writes it (either lock copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LockRecord {
    pub holder: String,
    pub renew_time: String,
    pub transitions: u64,
    pub lease_duration_seconds: u64,
}

/// The annotation a ConfigMap lock keeps its record in.
pub(crate) const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";

impl AdminApi {
    pub(crate) fn new(kubeconfig: &Path) -> AdminApi {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the admin client");
        let client = runtime.block_on(async {
            let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)
                .expect("up.sh writes a readable admin kubeconfig");
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .expect("the admin kubeconfig is valid");
            kube::Client::try_from(config).expect("an admin client")
        });
        AdminApi { runtime, client }
    }

    /// One request as sent; `Err` carries the status code and the Status message.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> Result<Value, (u16, String)> {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("Content-Type", content_type)
            .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
            .expect("a well-formed request");
        self.runtime.block_on(async {
            match self.client.request_text(request).await {
                Ok(text) => Ok(serde_json::from_str(&text).unwrap_or(Value::Null)),
                Err(kube::Error::Api(status)) => Err((status.code, status.message)),
                Err(e) => Err((0, e.to_string())),
            }
        })
    }

    /// GET; `None` on 404, panics on any other error (a test-setup failure).
    pub(crate) fn get(&self, path: &str) -> Option<Value> {
        match self.request("GET", path, "application/json", None) {
            Ok(v) => Some(v),
            Err((404, _)) => None,
            Err(e) => panic!("admin GET {path}: {e:?}"),
        }
    }

    pub(crate) fn create(&self, path: &str, body: &Value) -> Value {
        self.request("POST", path, "application/json", Some(body))
            .unwrap_or_else(|e| panic!("admin POST {path}: {e:?}"))
    }

    pub(crate) fn replace(&self, path: &str, body: &Value) -> Result<Value, (u16, String)> {
        self.request("PUT", path, "application/json", Some(body))
    }

    pub(crate) fn merge_patch(&self, path: &str, patch: &Value) -> Value {
        self.request("PATCH", path, "application/merge-patch+json", Some(patch))
            .unwrap_or_else(|e| panic!("admin PATCH {path}: {e:?}"))
    }

    /// Creates every object of a multi-document YAML text (RBAC objects and ConfigMaps).
    pub(crate) fn apply_yaml(&self, yaml: &str) {
        for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
            let object: Value = serde::Deserialize::deserialize(doc).expect("valid YAML");
            if object.is_null() {
                continue;
            }
            let kind = object["kind"].as_str().unwrap_or_default();
            let path = match kind {
                "ClusterRole" => "/apis/rbac.authorization.k8s.io/v1/clusterroles".to_string(),
                "ClusterRoleBinding" => {
                    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_string()
                }
                "Role" => format!(
                    "/apis/rbac.authorization.k8s.io/v1/namespaces/{}/roles",
                    object["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("default")
                ),
                "RoleBinding" => format!(
                    "/apis/rbac.authorization.k8s.io/v1/namespaces/{}/rolebindings",
                    object["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("default")
                ),
                "ConfigMap" => format!(
                    "/api/v1/namespaces/{}/configmaps",
                    object["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("default")
                ),
                other => panic!("apply_yaml does not know kind {other:?}"),
            };
            // As `kubectl apply`: a second apply of a role replaces it.
            self.put(&path, &object);
        }
    }

    /// Binds a ClusterRole to a user cluster-wide.
    pub(crate) fn bind(&self, role: &str, user: &str) {
        self.create(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": format!("{role}-{user}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
            }),
        );
    }

    /// Binds the Role `role` of `namespace` to a user in that namespace.
    pub(crate) fn bind_in(&self, namespace: &str, role: &str, user: &str) {
        self.create(
            &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings"),
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": format!("{role}-{user}"), "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
            }),
        );
    }

    /// Creates `object` in `collection`, or replaces the one there (keeping nothing of it).
    pub(crate) fn put(&self, collection: &str, object: &Value) {
        let name = object["metadata"]["name"].as_str().expect("a name");
        let path = format!("{collection}/{name}");
        match self.get(&path) {
            None => {
                self.create(collection, object);
            }
            Some(current) => {
                let mut object = object.clone();
                object["metadata"]["resourceVersion"] =
                    current["metadata"]["resourceVersion"].clone();
                self.replace(&path, &object)
                    .unwrap_or_else(|e| panic!("admin PUT {path}: {e:?}"));
            }
        }
    }

    pub(crate) fn lease(&self, name: &str) -> Option<Value> {
        self.get(&lease_path(name))
    }

    pub(crate) fn configmap(&self, name: &str) -> Option<Value> {
        self.get(&configmap_path(name))
    }

    /// The record of the Lease `name`.
    pub(crate) fn lease_record(&self, name: &str) -> Option<LockRecord> {
        let spec = &self.lease(name)?["spec"];
        Some(LockRecord {
            holder: spec["holderIdentity"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            renew_time: spec["renewTime"].as_str().unwrap_or_default().to_string(),
            transitions: spec["leaseTransitions"].as_u64().unwrap_or(0),
            lease_duration_seconds: spec["leaseDurationSeconds"].as_u64().unwrap_or(0),
        })
    }

    /// The record in the leader annotation of the ConfigMap `name`.
    pub(crate) fn configmap_record(&self, name: &str) -> Option<LockRecord> {
        let cm = self.configmap(name)?;
        let text = cm["metadata"]["annotations"][LEADER_ANNOTATION].as_str()?;
        let record: Value = serde_json::from_str(text).ok()?;
        Some(LockRecord {
            holder: record["holderIdentity"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            renew_time: record["renewTime"].as_str().unwrap_or_default().to_string(),
            transitions: record["leaderTransitions"].as_u64().unwrap_or(0),
            lease_duration_seconds: record["leaseDurationSeconds"].as_u64().unwrap_or(0),
        })
    }

    /// Edits the holder of the lock the way an operator would by hand: the ConfigMap copy
    /// first when there is one (client-go's MultiLock reads it first), then the Lease.
    pub(crate) fn set_holder(&self, lock: &str, holder: &str) {
        // The holder renews every retry period; a 409 is its renewal landing between our read
        // and our write, so read again and retry, as any careful editor would.
        for attempt in 1.. {
            let Some(mut cm) = self.configmap(lock) else {
                break;
            };
            let annotations = &mut cm["metadata"]["annotations"];
            let Some(text) = annotations[LEADER_ANNOTATION].as_str() else {
                break;
            };
            let mut record: Value = serde_json::from_str(text).expect("a JSON leader record");
            record["holderIdentity"] = json!(holder);
            annotations[LEADER_ANNOTATION] = json!(record.to_string());
            match self.replace(&configmap_path(lock), &cm) {
                Ok(_) => break,
                Err((409, _)) if attempt < 10 => continue,
                Err(e) => panic!("edit the holder of ConfigMap {lock}: {e:?}"),
            }
        }
        if self.lease(lock).is_some() {
            self.merge_patch(
                &lease_path(lock),
                &json!({"spec": {"holderIdentity": holder}}),
            );
        }
    }

    /// The `data` of a kube-system ConfigMap (empty when it or its data is absent).
    pub(crate) fn configmap_data(&self, name: &str) -> serde_json::Map<String, Value> {
        self.configmap(name)
            .and_then(|cm| cm["data"].as_object().cloned())
            .unwrap_or_default()
    }

    /// Every ETCDSnapshotFile.
    pub(crate) fn snapshot_files(&self) -> Vec<Value> {
        self.get("/apis/k3s.cattle.io/v1/etcdsnapshotfiles")
            .and_then(|l| l["items"].as_array().cloned())
            .unwrap_or_default()
    }
}

pub(crate) fn lease_path(name: &str) -> String {
    format!("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
}

pub(crate) fn configmap_path(name: &str) -> String {
    format!("/api/v1/namespaces/kube-system/configmaps/{name}")
}
