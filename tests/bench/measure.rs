//! Running one child process and measuring it: wall time from spawn to exit, and the child's
//! own peak resident set size, `ru_maxrss` from `wait4`.
//!
//! The children are not spawned by the benchmark process itself but by a small launcher (this
//! same executable, started with [`LAUNCHER_ARG`] before the fake API server is seeded). Linux
//! folds the high-water RSS of the address space a process had before `execve` into its
//! `ru_maxrss`, and a child spawned with `vfork`/`posix_spawn` (as `std::process::Command`
//! does) execs from its parent's address space: spawned from the benchmark, which holds the
//! fake server and its 5,000 objects, every child would report at least the benchmark's ~100
//! MiB. The launcher stays at a few MiB; [`Launcher::floor`] measures what that leaves.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The first argument that makes the benchmark executable act as the launcher.
pub const LAUNCHER_ARG: &str = "--perf-launcher";
/// A child that runs longer than this is killed (and reported with exit code -9).
const TIMEOUT: Duration = Duration::from_secs(120);

/// One program invocation, run with a cleared environment.
#[derive(Clone, Debug)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl Invocation {
    pub fn new(program: &Path, args: &[&str]) -> Invocation {
        Invocation {
            program: program.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }
}

/// The environment both tools get: the same HOME (kubectl keeps its discovery cache there)
/// and the same KUBECONFIG.
pub struct Env {
    pub home: PathBuf,
    pub kubeconfig: PathBuf,
    /// Where the output of unmeasured runs and the stderr of measured ones go.
    pub scratch: PathBuf,
}

/// What one run cost.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Sample {
    pub wall: Duration,
    /// `ru_maxrss` of the child (KiB on Linux).
    pub max_rss_kib: i64,
    /// The child's CPU time, user and system (`ru_utime` + `ru_stime`): on a machine whose
    /// cores the test bed shares, what the run itself cost.
    pub cpu: Duration,
    /// The exit code; `-signal` when killed by a signal.
    pub exit: i32,
}

/// Where stdout goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// `/dev/null` (measured runs).
    Discard,
    /// `scratch/stdout` (unmeasured runs, to be inspected).
    Keep,
}

pub fn stdout_path(env: &Env) -> PathBuf {
    env.scratch.join("stdout")
}

pub fn stderr_path(env: &Env) -> PathBuf {
    env.scratch.join("stderr")
}

/// What the benchmark asks the launcher to run (one JSON line on its stdin).
#[derive(Serialize, Deserialize)]
struct Request {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, PathBuf)>,
    cwd: PathBuf,
    /// `None`: `/dev/null`.
    stdout: Option<PathBuf>,
    stderr: PathBuf,
}

/// The launcher process; its answers come back as one JSON line per request.
pub struct Launcher {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Launcher {
    /// Start the launcher. Call this first thing in `main`, while this process is still small.
    pub fn start() -> Launcher {
        let exe = std::env::current_exe().expect("path of the benchmark executable");
        let mut child = Command::new(exe)
            .arg(LAUNCHER_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the launcher");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("launcher stdout"));
        Launcher {
            child,
            stdin,
            stdout,
        }
    }

    /// Run `inv` to completion in the launcher and measure it.
    pub fn run(&mut self, inv: &Invocation, env: &Env, stdout: Stdout) -> Sample {
        let request = Request {
            program: inv.program.clone(),
            args: inv.args.clone(),
            env: vec![
                ("HOME".into(), env.home.clone()),
                ("KUBECONFIG".into(), env.kubeconfig.clone()),
                (
                    "PATH".into(),
                    std::env::var_os("PATH").unwrap_or_default().into(),
                ),
            ],
            cwd: env.home.clone(),
            stdout: (stdout == Stdout::Keep).then(|| stdout_path(env)),
            stderr: stderr_path(env),
        };
        let stdin = self.stdin.as_mut().expect("launcher stdin");
        let line = serde_json::to_string(&request).expect("encode request");
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .expect("write to the launcher");
        let mut answer = String::new();
        let n = self
            .stdout
            .read_line(&mut answer)
            .expect("read from the launcher");
        assert!(n > 0, "the launcher exited");
        serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("bad answer from the launcher ({e}): {answer}"))
    }

    /// What a trivial program (`true`) measures through the launcher: the floor under every
    /// peak RSS in the table.
    pub fn floor(&mut self, env: &Env) -> Option<Sample> {
        let program = ["/bin/true", "/usr/bin/true"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.exists())?;
        Some(self.run(&Invocation::new(program, &[]), env, Stdout::Discard))
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        // EOF on its stdin ends the launcher's loop.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The launcher's main loop: one request per line on stdin until EOF, one answer per line on
/// stdout.
pub fn serve_launcher() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.expect("read request");
        let request: Request = serde_json::from_str(&line).expect("decode request");
        let sample = spawn_and_wait(&request);
        let answer = serde_json::to_string(&sample).expect("encode answer");
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .expect("answer the benchmark");
    }
}

fn spawn_and_wait(request: &Request) -> Sample {
    let out = match &request.stdout {
        None => Stdio::null(),
        Some(path) => Stdio::from(File::create(path).expect("create stdout file")),
    };
    let err = Stdio::from(File::create(&request.stderr).expect("create stderr file"));
    let mut cmd = Command::new(&request.program);
    cmd.args(&request.args)
        .env_clear()
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);

    let started = Instant::now();
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = std::fs::write(
                &request.stderr,
                format!("cannot start {}: {e}\n", request.program.display()),
            );
            return Sample {
                wall: started.elapsed(),
                max_rss_kib: 0,
                cpu: Duration::ZERO,
                exit: 127,
            };
        }
    };
    let pid = child.id() as libc::pid_t;

    // Kill the child if it overruns. The watchdog only ever signals a pid that has not been
    // reaped yet: wait for the exit without reaping (WNOWAIT), stop the watchdog, then reap.
    let (done, stop) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if stop.recv_timeout(TIMEOUT) == Err(mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: plain syscall on the pid of our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    wait_exited(pid);
    let wall = started.elapsed();
    drop(done);
    watchdog.join().expect("watchdog thread");

    let mut status: libc::c_int = 0;
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our exited, not yet reaped child; both out-pointers are valid.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(
        reaped,
        pid,
        "wait4({pid}): {}",
        std::io::Error::last_os_error()
    );
    // The Child handle has no pipes left to close and must not wait again.
    drop(child);

    let exit = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        -libc::WTERMSIG(status)
    } else {
        -1
    };
    Sample {
        wall,
        max_rss_kib: usage.ru_maxrss,
        cpu: cpu_time(&usage.ru_utime) + cpu_time(&usage.ru_stime),
        exit,
    }
}

fn cpu_time(t: &libc::timeval) -> Duration {
    Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000)
}

/// This process's CPU time so far, user and system: what a benchmark's own bed (its proxies and
/// fake servers) spends beside the runs it measures.
#[allow(dead_code)] // Used by the benchmarks whose bed runs in their own process.
pub fn own_cpu() -> Duration {
    // SAFETY: all-zero is a valid `rusage`, which getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    cpu_time(&usage.ru_utime) + cpu_time(&usage.ru_stime)
}

/// Block until `pid` has exited, leaving it a zombie.
fn wait_exited(pid: libc::pid_t) {
    // Retries only on EINTR, which needs a signal delivered to this thread each time.
    loop {
        // SAFETY: all-zero is a valid `siginfo_t`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid out-pointer; `pid` is our child.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::Interrupted,
            "waitid({pid}): {e}"
        );
    }
}

/// `$KUBECTL` if set, else the first `kubectl` on PATH.
pub fn find_kubectl() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KUBECTL").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `clientVersion.gitVersion` of `kubectl version --client -o json` (no server contact).
pub fn kubectl_version(launcher: &mut Launcher, kubectl: &Path, env: &Env) -> Option<String> {
    let inv = Invocation::new(kubectl, &["version", "--client", "-o", "json"]);
    let sample = launcher.run(&inv, env, Stdout::Keep);
    if sample.exit != 0 {
        return None;
    }
    let text = std::fs::read_to_string(stdout_path(env)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["clientVersion"]["gitVersion"]
        .as_str()
        .map(str::to_string)
}

/// Where a benchmark run keeps its files: an empty HOME for the measured programs and a scratch
/// directory, both removed with the returned guard.
pub struct Workspace {
    root: tempfile::TempDir,
    pub home: PathBuf,
    pub scratch: PathBuf,
}

impl Workspace {
    pub fn new() -> Workspace {
        let root = tempfile::tempdir().expect("temporary directory");
        let home = root.path().join("home");
        let scratch = root.path().join("scratch");
        std::fs::create_dir_all(&home).expect("create HOME");
        std::fs::create_dir_all(&scratch).expect("create scratch directory");
        Workspace {
            root,
            home,
            scratch,
        }
    }

    /// For the run's own files (kubeconfigs, scripts).
    pub fn path(&self) -> &Path {
        self.root.path()
    }
}

/// `cargo bench` passes `--bench`; `cargo test --benches` / `--all-targets` does not (and builds
/// a debug k3sdoctor): then only say how to run it, as criterion does. The launcher is served
/// from the same binary.
pub fn should_run(name: &str) -> bool {
    if std::env::args().nth(1).as_deref() == Some(LAUNCHER_ARG) {
        serve_launcher();
        return false;
    }
    if !std::env::args().any(|a| a == "--bench") {
        println!("{name}: skipped; run it with `cargo bench --bench {name}`");
        return false;
    }
    true
}
