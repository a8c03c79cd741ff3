//! Runs the real `k3sdoctor` binary hermetically: its own HOME, no KUBECONFIG, no colour
//! variables, so it never sees the developer's cluster.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::de::DeserializeOwned;

use super::fake_api::{FakeApi, Role};

pub(crate) struct Run {
    args: Vec<String>,
    env: Vec<(String, String)>,
    home: tempfile::TempDir,
    /// A FIFO the run waits on before it starts (`faults::writers`).
    gate: Option<PathBuf>,
    /// RLIMIT_NOFILE (soft and hard) for the process, when a test bounds it.
    open_files: Option<u64>,
    /// A file to read as standard input (`--from-file -`); else /dev/null.
    stdin: Option<PathBuf>,
}

pub(crate) struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    command: String,
}

pub(crate) fn k3sdoctor<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    Run {
        args: args.into_iter().map(|a| a.as_ref().to_string()).collect(),
        env: Vec::new(),
        home: tempfile::tempdir().expect("temp HOME"),
        gate: None,
        open_files: None,
        stdin: None,
    }
}

/// The repository root, for fixtures.
pub(crate) fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every `.rs` file under `dir`, for the tests that read the source itself.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

impl Run {
    /// Point the run at a fake API server with the given role's token.
    pub(crate) fn cluster(mut self, fake: &FakeApi, role: Role) -> Self {
        let path = fake.write_kubeconfig(self.home.path(), role);
        self.args.push("--kubeconfig".into());
        self.args.push(path.display().to_string());
        self
    }

    pub(crate) fn kubeconfig_for(mut self, server: &str, token: &str) -> Self {
        let path = FakeApi::write_kubeconfig_for(self.home.path(), server, token);
        self.args.push("--kubeconfig".into());
        self.args.push(path.display().to_string());
        self
    }

    /// Point the run at an existing kubeconfig file.
    pub(crate) fn kubeconfig(mut self, path: &Path) -> Self {
        self.args.push("--kubeconfig".into());
        self.args.push(path.display().to_string());
        self
    }

    pub(crate) fn arg(mut self, arg: impl AsRef<str>) -> Self {
        self.args.push(arg.as_ref().to_string());
        self
    }

    pub(crate) fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The run reads `path` as its standard input, as `k3sdoctor ... < path`.
    pub(crate) fn stdin_from(mut self, path: &Path) -> Self {
        self.stdin = Some(path.to_path_buf());
        self
    }

    /// Runs the process with at most `limit` open files, as a container's ulimit would.
    pub(crate) fn open_files(mut self, limit: u64) -> Self {
        self.open_files = Some(limit);
        self
    }

    pub(crate) fn home(&self) -> &Path {
        self.home.path()
    }

    /// The run starts only once it has read one byte from the FIFO `gate`: several runs are
    /// released together by writing one byte each (`faults::writers::StartingGate`).
    pub(crate) fn gated_by(mut self, gate: &Path) -> Self {
        self.gate = Some(gate.to_path_buf());
        self
    }

    pub(crate) fn run(self) -> Output {
        self.spawn().wait()
    }

    /// Starts the run without waiting, for tests that act on the cluster while it runs.
    pub(crate) fn spawn(self) -> Running {
        let mut cmd = match &self.gate {
            // `dd` reads exactly one byte, so each byte written to the gate releases one run.
            Some(gate) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(r#"dd if="$1" bs=1 count=1 status=none >/dev/null && shift && exec "$@""#)
                    .arg("sh")
                    .arg(gate)
                    .arg(env!("CARGO_BIN_EXE_k3sdoctor"));
                cmd
            }
            None => Command::new(env!("CARGO_BIN_EXE_k3sdoctor")),
        };
        cmd.args(&self.args)
            .env_clear()
            .env("HOME", self.home.path())
            // Files the tool writes by default (backups) land in the run's own directory.
            .current_dir(self.home.path())
            .stdin(match &self.stdin {
                Some(path) => Stdio::from(std::fs::File::open(path).expect("stdin file")),
                None => Stdio::null(),
            });
        // Hermetic: the machine's own /etc/rancher/*/ kubeconfigs are never found (a test
        // that wants a server kubeconfig names its own with `.env`).
        cmd.env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            self.home.path().join("no-server-kubeconfig"),
        );
        // serve's /metrics and /report need a reviewed token by default; the fake API server
        // answers no TokenReview, so tests that are not about access scrape without one. The
        // tests of access set `--metrics-auth kubernetes` (tests/real_apiserver/serve_access.rs).
        cmd.env("K3SDOCTOR_METRICS_AUTH", "none");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(limit) = self.open_files {
            use std::os::unix::process::CommandExt;
            let limit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run k3sdoctor");
        Running {
            child,
            command: format!("k3sdoctor {}", self.args.join(" ")),
            _home: self.home,
        }
    }
}

/// A run in progress.
pub(crate) struct Running {
    child: std::process::Child,
    command: String,
    _home: tempfile::TempDir,
}

impl Running {
    /// The process id (of the gate's shell until a gated run is released).
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn wait(self) -> Output {
        let out = self.child.wait_with_output().expect("wait for k3sdoctor");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            command: self.command,
        }
    }
}

/// `text` with every run of whitespace made one space.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Output {
    /// Asserts the exit code, showing everything the run printed when it differs.
    #[track_caller]
    pub(crate) fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code, expected,
            "exit code of `{}`\n--- stdout\n{}\n--- stderr\n{}",
            self.command, self.stdout, self.stderr
        );
        self
    }

    /// Human output wraps at 80 columns when piped, so a phrase may span lines: it is found
    /// when its words appear in order with any whitespace between them.
    #[track_caller]
    pub(crate) fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle) || words(&self.stdout).contains(&words(needle)),
            "stdout of `{}` lacks {needle:?}:\n{}",
            self.command,
            self.stdout
        );
        self
    }

    #[track_caller]
    pub(crate) fn stderr_has(&self, needle: &str) -> &Self {
        // Wrapped prose (a table command's findings off a terminal) matches word for word.
        assert!(
            self.stderr.contains(needle) || words(&self.stderr).contains(&words(needle)),
            "stderr of `{}` lacks {needle:?}:\n{}",
            self.command,
            self.stderr
        );
        self
    }

    /// The error is one line — the last on stderr, after any progress notes — never a panic
    /// or a backtrace.
    #[track_caller]
    pub(crate) fn one_line_error(&self) -> &Self {
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.contains(": error: "))
            .collect();
        assert_eq!(
            errors.len(),
            1,
            "expected one error line from `{}`, got:\n{}",
            self.command,
            self.stderr
        );
        assert_eq!(
            self.stderr.lines().last(),
            Some(errors[0]),
            "the error should come last:\n{}",
            self.stderr
        );
        assert!(
            errors[0].starts_with("k3sdoctor: error: "),
            "{}",
            self.stderr
        );
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("backtrace"),
            "{}",
            self.stderr
        );
        // A run of spaces mid-sentence is a line continuation lost in the source.
        assert!(
            !errors[0].trim_end().contains("    "),
            "a run of spaces in the error:\n{}",
            errors[0]
        );
        self
    }

    /// The JSON on stdout, checked against the committed schema of its `kind` first, so every
    /// report a test reads is also a test of the schemas.
    #[track_caller]
    pub(crate) fn json<T: DeserializeOwned>(&self) -> T {
        let value: serde_json::Value = serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout of `{}` is not JSON ({e}):\n{}",
                self.command, self.stdout
            )
        });
        assert_matches_schema(&value, &self.command);
        serde_json::from_value(value).unwrap_or_else(|e| {
            panic!(
                "stdout of `{}` is not the expected JSON ({e}):\n{}",
                self.command, self.stdout
            )
        })
    }
}

/// Validates a k3sdoctor document (`apiVersion: k3sdoctor.io/v1`) against `schema/<kind>.json`;
/// anything else (a test's own JSON) passes through.
#[track_caller]
pub(crate) fn assert_matches_schema(doc: &serde_json::Value, what: &str) {
    if doc["apiVersion"] != "k3sdoctor.io/v1" {
        return;
    }
    let kind = doc["kind"]
        .as_str()
        .expect("a k3sdoctor document has a kind");
    let path = repo_path("schema").join(format!("{kind}.json"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no schema for {kind} at {}: {e}", path.display())),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the {kind} of `{what}` does not match schema/{kind}.json:\n{}",
        errors.join("\n")
    );
}

/// A run whose stdout and stderr are read as they are printed (`leases --watch`), ended with a
/// signal.
pub(crate) struct Streaming {
    child: KillOnDrop,
    command: String,
    stdout: StreamedLines,
    stderr: StreamedLines,
    _home: tempfile::TempDir,
}

/// A streamed child that a test ended (or panicked) without signalling is killed when the
/// test drops it: a `serve` otherwise outlives its test, its fake server and its kubeconfig,
/// and retries forever.
struct KillOnDrop(std::process::Child);

impl std::ops::Deref for KillOnDrop {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Lines of one pipe, read on a thread as they arrive.
struct StreamedLines {
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl StreamedLines {
    fn read(pipe: impl std::io::Read + Send + 'static) -> StreamedLines {
        use std::io::BufRead;
        let (send, lines) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        StreamedLines {
            lines,
            seen: Vec::new(),
            reader: Some(reader),
        }
    }

    fn matching(
        &mut self,
        limit: std::time::Duration,
        mut pred: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            self.seen.push(line.clone());
            if pred(&line) {
                return Some(line);
            }
        }
    }

    /// Everything, once the process has exited (the reader ends at end of file).
    fn finish(mut self) -> String {
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.seen.extend(self.lines.try_iter());
        self.seen.join("\n")
    }
}

impl Running {
    pub(crate) fn stream(mut self) -> Streaming {
        let stdout = self.child.stdout.take().expect("stdout is piped");
        let stderr = self.child.stderr.take().expect("stderr is piped");
        Streaming {
            child: KillOnDrop(self.child),
            command: self.command,
            stdout: StreamedLines::read(stdout),
            stderr: StreamedLines::read(stderr),
            _home: self._home,
        }
    }
}

impl Streaming {
    /// The process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// The next stdout line that satisfies `pred`, waiting at most `limit` for it; `None` when
    /// the time passes or the process closes stdout first.
    pub(crate) fn line_matching(
        &mut self,
        limit: std::time::Duration,
        pred: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        self.stdout.matching(limit, pred)
    }

    /// The same for stderr.
    pub(crate) fn stderr_line_matching(
        &mut self,
        limit: std::time::Duration,
        pred: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        self.stderr.matching(limit, pred)
    }

    /// Every stdout line read so far, for failure messages.
    pub(crate) fn seen(&self) -> String {
        self.stdout.seen.join("\n")
    }

    /// Sends `signal` and waits at most `limit` for the process to exit; after that it is
    /// killed (SIGKILL) and `None` returned.
    pub(crate) fn signal_and_wait_within(
        mut self,
        signal: i32,
        limit: std::time::Duration,
    ) -> Option<Output> {
        self.signal(signal);
        let mut status = None;
        super::wait::wait_for(limit, || {
            status = self.child.try_wait().ok().flatten();
            status.is_some()
        });
        let Some(status) = status else {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return None;
        };
        Some(Output {
            code: status.code().unwrap_or(-1),
            stdout: self.stdout.finish(),
            stderr: self.stderr.finish(),
            command: self.command,
        })
    }

    /// Sends `signal` without waiting (a first Ctrl-C that the process may survive).
    pub(crate) fn signal(&mut self, signal: i32) {
        let pid = i32::try_from(self.child.id()).expect("pid fits");
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "could not signal {}", self.command);
    }

    /// Sends `signal` (e.g. `libc::SIGTERM`) and waits for the process to exit.
    pub(crate) fn signal_and_wait(mut self, signal: i32) -> Output {
        let pid = i32::try_from(self.child.id()).expect("pid fits");
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "could not signal {}", self.command);
        let status = self.child.wait().expect("wait for k3sdoctor");
        Output {
            code: status.code().unwrap_or(-1),
            stdout: self.stdout.finish(),
            stderr: self.stderr.finish(),
            command: self.command,
        }
    }
}

impl Running {
    /// Reads stdout up to the first line, then closes it as `| head -1` would; blocks until the
    /// process prints a line or exits.
    pub(crate) fn first_line_then_close_stdout(&mut self) -> String {
        use std::io::BufRead;
        let stdout = self.child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        line
    }

    /// The process' exit within `limit`; after that it is killed and `None` returned.
    pub(crate) fn exit_within(mut self, limit: std::time::Duration) -> Option<Output> {
        let exited = super::wait::wait_for(limit, || matches!(self.child.try_wait(), Ok(Some(_))));
        if !exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return None;
        }
        Some(self.wait())
    }
}

/// Runs the shell `command` on a pseudo-terminal (util-linux `script`, stdout and stderr both
/// the terminal, `TERM=xterm`) in an empty environment with `HOME` set; `None`, after a line,
/// when `script` is not installed.
pub(crate) fn on_terminal(command: &str, home: &Path) -> Option<std::process::Output> {
    let out = Command::new("script")
        .args(["-q", "-e", "-c", command, "/dev/null"])
        .env_clear()
        .env("HOME", home)
        .env("TERM", "xterm")
        // Never the machine's own /etc/rancher kubeconfig, as in every other run.
        .env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            home.join("no-server-kubeconfig"),
        )
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) => Some(out),
        Err(_) => {
            eprintln!("skipped: util-linux script is not installed");
            None
        }
    }
}
