//! A fake Kubernetes API server for integration tests.
//!
//! Real HTTP/1.1 on `127.0.0.1:0`, answering like the kube-apiserver recorded in
//! `/work/shared/wire` (copies of the samples used by the conformance tests are in
//! `tests/fixtures/wire/`): Leases, ConfigMaps, Nodes, ETCDSnapshotFiles, the `kubernetes` Endpoints and
//! EndpointSlices, SelfSubjectAccessReviews,
//! `/version` and discovery; get/list (limit/continue)/create/update/patch/delete, `dryRun=All`,
//! bearer tokens mapped to roles (or to RBAC `ClusterRole`/`Role` YAML with
//! [`FakeApi::add_rbac_user`]), a request log, fault injection, and watch (`?watch=true`, see
//! `watch.rs`); every write is also published on [`FakeApi::events`].
//! [`FakeApi::start_tls`] serves the same over HTTPS with a fresh self-signed certificate.
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
mod rbac;
mod resources;
mod selectors;
mod server;
mod state;
mod status;
mod store;
pub(crate) mod tls;
mod validation;
mod watch;
mod writes;

#[allow(unused_imports)]
pub(crate) use auth::Role;
#[allow(unused_imports)]
pub(crate) use faults::{AfterCommit, Fault, FaultAction, ListLie};
#[allow(unused_imports)]
pub(crate) use store::WatchEvent;

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
pub(crate) struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The raw (still percent-encoded) query string, `""` when absent.
    pub query: String,
    pub user_agent: Option<String>,
    /// The `Accept` header, e.g. the metadata-only list of Secrets.
    pub accept: Option<String>,
    pub authorization: Option<String>,
    pub body: String,
    pub status: u16,
}

/// A running fake API server. Dropping it stops the server.
pub(crate) struct FakeApi {
    state: Arc<Mutex<State>>,
    addr: SocketAddr,
    /// The CA that signed the serving certificate, when serving HTTPS.
    ca: Option<crate::support::test_ca::TestCa>,
    shutdown: Arc<Notify>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeApi {
    /// Start a plain-HTTP server on `127.0.0.1:<free port>`, on a background thread with its own
    /// tokio runtime. The port accepts connections as soon as this returns.
    pub(crate) fn start() -> FakeApi {
        FakeApi::launch(None, "127.0.0.1")
    }

    /// Like [`FakeApi::start`], on another loopback address: a test that also listens on a
    /// server's fixed ports (etcd's metrics on 2381) keeps clear of a real etcd on 127.0.0.1.
    pub(crate) fn start_on(ip: &str) -> FakeApi {
        FakeApi::launch(None, ip)
    }

    /// Like [`FakeApi::start`], but HTTPS with a freshly generated CA and a certificate it signs
    /// for `127.0.0.1` and `localhost` (the CA's PEM is [`FakeApi::ca_pem`]). [`FakeApi::write_kubeconfig`]
    /// then writes a kubeconfig that does not trust it (TLS failure tests);
    /// [`FakeApi::write_kubeconfig_trusting`] one that does.
    pub(crate) fn start_tls() -> FakeApi {
        FakeApi::launch(Some(tls::ca_signed()), "127.0.0.1")
    }

    /// Like [`FakeApi::start_tls`], with a certificate that expires at the start of `(year,
    /// month, day)` UTC.
    pub(crate) fn start_tls_until(year: i32, month: u8, day: u8) -> FakeApi {
        FakeApi::launch(Some(tls::ca_signed_until(year, month, day)), "127.0.0.1")
    }

    /// Like [`FakeApi::start_tls`] on the first address, and on the same port of each other
    /// one: several servers' addresses answered by one API server (its `addr` is the first),
    /// with one certificate for every address, as each server presents one its CA signed.
    #[allow(dead_code)] // Used by the datastore benchmark, not by every test binary.
    pub(crate) fn start_tls_on_each(ips: &[&str]) -> FakeApi {
        FakeApi::launch_on(Some(tls::ca_signed_for(ips)), ips)
    }

    /// Like [`FakeApi::start_tls`], served by `runtime` instead of a thread and runtime of its
    /// own: a benchmark of hundreds of clusters runs them all on one runtime, as a thread pool
    /// per fake would spend the cores k3sdoctor is measured on in context switches.
    #[allow(dead_code)] // Used by the Rancher benchmark, not by every test binary.
    pub(crate) fn start_tls_in(runtime: &tokio::runtime::Handle) -> FakeApi {
        let material = tls::ca_signed();
        let (listener, addr) = bind_nonblocking("127.0.0.1");
        let state = Arc::new(Mutex::new(State::new(addr.to_string())));
        let shutdown = Arc::new(Notify::new());
        let (task_state, task_shutdown) = (state.clone(), shutdown.clone());
        let acceptor = Some(material.acceptor);
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            server::serve(listener, task_state, task_shutdown, acceptor).await;
        });
        FakeApi {
            state,
            addr,
            ca: Some(material.ca),
            shutdown,
            thread: None,
        }
    }

    fn launch(tls: Option<tls::TlsMaterial>, ip: &str) -> FakeApi {
        FakeApi::launch_on(tls, &[ip])
    }

    fn launch_on(tls: Option<tls::TlsMaterial>, ips: &[&str]) -> FakeApi {
        let (acceptor, ca) = match tls {
            Some(tls) => (Some(tls.acceptor), Some(tls.ca)),
            None => (None, None),
        };
        let (listener, addr) = bind_nonblocking(ips[0]);
        let others: Vec<std::net::TcpListener> = ips[1..]
            .iter()
            .map(|other| {
                let l = std::net::TcpListener::bind((*other, addr.port()))
                    .unwrap_or_else(|e| panic!("bind {other}:{}: {e}", addr.port()));
                l.set_nonblocking(true).expect("non-blocking listener");
                l
            })
            .collect();
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
                    // The others end with the runtime, once the first stops.
                    for other in others {
                        let other =
                            tokio::net::TcpListener::from_std(other).expect("tokio listener");
                        let never = Arc::new(Notify::new());
                        tokio::spawn(server::serve(
                            other,
                            thread_state.clone(),
                            never,
                            acceptor.clone(),
                        ));
                    }
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    server::serve(listener, thread_state, thread_shutdown, acceptor).await;
                });
                runtime.shutdown_background();
            })
            .expect("spawn fake api thread");
        FakeApi {
            state,
            addr,
            ca,
            shutdown,
            thread: Some(thread),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("fake api state")
    }

    /// `http://127.0.0.1:PORT`, or `https://127.0.0.1:PORT` for [`FakeApi::start_tls`].
    pub(crate) fn url(&self) -> String {
        let scheme = if self.ca.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The PEM of the CA that signed the serving certificate, `None` for plain HTTP.
    pub(crate) fn ca_pem(&self) -> Option<&str> {
        self.ca.as_ref().map(|ca| ca.pem.as_str())
    }

    /// The CA of a [`FakeApi::start_tls`] server: it signs the certificates of the loopback
    /// listeners that stand for the cluster's other servers. Panics for plain HTTP.
    pub(crate) fn ca(&self) -> &crate::support::test_ca::TestCa {
        self.ca
            .as_ref()
            .expect("a CA needs a server started with FakeApi::start_tls")
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token of a role: `admin-token`, `viewer-token`, `nobody-token`.
    pub(crate) fn token(role: Role) -> &'static str {
        role.token()
    }

    /// Write a kubeconfig (cluster `fake`, user named after the role, context `fake`, current
    /// context `fake`) into `dir` as `kubeconfig-<user>.yaml` and return its path. For a TLS
    /// server it has no `certificate-authority-data`, so clients do not trust the server.
    pub(crate) fn write_kubeconfig(&self, dir: &Path, role: Role) -> PathBuf {
        let path = dir.join(format!("kubeconfig-{}.yaml", role.user_name()));
        write_kubeconfig_file(&path, &self.url(), role.user_name(), role.token(), None);
        path
    }

    /// Like [`FakeApi::write_kubeconfig`] for a [`FakeApi::start_tls`] server, but trusting its
    /// certificate (`certificate-authority-data`, base64 of the PEM), as
    /// `kubeconfig-<user>-trusting.yaml`. Panics for a plain-HTTP server.
    pub(crate) fn write_kubeconfig_trusting(&self, dir: &Path, role: Role) -> PathBuf {
        let ca_pem = self
            .ca_pem()
            .expect("write_kubeconfig_trusting needs a server started with FakeApi::start_tls");
        let path = dir.join(format!("kubeconfig-{}-trusting.yaml", role.user_name()));
        write_kubeconfig_file(
            &path,
            &self.url(),
            role.user_name(),
            role.token(),
            Some(ca_pem),
        );
        path
    }

    /// Let requests with `Authorization: Bearer <token>` act as `user`, authorised by exactly the
    /// rules of the `rbac.authorization.k8s.io/v1` `ClusterRole`s and `Role`s in `rbac_yaml`
    /// (one or more YAML documents; other kinds such as bindings and ServiceAccounts, and
    /// `aggregationRule`, are ignored), as if each were bound to the user: a ClusterRole
    /// everywhere, a Role in its `metadata.namespace` (`default` when absent). Discovery,
    /// `/version` and SelfSubjectAccessReviews stay allowed as for every authenticated user.
    /// A rule with `resourceNames` matches only requests naming one of them: get/update/patch/
    /// delete of that object, and (as in Kubernetes) list/watch with the field selector
    /// `metadata.name=<name>`; never create, deletecollection or an unfiltered list/watch.
    /// Calling it again with the same token and user adds more roles (like applying and binding
    /// a second role). Panics on invalid YAML, on a rule the apiserver would reject, on a token
    /// already given to another user and on the built-in tokens of [`Role`].
    pub(crate) fn add_rbac_user(&self, token: &str, user: &str, rbac_yaml: &str) {
        assert!(
            !auth::BUILTIN_TOKENS.contains(&token)
                && !token.is_empty()
                && !token.contains(char::is_whitespace),
            "add_rbac_user: token {token:?} is reserved, empty or has whitespace"
        );
        let parsed = rbac::RbacUser::parse(user, rbac_yaml);
        let mut state = self.state();
        let merged = match state.rbac_users.get(token) {
            Some(existing) => {
                assert_eq!(
                    existing.name, user,
                    "add_rbac_user: token {token:?} already belongs to another user"
                );
                let mut merged = (**existing).clone();
                merged.roles.extend(parsed.roles);
                merged
            }
            None => parsed,
        };
        state.rbac_users.insert(token.to_string(), Arc::new(merged));
    }

    /// A kubeconfig for any server URL and token (unreachable ports, `https://` to this plain
    /// HTTP port, bad tokens). Each call writes a new file `kubeconfig-custom-<n>.yaml`.
    pub(crate) fn write_kubeconfig_for(dir: &Path, server: &str, token: &str) -> PathBuf {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("kubeconfig-custom-{n}.yaml"));
        write_kubeconfig_file(&path, server, "custom", token, None);
        path
    }

    /// Seed or overwrite an object directly (no auth, no validation). `kind` (and `apiVersion`, if
    /// given) choose the resource; a namespaced object without namespace goes to `default`.
    /// Fills `metadata.uid` and `creationTimestamp` when absent (and `generation` for custom
    /// resources) and always assigns a fresh resourceVersion. Returns the stored object.
    pub(crate) fn put(&self, obj: Value) -> Value {
        let (key, obj) = Self::prepare(obj);
        self.state().store.write(key, obj)
    }

    /// Compare-and-swap, as a client's PUT with a resourceVersion precondition: stores `obj` only
    /// if the stored object's resourceVersion equals `obj`'s (an object without resourceVersion
    /// is created only if absent). For in-process actors such as the k3s simulator, which must
    /// lose races exactly like real clients do.
    pub(crate) fn replace(&self, obj: Value) -> Result<Value, String> {
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
        let def = obj["apiVersion"]
            .as_str()
            .and_then(|v| resources::by_kind_and_version(&kind, v))
            .or_else(|| resources::by_kind(&kind))
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
    pub(crate) fn get(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.state()
            .store
            .get(&Self::key(kind, namespace, name))
            .cloned()
    }

    /// All stored objects of a kind, sorted by namespace and name.
    pub(crate) fn list(&self, kind: &str) -> Vec<Value> {
        let def = resources::by_kind(kind)
            .unwrap_or_else(|| panic!("FakeApi: kind {kind} is not served"));
        self.state().store.all(def.plural)
    }

    /// Delete directly (bumps the resourceVersion). Returns the removed object.
    pub(crate) fn remove(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.state().store.delete(&Self::key(kind, namespace, name))
    }

    /// A plain-HTTP server seeded with these objects.
    pub(crate) fn with_objects(objects: impl IntoIterator<Item = Value>) -> FakeApi {
        let fake = FakeApi::start();
        for object in objects {
            fake.put(object);
        }
        fake
    }

    /// The holder a k3s lock copy names now: `kind` is `Lease` or `ConfigMap` (its
    /// `control-plane.alpha.kubernetes.io/leader` annotation). `None` when absent or unreadable.
    pub(crate) fn lock_holder(&self, kind: &str, name: &str) -> Option<String> {
        let object = self.get(kind, Some("kube-system"), name)?;
        let record = match kind {
            "Lease" => object["spec"].clone(),
            _ => serde_json::from_str(
                object["metadata"]["annotations"]["control-plane.alpha.kubernetes.io/leader"]
                    .as_str()?,
            )
            .ok()?,
        };
        record["holderIdentity"].as_str().map(str::to_string)
    }

    /// Every request that could change something (all but reads and access reviews), as
    /// `METHOD path?query -> status`, for asserting that nothing was written.
    pub(crate) fn writes(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET" && !r.path.contains("selfsubjectaccessreviews"))
            .map(|r| format!("{} {}?{} -> {}", r.method, r.path, r.query, r.status))
            .collect()
    }

    /// Everything received so far, in arrival order (including requests answered by faults or
    /// authentication/authorization errors).
    pub(crate) fn requests(&self) -> Vec<RequestRecord> {
        self.state().requests.clone()
    }

    pub(crate) fn clear_requests(&self) {
        self.state().requests.clear();
    }

    /// Add a fault rule; rules are matched in insertion order before normal handling.
    pub(crate) fn inject(&self, fault: Fault) {
        self.state().faults.push(fault);
    }

    pub(crate) fn clear_faults(&self) {
        self.state().faults.clear();
    }

    /// Whether the ETCDSnapshotFile CRD is installed (default `true`). When `false`, every
    /// `/apis/k3s.cattle.io/...` path answers the text/plain `404 page not found` (samples 004–006).
    pub(crate) fn set_crd_installed(&self, installed: bool) {
        self.state().crd_installed = installed;
    }

    /// Whether `helm.cattle.io/v1` HelmCharts are served (`--disable-helm-controller` when not).
    pub(crate) fn set_helm_crd_installed(&self, installed: bool) {
        self.state().helm_crd_installed = installed;
    }

    /// Whether Rancher's management and provisioning Clusters are served (default `false`):
    /// the fake then stands in for Rancher's `local` cluster.
    pub(crate) fn set_rancher_management(&self, served: bool) {
        self.state().rancher_management = served;
    }

    /// Whether `upgrade.cattle.io/v1` Plans are served (default `false`: SUC not installed).
    pub(crate) fn set_suc_crd_installed(&self, installed: bool) {
        self.state().suc_crd_installed = installed;
    }

    /// The `gitVersion` reported by `/version` (default `v1.29.4+k3s1`); major/minor follow it.
    /// What `GET /metrics` answers from now on.
    pub(crate) fn set_metrics(&self, text: impl Into<Vec<u8>>) {
        self.state().metrics = std::sync::Arc::from(text.into());
    }

    /// Moves the clock every later answer's `Date` header says forward by `ahead` (from real
    /// time): a client that keeps the server's time sees it jump.
    pub(crate) fn set_clock_ahead(&self, ahead: jiff::SignedDuration) {
        self.state().clock_ahead = ahead;
    }

    pub(crate) fn set_server_version(&self, git_version: &str) {
        self.state().git_version = git_version.to_string();
    }

    /// The current global resourceVersion (that of the latest write).
    pub(crate) fn resource_version(&self) -> u64 {
        self.state().store.current_rv()
    }

    /// Move the global resourceVersion forward so that the next write gets `rv + 1` (lets tests
    /// reproduce the resourceVersions of recorded exchanges). Panics if `rv` is in the past,
    /// unless nothing has been written yet.
    pub(crate) fn set_resource_version(&self, rv: u64) {
        self.state().store.advance_to(rv);
    }

    /// Compact the history: continue tokens and resourceVersions from before now answer 410 Gone.
    pub(crate) fn compact(&self) {
        self.state().store.compact();
    }

    /// End every watch open now, cleanly (the final chunk, as when its `timeoutSeconds` runs
    /// out), so clients must resume or give up; later watches are not affected.
    pub(crate) fn end_watches(&self) {
        self.state().watch_ends.send_modify(|n| *n += 1);
    }

    /// Every later write (through the API or `put`/`remove`), as watch events.
    pub(crate) fn events(&self) -> broadcast::Receiver<WatchEvent> {
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

/// A listener on a free port of `ip`, ready for tokio's `from_std`.
fn bind_nonblocking(ip: &str) -> (std::net::TcpListener, SocketAddr) {
    let listener =
        std::net::TcpListener::bind((ip, 0)).unwrap_or_else(|e| panic!("bind {ip}:0: {e}"));
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("local address");
    (listener, addr)
}

fn write_kubeconfig_file(path: &Path, server: &str, user: &str, token: &str, ca_pem: Option<&str>) {
    use base64::Engine as _;
    let q = |s: &str| Value::String(s.to_string()).to_string();
    let ca = ca_pem.map_or_else(String::new, |pem| {
        let data = base64::engine::general_purpose::STANDARD.encode(pem);
        format!("    certificate-authority-data: {data}\n")
    });
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n{ca}    server: {server}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: {user}\ncurrent-context: fake\nusers:\n- name: {user}\n  user:\n    token: {token}\npreferences: {{}}\n",
        server = q(server),
        user = q(user),
        token = q(token),
    );
    std::fs::write(path, yaml)
        .unwrap_or_else(|e| panic!("write kubeconfig {}: {e}", path.display()));
}
