//! A real kube-apiserver + etcd per test, with simulated k3s/RKE2 servers that elect through
//! the real client-go code (`../shared/envtest`, see its README). The assets are found through
//! `K3SDOCTOR_ENVTEST`; without it a test says how to enable it and passes, so `cargo test` on
//! a machine without the test bed stays green. Every instance is torn down when its `EnvTest`
//! drops, on panic too.

pub(crate) mod admin;
pub(crate) mod etcd_gateway;
mod etcd_quota;
pub(crate) mod servers;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use admin::AdminApi;

/// The variable that names the test bed directory (holding `up.sh`, `sim.sh`, `bin/`).
pub(crate) const ENVTEST_VAR: &str = "K3SDOCTOR_ENVTEST";

/// The users `up.sh` makes a kubeconfig for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum User {
    /// `system:masters`.
    Admin,
    /// Authenticated, no bindings until a test adds them.
    Viewer,
    /// Authenticated, no bindings until a test adds them.
    Repair,
    /// Authenticated, never bound.
    Nobody,
}

impl User {
    pub(crate) fn name(self) -> &'static str {
        match self {
            User::Admin => "admin",
            User::Viewer => "viewer",
            User::Repair => "repair",
            User::Nobody => "nobody",
        }
    }
}

pub(crate) struct EnvTest {
    assets: PathBuf,
    dir: tempfile::TempDir,
    server: String,
    admin: AdminApi,
}

/// The test bed directory, or `None` after one line (once per test binary) saying how to enable
/// the real-apiserver tests.
pub(crate) fn assets() -> Option<PathBuf> {
    static SKIP_NOTE: std::sync::Once = std::sync::Once::new();
    let dir = std::env::var_os(ENVTEST_VAR).map(PathBuf::from);
    match dir {
        Some(dir) if dir.join("up.sh").is_file() => Some(dir),
        _ => {
            // Written to the process's stderr itself: libtest would swallow eprintln! output of a
            // passing test, and a skip nobody sees is a silent skip.
            SKIP_NOTE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped the real-apiserver tests: set {ENVTEST_VAR} to a test bed directory \
                     such as ../shared/envtest to run them (docs/development.md, Testing)"
                );
            });
            None
        }
    }
}

impl EnvTest {
    /// Starts a fresh, isolated kube-apiserver + etcd, or returns `None` (after one line) when
    /// the test bed is not configured. A test bed that is configured but fails to start fails
    /// the test: CI must never skip silently. For a test that changes what other tests would see
    /// (the locks, the snapshot ConfigMap, cluster-scoped objects, simulated servers); a test that
    /// only reads takes `EnvTest::shared()`.
    pub(crate) fn start(test: &str) -> Option<EnvTest> {
        let assets = assets()?;
        Some(Self::up(test, assets))
    }

    /// The one bed of this test binary for the tests that only read: started by the first of
    /// them, shared by the rest, stopped when the test process ends. Each bed costs ~6 s of both
    /// cores to start, so a bed per reading test was most of the suite's CPU.
    pub(crate) fn shared() -> Option<&'static EnvTest> {
        static SHARED: std::sync::OnceLock<EnvTest> = std::sync::OnceLock::new();
        let assets = assets()?;
        Some(SHARED.get_or_init(|| {
            let env = Self::up("the shared test bed", assets);
            env.stop_when_this_process_ends();
            env
        }))
    }

    /// Runs up.sh, up to three times. Several instances starting at once can lose a port that
    /// up.sh found free to another instance before its server bound it; a fresh directory and
    /// fresh ports are the cure, not a failed test.
    fn up(test: &str, assets: PathBuf) -> EnvTest {
        const ATTEMPTS: usize = 3;
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            let dir = tempfile::Builder::new()
                .prefix("k3sdoctor-envtest-")
                .tempdir()
                .expect("a temporary directory for the test cluster");
            let started = script(
                &assets,
                "up.sh",
                &[dir.path().to_str().expect("utf-8 temp path")],
            );
            match started {
                Ok(out) => {
                    let server = key_value(&out, "server")
                        .unwrap_or_else(|| panic!("up.sh printed no server= line:\n{out}"));
                    let admin = AdminApi::new(&dir.path().join("kubeconfig/admin"));
                    return EnvTest {
                        assets,
                        dir,
                        server,
                        admin,
                    };
                }
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "{test}: the test cluster did not start (attempt {attempt} of {ATTEMPTS}): {e}"
                    );
                    last = e;
                }
            }
        }
        panic!("{test}: the test cluster did not start: {last}")
    }

    /// A statically held bed is never dropped, so a watcher outside this process stops it and
    /// removes its directory once this process has gone, however it ends (a panic, a signal).
    fn stop_when_this_process_ends(&self) {
        let watcher = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; bash \"$1\" \"$2\"; rm -rf \"$2\"",
            pid = std::process::id()
        );
        // --fork: setsid returns at once, leaving the watcher in a session of its own.
        let started = Command::new("setsid")
            .args(["--fork", "bash", "-c", &watcher, "watcher"])
            .arg(self.assets.join("down.sh"))
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the shared test bed's watcher starts (setsid and bash)");
        assert!(started.success(), "setsid --fork failed: {started}");
    }

    /// A directory of its own for one test's files on a shared bed, removed with the bed.
    pub(crate) fn scratch_for(&self, test: &str) -> PathBuf {
        let dir = self.dir.path().join("scratch").join(test);
        std::fs::create_dir_all(&dir).expect("a scratch directory on the test bed");
        dir
    }

    /// The API server URL, as the kubeconfigs name it.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    pub(crate) fn kubeconfig(&self, user: User) -> PathBuf {
        self.dir.path().join("kubeconfig").join(user.name())
    }

    /// Typed-enough admin access for setting up and observing the cluster.
    pub(crate) fn admin(&self) -> &AdminApi {
        &self.admin
    }

    /// Starts simulated server `name` (its hostname) with k3ssim `flags`; returns once it has
    /// registered its Node.
    pub(crate) fn start_sim(&self, name: &str, flags: &[String]) -> Result<String, String> {
        let mut args = vec![self.dir_arg(), name.to_string(), "--".to_string()];
        args.extend(flags.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        script(&self.assets, "sim.sh", &args)
    }

    /// `systemctl stop k3s` on a simulated server.
    pub(crate) fn stop_sim(&self, name: &str) {
        self.sim_signal(name, "--stop");
    }

    /// A crash or power loss: nothing is released.
    pub(crate) fn kill_sim(&self, name: &str) {
        self.sim_signal(name, "--kill");
    }

    fn sim_signal(&self, name: &str, how: &str) {
        let dir = self.dir_arg();
        if let Err(e) = script(&self.assets, "sim.sh", &[&dir, name, how]) {
            panic!("sim.sh {name} {how}: {e}");
        }
    }

    /// Everything simulated server `name` has logged so far (its restarts included).
    pub(crate) fn sim_log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join("logs").join(format!("{name}.log")))
            .unwrap_or_default()
    }

    /// A directory for files a test writes (backups, kubeconfigs), removed with the cluster.
    /// The bed's CA (`pki/`), which its kubeconfigs trust: it signs the certificates of the
    /// loopback listeners that stand for the other servers.
    pub(crate) fn ca(&self) -> crate::support::test_ca::TestCa {
        crate::support::test_ca::TestCa::from_pki(&self.dir.path().join("pki"))
    }

    pub(crate) fn scratch(&self) -> &Path {
        self.dir.path()
    }

    fn dir_arg(&self) -> String {
        self.dir.path().display().to_string()
    }

    fn log_tails(&self) -> String {
        let mut out = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("logs")) else {
            return out;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(25)..];
            out.push_str(&format!("--- {} (last lines)\n", path.display()));
            for line in tail {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

impl Drop for EnvTest {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.log_tails());
        }
        let dir = self.dir_arg();
        if let Err(e) = script(&self.assets, "down.sh", &[&dir]) {
            eprintln!("down.sh {dir}: {e}");
        }
    }
}

/// Runs one of the test bed's scripts; `Err` carries its one-line reason.
fn script(assets: &Path, name: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new("bash")
        .arg(assets.join(name))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run bash {name}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{name} exited {}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            stdout.trim()
        ))
    }
}

fn key_value(out: &str, key: &str) -> Option<String> {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(str::to_string)
}
