//! A fake Kubernetes API server for integration tests (design.md §7).
//!
//! Real HTTP/1.1 on `127.0.0.1:0`, answering like the kube-apiserver recorded in
//! `/work/shared/wire` (copies of the samples used by the conformance tests are in
//! `tests/fixtures/wire/`): Leases, ConfigMaps, Nodes, ETCDSnapshotFiles, SelfSubjectAccessReviews,
//! `/version` and discovery; get/list (limit/continue)/create/update/patch/delete, `dryRun=All`,
//! bearer tokens mapped to roles, a request log and fault injection. Watch is not implemented yet
//! (`?watch=true` answers 405), but every write is published on [`FakeApi::events`].
//!
//! ```ignore
//! let api = FakeApi::start();
//! api.put(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
//!                "metadata": {"name": "k3s", "namespace": "kube-system"}, "spec": {}}));
//! let kubeconfig = api.write_kubeconfig(dir.path(), Role::Admin);
//! api.inject(Fault::status("GET", "/leases", 503).times(1));
//! ```

mod auth;
mod crd;
mod decode;
mod faults;
mod handlers;
mod json;
mod list;
mod managed_fields;
mod microtime;
mod patch;
mod resources;
mod selectors;
mod server;
mod state;
mod status;
mod store;
mod validation;
mod writes;

#[allow(unused_imports)]
pub use auth::Role;
#[allow(unused_imports)]
pub use faults::{Fault, FaultAction};
#[allow(unused_imports)]
pub use store::WatchEvent;

use serde_json::{Value, json};
use state::State;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Notify, broadcast};

/// One request the server received (in arrival order), with the status it was answered with
/// (`0` when a fault dropped the connection).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The raw (still percent-encoded) query string, `""` when absent.
    pub query: String,
    pub user_agent: Option<String>,
    pub authorization: Option<String>,
    pub body: String,
    pub status: u16,
}

/// A running fake API server. Dropping it stops the server.
pub struct FakeApi {
    state: Arc<Mutex<State>>,
    addr: SocketAddr,
    shutdown: Arc<Notify>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeApi {
    /// Start a plain-HTTP server on `127.0.0.1:<free port>`, on a background thread with its own
    /// tokio runtime. The port accepts connections as soon as this returns.
    pub fn start() -> FakeApi {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(Mutex::new(State::new(addr.to_string())));
        let shutdown = Arc::new(Notify::new());
        let (thread_state, thread_shutdown) = (state.clone(), shutdown.clone());
        let thread = std::thread::Builder::new()
            .name(format!("fake-api-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    server::serve(listener, thread_state, thread_shutdown).await;
                });
                runtime.shutdown_background();
            })
            .expect("spawn fake api thread");
        FakeApi {
            state,
            addr,
            shutdown,
            thread: Some(thread),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("fake api state")
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token of a role: `admin-token`, `viewer-token`, `nobody-token`.
    pub fn token(role: Role) -> &'static str {
        role.token()
    }

    /// Write a kubeconfig (cluster `fake`, user named after the role, context `fake`, current
    /// context `fake`) into `dir` as `kubeconfig-<user>.yaml` and return its path.
    pub fn write_kubeconfig(&self, dir: &Path, role: Role) -> PathBuf {
        let path = dir.join(format!("kubeconfig-{}.yaml", role.user_name()));
        write_kubeconfig_file(&path, &self.url(), role.user_name(), role.token());
        path
    }

    /// A kubeconfig for any server URL and token (unreachable ports, `https://` to this plain
    /// HTTP port, bad tokens). Each call writes a new file `kubeconfig-custom-<n>.yaml`.
    pub fn write_kubeconfig_for(dir: &Path, server: &str, token: &str) -> PathBuf {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("kubeconfig-custom-{n}.yaml"));
        write_kubeconfig_file(&path, server, "custom", token);
        path
    }

    /// Seed or overwrite an object directly (no auth, no validation). `kind` (and `apiVersion`, if
    /// given) choose the resource; a namespaced object without namespace goes to `default`.
    /// Fills `metadata.uid` and `creationTimestamp` when absent (and `generation` for custom
    /// resources) and always assigns a fresh resourceVersion. Returns the stored object.
    pub fn put(&self, obj: Value) -> Value {
        let (key, obj) = Self::prepare(obj);
        self.state().store.write(key, obj)
    }

    /// Compare-and-swap, as a client's PUT with a resourceVersion precondition: stores `obj` only
    /// if the stored object's resourceVersion equals `obj`'s (an object without resourceVersion
    /// is created only if absent). For in-process actors such as the k3s simulator, which must
    /// lose races exactly like real clients do.
    pub fn replace(&self, obj: Value) -> Result<Value, String> {
        let expected = obj["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        let (key, obj) = Self::prepare(obj);
        let mut state = self.state();
        let current = state.store.get(&key).and_then(|o| {
            o["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string)
        });
        if current != expected {
            return Err(format!(
                "conflict on {}/{}: stored resourceVersion {current:?}, expected {expected:?}",
                key.resource, key.name
            ));
        }
        Ok(state.store.write(key, obj))
    }

    fn prepare(mut obj: Value) -> (store::Key, Value) {
        let kind = obj["kind"]
            .as_str()
            .unwrap_or_else(|| panic!("FakeApi::put: object without kind: {obj}"))
            .to_string();
        let def = resources::by_kind(&kind)
            .unwrap_or_else(|| panic!("FakeApi::put: kind {kind} is not served"));
        let api_version = def.api_version();
        if let Some(given) = obj["apiVersion"].as_str() {
            assert_eq!(
                given, api_version,
                "FakeApi::put: {kind} must have apiVersion {api_version}"
            );
        }
        obj["apiVersion"] = json!(api_version);
        if !obj["metadata"].is_object() {
            obj["metadata"] = json!({});
        }
        let meta = obj["metadata"].as_object_mut().expect("metadata");
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .expect("FakeApi::put: metadata.name is required")
            .to_string();
        let namespace = if def.namespaced {
            let ns = meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string();
            meta.insert("namespace".into(), json!(ns));
            ns
        } else {
            meta.remove("namespace");
            String::new()
        };
        meta.entry("uid").or_insert_with(|| json!(store::new_uid()));
        meta.entry("creationTimestamp")
            .or_insert_with(|| json!(microtime::now_seconds()));
        if def.custom {
            meta.entry("generation").or_insert(json!(1));
        }
        let key = store::Key {
            resource: def.plural,
            namespace,
            name,
        };
        (key, obj)
    }

    fn key(kind: &str, namespace: Option<&str>, name: &str) -> store::Key {
        let def = resources::by_kind(kind)
            .unwrap_or_else(|| panic!("FakeApi: kind {kind} is not served"));
        let namespace = if def.namespaced {
            namespace.unwrap_or("default").to_string()
        } else {
            String::new()
        };
        store::Key {
            resource: def.plural,
            namespace,
            name: name.to_string(),
        }
    }

    /// The stored object (`kind` = `Lease` | `ConfigMap` | `Node` | `ETCDSnapshotFile`).
    pub fn get(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.state()
            .store
            .get(&Self::key(kind, namespace, name))
            .cloned()
    }

    /// All stored objects of a kind, sorted by namespace and name.
    pub fn list(&self, kind: &str) -> Vec<Value> {
        let def = resources::by_kind(kind)
            .unwrap_or_else(|| panic!("FakeApi: kind {kind} is not served"));
        self.state().store.all(def.plural)
    }

    /// Delete directly (bumps the resourceVersion). Returns the removed object.
    pub fn remove(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.state().store.delete(&Self::key(kind, namespace, name))
    }

    /// Everything received so far, in arrival order (including requests answered by faults or
    /// authentication/authorization errors).
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.state().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.state().requests.clear();
    }

    /// Add a fault rule; rules are matched in insertion order before normal handling.
    pub fn inject(&self, fault: Fault) {
        self.state().faults.push(fault);
    }

    pub fn clear_faults(&self) {
        self.state().faults.clear();
    }

    /// Whether the ETCDSnapshotFile CRD is installed (default `true`). When `false`, every
    /// `/apis/k3s.cattle.io/...` path answers the text/plain `404 page not found` (samples 004–006).
    pub fn set_crd_installed(&self, installed: bool) {
        self.state().crd_installed = installed;
    }

    /// The `gitVersion` reported by `/version` (default `v1.29.4+k3s1`); major/minor follow it.
    pub fn set_server_version(&self, git_version: &str) {
        self.state().git_version = git_version.to_string();
    }

    /// The current global resourceVersion (that of the latest write).
    pub fn resource_version(&self) -> u64 {
        self.state().store.current_rv()
    }

    /// Move the global resourceVersion forward so that the next write gets `rv + 1` (lets tests
    /// reproduce the resourceVersions of recorded exchanges). Panics if `rv` is in the past,
    /// unless nothing has been written yet.
    pub fn set_resource_version(&self, rv: u64) {
        self.state().store.advance_to(rv);
    }

    /// Compact the history: continue tokens and resourceVersions from before now answer 410 Gone.
    pub fn compact(&self) {
        self.state().store.compact();
    }

    /// Every later write (through the API or `put`/`remove`), as watch events.
    pub fn events(&self) -> broadcast::Receiver<WatchEvent> {
        self.state().store.subscribe()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.shutdown.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn write_kubeconfig_file(path: &Path, server: &str, user: &str, token: &str) {
    let q = |s: &str| Value::String(s.to_string()).to_string();
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {server}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: {user}\ncurrent-context: fake\nusers:\n- name: {user}\n  user:\n    token: {token}\npreferences: {{}}\n",
        server = q(server),
        user = q(user),
        token = q(token),
    );
    std::fs::write(path, yaml)
        .unwrap_or_else(|e| panic!("write kubeconfig {}: {e}", path.display()));
}
