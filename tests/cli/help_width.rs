//! `--help` and the man pages as read at 80 columns: the rendered text, not the source. No
//! line wider than 80 columns, examples that stay commands and comments when wrapped, and
//! each exit code on its own line with its meaning hanging under it (in `--help`) or on its
//! own tagged paragraph (in the man page, `MANWIDTH=80 man -l`).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::harness::k3sdoctor;
use crate::support::wait::wait_for;

/// Every command with a `--help` and a man page, as the words that run it.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: &[String], into: &mut Vec<Vec<String>>) {
        into.push(path.to_vec());
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut sub_path = path.to_vec();
            sub_path.push(sub.get_name().to_string());
            walk(sub, &sub_path, into);
        }
    }
    let mut paths = Vec::new();
    walk(&k3sdoctor::cli::command(), &[], &mut paths);
    paths
}

fn columns(line: &str) -> usize {
    line.chars().count()
}

/// The lines of `help` after `heading` up to the next unindented heading.
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// What 80 columns of `--help` must look like (shared by the pipe and the tmux runs).
fn check_help(what: &str, help: &str) {
    for line in help.lines() {
        assert!(
            columns(line) <= 80,
            "{what}: {} columns: {line:?}",
            columns(line)
        );
    }
    // An example is a `# comment` or a command, a long command continued with ` \`.
    let examples = section(help, "Examples:");
    assert!(!examples.is_empty(), "{what}: no examples");
    let mut continued = false;
    for line in examples {
        let ok = line.is_empty()
            || line.starts_with("  # ")
            || (continued && line.starts_with("    "))
            || ["  k3sdoctor ", "  kubectl "]
                .iter()
                .any(|p| line.starts_with(p));
        assert!(ok, "{what}: an example wrapped into {line:?}");
        continued = line.ends_with(" \\");
    }
}

#[test]
fn help_fits_80_columns_with_examples_intact_and_one_line_per_exit_code() {
    for path in command_paths() {
        let out = k3sdoctor(path.iter().map(String::as_str).chain(["--help"]))
            .env("COLUMNS", "80")
            .run();
        out.code(0);
        check_help(&format!("{path:?}"), &out.stdout);
    }
    let out = k3sdoctor(["--help"]).env("COLUMNS", "80").run();
    let codes = section(&out.stdout, "Exit codes:");
    for code in 0..=4 {
        let starts = codes
            .iter()
            .filter(|l| l.starts_with(&format!("  {code}  ")))
            .count();
        assert_eq!(starts, 1, "exit code {code}:\n{codes:#?}");
    }
    // A meaning continues under itself, never under the code.
    let mut in_codes = true;
    for line in &codes {
        if line.is_empty() {
            in_codes = false;
        } else if in_codes && !line.starts_with("  ") {
            panic!("{line:?}");
        } else if in_codes && !line[2..3].chars().all(|c| c.is_ascii_digit()) {
            assert!(
                line.starts_with("     ") && !line.starts_with("      "),
                "{line:?}"
            );
        }
    }
    assert!(
        codes.contains(&"     applied; user declined)"),
        "{codes:#?}"
    );
    // Wider terminals get longer lines, up to 100 columns on every command.
    for words in [
        &["--help"][..],
        &["leases", "--help"],
        &["snapshots", "diff", "--help"],
    ] {
        let out = k3sdoctor(words).env("COLUMNS", "200").run();
        let widest = out.stdout.lines().map(columns).max().unwrap_or(0);
        assert!((90..=100).contains(&widest), "{words:?}: {widest}");
    }
    let wide = k3sdoctor(["--help"]).env("COLUMNS", "100").run();
    assert!(
        wide.stdout.contains(
            "  1  findings at or above --fail-on remain (diff found differences; plan not applied;"
        ),
        "{}",
        wide.stdout
    );
}

/// The top-level and a subcommand's help as seen in an 80-column terminal (tmux), where
/// clap reads the terminal's width rather than COLUMNS.
#[test]
fn help_in_an_80_column_terminal() {
    let found = |p: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !found("tmux") {
        println!("skipped: tmux is not installed");
        return;
    }
    for (n, words) in ["--help", "leases follow --help", "snapshots restore --help"]
        .into_iter()
        .enumerate()
    {
        // A tmux server of its own for each run: kill-server ends only it.
        let socket = format!("k3sdoctor-help-{}-{n}", std::process::id());
        let tmux = |args: &[&str]| {
            Command::new("tmux")
                .args(["-L", &socket, "-f", "/dev/null"])
                .args(args)
                .env_remove("COLUMNS")
                .output()
                .unwrap()
        };
        let marker = "END-OF-HELP";
        let shell = format!(
            "env -u COLUMNS {} {words}; echo {marker}; sleep 60",
            env!("CARGO_BIN_EXE_k3sdoctor")
        );
        tmux(&[
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "50",
            "sh",
            "-c",
            &shell,
        ]);
        let pane = || {
            // -J joins lines the terminal wrapped, so a line too long shows as one.
            String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-J", "-S", "-"]).stdout)
                .into_owned()
        };
        let done = wait_for(Duration::from_secs(20), || pane().contains(marker));
        let text = pane();
        tmux(&["kill-server"]);
        assert!(done, "{words}:\n{text}");
        let help = text.split(marker).next().unwrap();
        check_help(&format!("tmux {words}"), help);
    }
}

#[test]
fn man_pages_render_within_80_columns_with_one_tagged_paragraph_per_exit_code() {
    if Command::new("man").arg("--version").output().is_err() {
        println!("skipped: man (Debian's man-db) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    k3sdoctor(["man", "--out-dir"])
        .arg(dir.path().display().to_string())
        .run()
        .code(0);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = Command::new("man")
            .arg("-l")
            .arg(&path)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            assert!(
                columns(line) <= 80,
                "{name}: {} columns: {line:?}",
                columns(line)
            );
        }
        let status: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "EXIT STATUS")
            .skip(1)
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .filter(|l| !l.is_empty())
            .collect();
        for code in 0..=4 {
            let tag = format!("       {code}      ");
            let lines: Vec<&&str> = status.iter().filter(|l| l.starts_with(&tag)).collect();
            assert_eq!(lines.len(), 1, "{name}: exit code {code}:\n{status:#?}");
        }
        // man justifies lines with extra blanks: compare the words.
        let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            status
                .iter()
                .any(|l| words(l).starts_with("3 could not read the cluster")),
            "{name}:\n{status:#?}"
        );
        // A tag too long for the tag column is put on a line of its own, and its paragraph
        // starts under it: that is how a word of the text became a tag (`(default` / `error),`).
        for pair in status.windows(2) {
            let tag_alone = pair[0].starts_with("       ")
                && !pair[0].starts_with("        ")
                && pair[0].split_whitespace().count() == 1;
            assert!(
                !(tag_alone && pair[1].starts_with("              ")),
                "{name}: {:?} became a tag:\n{status:#?}",
                pair[0]
            );
        }
    }
}
