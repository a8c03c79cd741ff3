//! Completion that knows the cluster, driven through real shells: bash (the function with
//! COMP_WORDS/COMP_CWORD set), zsh (an interactive shell in a tmux pane, TAB pressed), fish
//! (`complete -C`), and kubectl's plugin completion (`kubectl_complete-k3s_doctor`, and
//! `kubectl __complete k3s-doctor …` when kubectl is installed), all against the fake API
//! server. A shell that is not installed is skipped with a line (CI installs them all).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::fleet::closed_port_url;
use crate::support::objects::{NodeSpec, agent, node, renewed_now};
use crate::support::wait::wait_for;

/// Completion must answer within its own 2 s budget; this only bounds a broken run.
const LIMIT: Duration = Duration::from_secs(20);

/// The binary under the names it is installed as, the scripts, and a kubeconfig with three
/// contexts: `fake` (the fake API server), `lab` and an EKS-style one with colons.
struct Bed {
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

const EKS: &str = "arn:aws:eks:eu-west-1:123456789012:cluster/prod";

impl Bed {
    fn new(server: &str) -> Bed {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "k3sdoctor",
            "kubectl-k3s_doctor",
            "kubectl_complete-k3s_doctor",
        ] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_k3sdoctor"), dir.path().join(name))
                .unwrap();
        }
        let kubeconfig = dir.path().join("kubeconfig.yaml");
        let token = FakeApi::token(Role::ReadOnly);
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {server}\n\
                 contexts:\n- name: fake\n  context: {{cluster: fake, user: u}}\n\
                 - name: lab\n  context: {{cluster: fake, user: u}}\n\
                 - name: \"{EKS}\"\n  context: {{cluster: fake, user: u}}\n\
                 current-context: fake\nusers:\n- name: u\n  user:\n    token: {token}\n"
            ),
        )
        .unwrap();
        for shell in ["bash", "zsh", "fish"] {
            let out = self_run(dir.path(), "k3sdoctor", &["completions", shell]);
            std::fs::write(dir.path().join(format!("script.{shell}")), out).unwrap();
        }
        Bed { dir, kubeconfig }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A process in the bed: the binary first on PATH, HOME in the bed, no other kubeconfig.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", self.path())
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", self.path().display()),
            )
            .env("TERM", "xterm")
            .env(
                "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
                self.path().join("no-server-kubeconfig"),
            )
            .current_dir(self.path())
            .stdin(Stdio::null());
        cmd
    }
}

fn self_run(dir: &Path, name: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(dir.join(name))
        .args(args)
        .env_clear()
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name} {args:?}");
    out.stdout
}

/// Runs `cmd` to its end within [`LIMIT`] (killed after it): (stdout, stderr).
fn finish(mut cmd: Command) -> (String, String) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(LIMIT) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the child this test started.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("completion did not finish within {LIMIT:?}");
        }
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn has(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        println!("skipped: {program} is not installed");
    }
    found
}

/// fish: `complete -C LINE`, the values before each tab.
fn fish(bed: &Bed, line: &str, env: &[(&str, &Path)]) -> Vec<String> {
    let mut cmd = bed.command("fish");
    cmd.args(["--no-config", "-c"]).arg(format!(
        "source script.fish; complete -C {}",
        fish_quote(line)
    ));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (out, err) = finish(cmd);
    assert!(err.is_empty(), "fish {line:?}: {err}");
    sorted(
        out.lines()
            .map(|l| l.split('\t').next().unwrap().to_string()),
    )
}

fn fish_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// bash: the function called with COMP_WORDS split as bash splits them (at `=` and `:` too).
fn bash(bed: &Bed, comp_words: &[&str], env: &[(&str, &Path)]) -> Vec<String> {
    let quoted: Vec<String> = comp_words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    let script = format!(
        "source script.bash; COMP_WORDS=({}); COMP_CWORD={}; _k3sdoctor; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        comp_words.len() - 1
    );
    let mut cmd = bed.command("bash");
    cmd.args(["--norc", "--noprofile", "-c", &script]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (out, err) = finish(cmd);
    assert!(err.is_empty(), "bash {comp_words:?}: {err}");
    sorted(out.lines().filter(|l| !l.is_empty()).map(str::to_string))
}

/// kubectl's side: `kubectl_complete-k3s_doctor WORDS` (what kubectl ≥ 1.26 runs), the values.
fn plugin(bed: &Bed, words: &[&str], env: &[(&str, &Path)]) -> Vec<String> {
    let mut cmd = bed.command("kubectl_complete-k3s_doctor");
    cmd.args(words);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (out, err) = finish(cmd);
    assert!(err.is_empty(), "plugin {words:?}: {err}");
    protocol_values(&out)
}

/// Through kubectl itself: `kubectl __complete k3s-doctor WORDS`.
fn through_kubectl(bed: &Bed, words: &[&str]) -> Vec<String> {
    let mut cmd = bed.command("kubectl");
    cmd.args(["__complete", "k3s-doctor"])
        .args(words)
        .env("KUBECONFIG", &bed.kubeconfig);
    let (out, _debug) = finish(cmd);
    protocol_values(&out)
}

fn protocol_values(out: &str) -> Vec<String> {
    let mut lines: Vec<&str> = out.lines().collect();
    let directive = lines.pop().unwrap_or_default();
    assert!(directive.starts_with(':'), "no directive in {out:?}");
    sorted(
        lines
            .iter()
            .map(|l| l.split('\t').next().unwrap().to_string()),
    )
}

fn sorted(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = values.collect();
    v.sort();
    v
}

/// zsh: an interactive zsh (compinit, the script in $fpath) in an 80-column tmux pane; types
/// `line`, presses TAB, and returns the pane once `expect` shows on it (or after LIMIT).
fn zsh(bed: &Bed, line: &str, expect: &[&str]) -> String {
    let zdotdir = bed.path().join("zdotdir");
    std::fs::create_dir_all(&zdotdir).unwrap();
    std::fs::copy(bed.path().join("script.zsh"), zdotdir.join("_k3sdoctor")).unwrap();
    std::fs::write(
        zdotdir.join(".zshrc"),
        format!(
            "PROMPT='%% '\nfpath=({} $fpath)\nautoload -Uz compinit && compinit -u -d {}/compdump\n",
            zdotdir.display(),
            zdotdir.display()
        ),
    )
    .unwrap();
    // Its own tmux server: tests run in parallel, and kill-server ends only this one.
    static PANES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PANES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let socket = format!("k3sdoctor-test-{}-{n}", std::process::id());
    let tmux = |args: &[&str]| {
        let mut cmd = bed.command("tmux");
        cmd.args(["-L", &socket, "-f", "/dev/null"]).args(args);
        cmd.output().unwrap()
    };
    let shell = format!(
        "env ZDOTDIR={} HOME={} PATH={}:/usr/bin:/bin K3SDOCTOR_TEST_SERVER_KUBECONFIGS=none zsh -i",
        zdotdir.display(),
        bed.path().display(),
        bed.path().display()
    );
    tmux(&["new-session", "-d", "-x", "80", "-y", "24", &shell]);
    let pane = || String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
    // zsh drops what is typed before its line editor starts: type the line until it shows.
    let typed = wait_for(LIMIT, || {
        // The prompt is `% `; capture-pane drops trailing blanks.
        if !pane().lines().any(|l| l.starts_with('%')) {
            return false;
        }
        tmux(&["send-keys", "C-u"]);
        tmux(&["send-keys", "-l", line]);
        wait_for(Duration::from_secs(2), || pane().contains(line.trim_end()))
    });
    tmux(&["send-keys", "Tab"]);
    let seen = typed && wait_for(LIMIT, || expect.iter().all(|e| pane().contains(e)));
    let text = pane();
    tmux(&["kill-server"]);
    assert!(seen, "zsh never showed {expect:?} for {line:?}:\n{text}");
    text
}

/// Two servers whose hostnames differ from their node names, and an agent that never holds
/// a lock.
fn cluster() -> FakeApi {
    let fake = FakeApi::start();
    for (name, hostname) in [("ip-10-0-0-11", "server-1"), ("ip-10-0-0-12", "server-2")] {
        fake.put(node(&NodeSpec {
            name,
            hostname,
            version: "v1.29.4+k3s1",
            prog: "k3s",
            server: true,
            ready: true,
        }));
    }
    fake.put(agent("agent-1", "v1.29.4+k3s1"));
    fake.put(renewed_now("k3s", "server-1"));
    fake.put(renewed_now("k3s-etcd", "server-2"));
    fake
}

const SERVERS: [&str; 4] = ["ip-10-0-0-11", "ip-10-0-0-12", "server-1", "server-2"];

fn strings(v: &[&str]) -> Vec<String> {
    sorted(v.iter().map(|s| s.to_string()))
}

#[test]
fn contexts_come_from_the_kubeconfig_on_the_line_or_in_kubeconfig() {
    let fake = cluster();
    let bed = Bed::new(&fake.url());
    let kc = bed.kubeconfig.display().to_string();
    let all = strings(&["fake", "lab", EKS]);
    let env: &[(&str, &Path)] = &[("KUBECONFIG", &bed.kubeconfig)];
    if has("fish") {
        assert_eq!(
            fish(
                &bed,
                &format!("k3sdoctor --kubeconfig {kc} --context "),
                &[]
            ),
            all
        );
        assert_eq!(fish(&bed, "k3sdoctor leases --context ", env), all);
        assert_eq!(fish(&bed, "k3sdoctor check --context l", env), ["lab"]);
    }
    if has("bash") {
        assert_eq!(
            bash(
                &bed,
                &["k3sdoctor", "--kubeconfig", &kc, "--context", ""],
                &[]
            ),
            all
        );
        assert_eq!(
            bash(&bed, &["k3sdoctor", "check", "--context", "l"], env),
            ["lab"]
        );
        // bash splits `arn:aws:…` at each colon and replaces only the part after the last one.
        assert_eq!(
            bash(
                &bed,
                &["k3sdoctor", "leases", "--context", "arn", ":", "aws"],
                env
            ),
            ["aws:eks:eu-west-1:123456789012:cluster/prod"]
        );
        assert_eq!(
            bash(&bed, &["k3sdoctor", "leases", "--context", "=", "la"], env),
            ["lab"]
        );
    }
    assert_eq!(plugin(&bed, &["leases", "--context", ""], env), all);
    assert_eq!(
        plugin(&bed, &["--kubeconfig", &kc, "check", "--context=f"], &[]),
        ["--context=fake"]
    );
    if has("kubectl") {
        assert_eq!(through_kubectl(&bed, &["leases", "--context", ""]), all);
    }
    if has("zsh") && has("tmux") {
        let pane = zsh(
            &bed,
            &format!("k3sdoctor --kubeconfig {kc} --context "),
            &["lab", EKS],
        );
        assert!(!pane.contains("script.zsh"), "file names offered:\n{pane}");
    }
}

#[test]
fn to_offers_the_servers_by_node_name_and_hostname_and_lease_the_lock_names() {
    let fake = cluster();
    let bed = Bed::new(&fake.url());
    let env: &[(&str, &Path)] = &[("KUBECONFIG", &bed.kubeconfig)];
    let servers = strings(&SERVERS);
    if has("fish") {
        assert_eq!(fish(&bed, "k3sdoctor leases follow --to ", env), servers);
        assert_eq!(
            fish(&bed, "k3sdoctor leases follow --lease ", env),
            ["k3s", "k3s-etcd"]
        );
        assert_eq!(
            fish(&bed, "k3sdoctor check -o ", env),
            strings(&["table", "wide", "json", "yaml", "jsonl"])
        );
        assert_eq!(
            fish(&bed, "k3sdoctor snapshots diff -o ", env),
            strings(&["table", "json", "yaml"])
        );
    }
    if has("bash") {
        assert_eq!(
            bash(
                &bed,
                &["k3sdoctor", "leases", "follow", "--to", "server-"],
                env
            ),
            ["server-1", "server-2"]
        );
        assert_eq!(
            bash(
                &bed,
                &[
                    "k3sdoctor",
                    "--distro",
                    "rke2",
                    "leases",
                    "follow",
                    "--lease",
                    ""
                ],
                env
            ),
            ["rke2", "rke2-etcd"]
        );
        assert_eq!(
            bash(&bed, &["k3sdoctor", "check", "-o", "j"], env),
            ["json", "jsonl"]
        );
    }
    assert_eq!(
        plugin(&bed, &["leases", "follow", "--to", ""], env),
        servers
    );
    assert_eq!(
        plugin(&bed, &["leases", "follow", "--lease", ""], env),
        ["k3s", "k3s-etcd"]
    );
    if has("kubectl") {
        assert_eq!(
            through_kubectl(&bed, &["leases", "follow", "--to", ""]),
            servers
        );
        assert_eq!(
            through_kubectl(&bed, &["check", "-o", ""]),
            strings(&["table", "wide", "json", "yaml", "jsonl"])
        );
    }
    if has("zsh") && has("tmux") {
        let kc = bed.kubeconfig.display().to_string();
        let pane = zsh(
            &bed,
            &format!("k3sdoctor --kubeconfig {kc} leases follow --to "),
            &SERVERS,
        );
        assert!(!pane.contains("agent-1"), "{pane}");
        zsh(&bed, "k3sdoctor check -o ", &["jsonl", "wide", "table"]);
    }
    // Completion only reads: Nodes and Leases, and never writes.
    let requests = fake.requests();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.method == "GET"), "{requests:?}");
}

#[test]
fn an_unreachable_or_silent_cluster_means_no_candidates_no_text_and_a_prompt_answer() {
    // Refused connections, and a server that accepts and never answers (the 2 s budget).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    for server in [closed_port_url(), silent_url] {
        let bed = Bed::new(&server);
        let env: &[(&str, &Path)] = &[("KUBECONFIG", &bed.kubeconfig)];
        assert!(
            plugin(&bed, &["leases", "follow", "--to", ""], env).is_empty(),
            "{server}"
        );
        let mut cmd = bed.command("k3sdoctor");
        cmd.args(["__complete", "leases", "follow", "--to", ""])
            .env("KUBECONFIG", &bed.kubeconfig);
        let (out, err) = finish(cmd);
        assert_eq!((out.as_str(), err.as_str()), (":4\n", ""), "{server}");
        if has("fish") {
            assert!(fish(&bed, "k3sdoctor leases follow --to ", env).is_empty());
        }
        if has("bash") {
            assert!(bash(&bed, &["k3sdoctor", "leases", "follow", "--to", ""], env).is_empty());
        }
        // The contexts are in the file: offered without the cluster.
        assert_eq!(plugin(&bed, &["--context", "l"], env), ["lab"]);
    }
    drop(silent);
}

/// The scripts completion writes are the engine's: no error text on a broken kubeconfig.
#[test]
fn a_broken_kubeconfig_is_no_candidates_and_no_text() {
    let bed = Bed::new("http://127.0.0.1:1");
    let broken = bed.path().join("broken.yaml");
    std::fs::write(&broken, "{ not yaml").unwrap();
    for words in [&["--context", ""][..], &["leases", "follow", "--to", ""]] {
        let mut cmd = bed.command("k3sdoctor");
        cmd.arg("__complete")
            .args(["--kubeconfig", broken.to_str().unwrap()])
            .args(words);
        let (out, err) = finish(cmd);
        assert_eq!((out.as_str(), err.as_str()), (":4\n", ""), "{words:?}");
    }
}
