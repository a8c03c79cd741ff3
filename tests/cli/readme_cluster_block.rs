//! The README's "Against your cluster" block, right after the quick start, shows commands that
//! work as written: each `k3sdoctor` line parses (subcommand, flags and values), each `rbac`
//! line prints the roles its bindings name, and each `kubectl create ...binding` line is one
//! that `k3sdoctor rbac` itself prints under "Bind:", for the same user. A renamed role, flag or
//! subcommand fails here.

use crate::support::harness::{k3sdoctor, repo_path};

const SECTION: &str = "## Against your cluster";
const USER: &str = "you";

/// The shell lines of the section's code blocks, without their comments.
fn block_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo_path("README.md")).unwrap();
    let sections: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    let at = sections
        .iter()
        .position(|s| *s == SECTION)
        .expect("README has an \"Against your cluster\" section");
    assert!(
        at > 0 && sections[at - 1] == "## Quick start",
        "the section follows the quick start: {sections:?}"
    );
    let body = readme.split(&format!("{SECTION}\n")).nth(1).unwrap();
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut commands = Vec::new();
    let mut in_code = false;
    for line in body.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            let command = line.split(" #").next().unwrap().trim();
            if !command.is_empty() {
                commands.push(command.to_string());
            }
        }
    }
    commands
}

/// The binding commands a role's output prints after `# Bind:`, for `USER`.
fn printed_bindings(yaml: &str) -> Vec<String> {
    let mut bindings = Vec::new();
    let mut in_bind = false;
    for line in yaml.lines() {
        let rest = if let Some(rest) = line.strip_prefix("# Bind:") {
            in_bind = true;
            rest
        } else if in_bind && line.starts_with("#  ") {
            &line[1..]
        } else {
            in_bind = false;
            continue;
        };
        bindings.push(
            rest.trim()
                .replace("--user NAME", &format!("--user {USER}")),
        );
    }
    bindings
}

/// Whether clap accepts `args`: with `--help` appended, a known subcommand with known flags and
/// values prints help and exits 0, and anything it does not know exits 2 first.
fn parses(args: &[&str]) -> bool {
    let mut args = args.to_vec();
    args.push("--help");
    k3sdoctor(&args).run().code == 0
}

#[test]
fn readme_cluster_block_shows_commands_that_work() {
    let commands = block_commands();
    let mut bindings_printed = Vec::new();
    let mut bindings_shown = Vec::new();
    let mut order = Vec::new();
    for command in &commands {
        if let Some(rest) = command.strip_prefix("k3sdoctor ") {
            let (args, piped) = rest.split_once('|').unwrap_or((rest, ""));
            let args: Vec<&str> = args.split_whitespace().collect();
            if args[0] == "rbac" {
                assert_eq!(piped.trim(), "kubectl apply -f -", "{command}");
                let out = k3sdoctor(&args).run();
                out.code(0);
                bindings_printed.extend(printed_bindings(&out.stdout));
            } else {
                assert!(piped.is_empty(), "{command}");
                assert!(
                    parses(&args),
                    "README shows `{command}`, which does not parse"
                );
            }
            order.push(args.join(" "));
        } else if command.starts_with("kubectl ") {
            assert!(command.contains("binding "), "unexpected line: {command}");
            bindings_shown.push(command.clone());
        } else {
            panic!("unexpected line in the README's cluster block: {command}");
        }
    }
    assert_eq!(
        order,
        [
            "rbac read-only",
            "check",
            "dump",
            "rbac repair",
            "leases follow --fix"
        ],
        "read-only role, check, dump, repair role, repair"
    );
    assert_eq!(
        bindings_shown, bindings_printed,
        "the README's bindings are the ones `k3sdoctor rbac` prints"
    );
}

/// The check above can fail: a misspelt flag or subcommand does not parse.
#[test]
fn a_misspelt_command_does_not_parse() {
    assert!(parses(&["leases", "follow", "--fix"]));
    assert!(!parses(&["leases", "follow", "--fixx"]));
    assert!(!parses(&["leases", "folow"]));
    assert!(!parses(&["check", "-o", "jsn"]));
}
