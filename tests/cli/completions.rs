//! Shell completions under both names the tool is installed as, and kubectl's plugin
//! completion protocol (`kubectl_complete-k3s_doctor`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The built binary, linked into a fresh directory under `name`.
fn installed_as(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_k3sdoctor"), &path).unwrap();
    path
}

fn run(program: &Path, args: &[&str], home: &Path) -> Output {
    Command::new(program)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A shell and the flags that make it parse a script without running it.
type SyntaxCheck = (&'static str, &'static [&'static str]);

#[test]
fn every_script_under_both_names_passes_its_shells_syntax_check() {
    let dir = tempfile::tempdir().unwrap();
    let checks: [(&str, Option<SyntaxCheck>); 5] = [
        ("bash", Some(("bash", &["-n"]))),
        ("zsh", Some(("zsh", &["-n"]))),
        ("fish", Some(("fish", &["--no-execute"]))),
        ("powershell", None),
        ("elvish", None),
    ];
    for (name, completes) in [
        ("k3sdoctor", "k3sdoctor"),
        ("kubectl-k3s_doctor", "kubectl-k3s_doctor"),
    ] {
        let bin = installed_as(dir.path(), name);
        for (shell, checker) in checks {
            let out = run(&bin, &["completions", shell], dir.path());
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} completions {shell}: {stderr}"
            );
            let script = String::from_utf8(out.stdout).unwrap();
            assert!(script.contains(completes), "{name} {shell}:\n{script}");
            assert!(
                !script.contains("kubectl k3s-doctor"),
                "{name} {shell}: a command name with a space cannot be completed"
            );
            let Some((checker, flags)) = checker else {
                continue;
            };
            if !has(checker) {
                eprintln!("skipped: {checker} is not installed, {name} {shell} not syntax-checked");
                continue;
            }
            let file = dir.path().join(format!("{name}.{shell}"));
            std::fs::write(&file, &script).unwrap();
            let check = Command::new(checker)
                .args(flags)
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                check.status.success(),
                "{checker} rejects the {shell} script for {name}: {}",
                String::from_utf8_lossy(&check.stderr)
            );
        }
    }
}

/// What kubectl ≥ 1.26 reads back from `kubectl_complete-k3s_doctor WORDS...`.
fn kubectl_completes(words: &[&str]) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let bin = installed_as(dir.path(), "kubectl_complete-k3s_doctor");
    let out = run(&bin, words, dir.path());
    assert_eq!(out.status.code(), Some(0), "{words:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let directive = lines.pop().unwrap_or_default();
    let values = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    (values, directive)
}

#[test]
fn kubectl_plugin_completion_speaks_cobras_protocol() {
    let (top, directive) = kubectl_completes(&[""]);
    assert_eq!(directive, ":4");
    for sub in ["leases", "check", "snapshots"] {
        assert!(top.contains(&sub.to_string()), "{top:?}");
    }
    assert_eq!(
        kubectl_completes(&["snap"]),
        (vec!["snapshots".into()], ":4".into())
    );
    assert_eq!(
        kubectl_completes(&["snapshots", "list", "-o", "ya"]),
        (vec!["yaml".into()], ":4".into())
    );
    assert_eq!(
        kubectl_completes(&["check", "--fail-on", "n"]),
        (vec!["never".into()], ":4".into())
    );
    assert!(
        kubectl_completes(&["leases", "follow", "--"])
            .0
            .contains(&"--to".into())
    );
    // A path: no candidates, and the shell's own file completion (ShellCompDirectiveDefault).
    assert_eq!(
        kubectl_completes(&["--from-file", ""]),
        (vec![], ":0".into())
    );
    // Words that would be a usage error still get an answer, never an error.
    assert_eq!(kubectl_completes(&["--bogus", "x", "y"]).1, ":4");
}
