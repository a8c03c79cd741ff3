//! Peak memory of a child, measured from a small process started before the benchmark grows.
//!
//! Linux folds the high-water RSS of the address space a process execs from into its
//! `ru_maxrss`, and `std::process::Command` spawns with `vfork`/`posix_spawn`, so the child
//! execs from its parent's address space. Spawned from this test after it created 50,000 CRs
//! (~70 MiB of client and buffers), every child reported at least that: the first issue-24
//! runs read 68 MiB for a build that peaks at 54. A Python launcher started at the beginning
//! stays at ~10 MiB and spawns the children instead; [`PeakLauncher::floor`] measures what it
//! leaves under every figure (the perf bench's launcher, tests/bench/measure.rs, does the same
//! for the fake server).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// Reads one request per line, `{"args": [...], "stdout": path}`, runs it with stdin and
/// stderr on /dev/null and without KUBECONFIG, and answers `{"code", "wall", "maxrss"}`.
const LAUNCHER: &str = r#"
import json, os, sys, time
env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
for line in sys.stdin:
    req = json.loads(line)
    with open(req["stdout"], "wb") as out:
        started = time.monotonic()
        pid = os.posix_spawn(req["args"][0], req["args"], env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
            (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
        ])
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - started
    print(json.dumps({"code": os.waitstatus_to_exitcode(status), "wall": wall,
                      "maxrss": usage.ru_maxrss}), flush=True)
"#;

pub(crate) struct PeakLauncher {
    child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
}

/// One run: exit code, wall time, peak RSS in KiB.
pub(crate) struct Peak {
    pub code: i32,
    pub wall: Duration,
    pub peak_kib: i64,
}

impl PeakLauncher {
    pub(crate) fn start() -> PeakLauncher {
        let mut child = Command::new("python3")
            .args(["-c", LAUNCHER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 for the benchmark's launcher");
        let requests = child.stdin.take().expect("launcher stdin");
        let answers = BufReader::new(child.stdout.take().expect("launcher stdout"));
        PeakLauncher {
            child,
            requests,
            answers,
        }
    }

    pub(crate) fn run(&mut self, program: &Path, args: &[&str], stdout: &Path) -> Peak {
        let argv: Vec<String> = std::iter::once(program.display().to_string())
            .chain(args.iter().map(|a| a.to_string()))
            .collect();
        let request = json!({"args": argv, "stdout": stdout});
        writeln!(self.requests, "{request}").expect("ask the launcher");
        let mut line = String::new();
        let read = self
            .answers
            .read_line(&mut line)
            .expect("the launcher answers");
        assert!(
            read > 0,
            "the launcher exited (python3 -c, see its stderr above)"
        );
        let answer: Value = serde_json::from_str(&line).expect("the launcher's answer");
        Peak {
            code: answer["code"].as_i64().expect("code") as i32,
            wall: Duration::from_secs_f64(answer["wall"].as_f64().expect("wall")),
            peak_kib: answer["maxrss"].as_i64().expect("maxrss"),
        }
    }

    /// What `true` measures through the launcher: the floor under every figure.
    pub(crate) fn floor(&mut self, scratch: &Path) -> i64 {
        self.run(Path::new("/bin/true"), &[], &scratch.join("true.out"))
            .peak_kib
    }
}

impl Drop for PeakLauncher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
