//! Completion candidates over the clap command tree, for kubectl's plugin completion.
//!
//! kubectl ≥ 1.26 completes `kubectl k3s-doctor ...` by running `kubectl_complete-k3s_doctor`
//! from PATH with the words typed after the plugin name, the last being the word under the
//! cursor, and reads Cobra's `__complete` answer: one candidate per line (`value\tdescription`)
//! and a final `:<directive>` line (kubectl's `pkg/cmd/plugin` completion, cobra's
//! `completions.go`). The bash, zsh and fish scripts ask the same engine, through the hidden
//! `k3sdoctor __complete WORD...`, so every shell gets the same candidates.
//!
//! Values that only the cluster knows (contexts, server nodes, lock names) come from a
//! [`ClusterValues`] given by the caller: this walk stays pure.

use clap::{Arg, Command, ValueHint};

/// Cobra's ShellCompDirectiveDefault: the shell completes file names itself.
pub const DIRECTIVE_FILES: u8 = 0;
/// Cobra's ShellCompDirectiveNoFileComp: offer only the candidates.
pub const DIRECTIVE_NO_FILES: u8 = 4;

#[derive(Debug, PartialEq, Eq)]
pub struct Completion {
    /// `(value, description)`; the description may be empty.
    pub candidates: Vec<(String, String)>,
    pub directive: u8,
}

impl Completion {
    /// Cobra's wire format.
    pub fn to_protocol(&self) -> String {
        let mut text = String::new();
        for (value, description) in &self.candidates {
            text.push_str(value);
            if !description.is_empty() {
                text.push('\t');
                text.push_str(description);
            }
            text.push('\n');
        }
        text.push_str(&format!(":{}\n", self.directive));
        text
    }
}

/// The values of an argument that only the kubeconfig or the cluster can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dynamic {
    /// `--context`: the kubeconfig's contexts.
    Contexts,
    /// `--to`: the servers that can hold the locks, by node name and hostname.
    ServerNodes,
    /// `--lease`: the lock names of the distro.
    LockNames,
}

impl Dynamic {
    fn of(arg: &Arg) -> Option<Dynamic> {
        match arg.get_id().as_str() {
            "context" => Some(Dynamic::Contexts),
            "to" => Some(Dynamic::ServerNodes),
            "lease" => Some(Dynamic::LockNames),
            _ => None,
        }
    }
}

/// The flags typed so far on the line, by clap id (`kubeconfig`, `context`, `distro`, ...),
/// each with its values in order: `--context <TAB>` reads the `--kubeconfig` typed before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedFlags(Vec<(String, String)>);

impl TypedFlags {
    /// The last value given for `id`.
    pub fn last(&self, id: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for `id`, in order.
    pub fn all(&self, id: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether the flag `id` (one without a value) was typed.
    pub fn has(&self, id: &str) -> bool {
        self.0.iter().any(|(i, _)| i == id)
    }

    fn record(&mut self, arg: &Arg, value: &str) {
        self.0.push((arg.get_id().to_string(), value.to_string()));
    }
}

/// Where dynamic values come from: the kubeconfig and the cluster (`commands::completions`),
/// or nowhere.
pub trait ClusterValues {
    /// `(value, description)` pairs; empty when they cannot be had (never an error).
    fn values(&self, kind: Dynamic, typed: &TypedFlags) -> Vec<(String, String)>;
}

/// No kubeconfig, no cluster: only what the command line itself defines.
pub struct NoClusterValues;

impl ClusterValues for NoClusterValues {
    fn values(&self, _: Dynamic, _: &TypedFlags) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The candidates for the last of `words` (the words after the program name), from the
/// command line's definitions only.
pub fn complete(root: &Command, words: &[String]) -> Completion {
    complete_with(root, words, &NoClusterValues)
}

/// [`complete`], asking `cluster` for the values only it knows.
pub fn complete_with(root: &Command, words: &[String], cluster: &dyn ClusterValues) -> Completion {
    let mut root = root.clone();
    // Propagates global flags into every subcommand, as parsing would.
    root.build();
    let (current, typed) = match words.split_last() {
        Some((current, typed)) => (current.as_str(), typed),
        None => ("", &[][..]),
    };
    let mut cmd = &root;
    let mut pending_value: Option<&Arg> = None;
    let mut positionals = 0;
    let mut only_positionals = false;
    let mut flags_typed = TypedFlags::default();
    for word in typed {
        if let Some(arg) = pending_value.take() {
            flags_typed.record(arg, word);
            continue;
        }
        if only_positionals || word == "-" || !word.starts_with('-') {
            match cmd.find_subcommand(word).filter(|_| !only_positionals) {
                Some(sub) => {
                    cmd = sub;
                    positionals = 0;
                }
                None => positionals += 1,
            }
        } else if word == "--" {
            only_positionals = true;
        } else if let Some(long) = word.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => {
                    if let Some(arg) = find_long(cmd, name) {
                        flags_typed.record(arg, value);
                    }
                }
                None => match find_long(cmd, long) {
                    Some(arg) if takes_value(arg) => pending_value = Some(arg),
                    Some(arg) => flags_typed.record(arg, ""),
                    None => {}
                },
            }
        } else {
            // `-qv`, `-ojson`, `-o json`: only a value-taking flag at the end waits for the next word.
            let shorts: Vec<char> = word[1..].chars().collect();
            for (i, c) in shorts.iter().enumerate() {
                if let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(*c))
                    && takes_value(arg)
                {
                    if i + 1 == shorts.len() {
                        pending_value = Some(arg);
                    } else {
                        flags_typed.record(arg, &shorts[i + 1..].iter().collect::<String>());
                    }
                    break;
                }
            }
        }
    }
    let values = |arg: &Arg, typed: &str, prefix: &str| match Dynamic::of(arg) {
        Some(kind) => Completion {
            candidates: cluster
                .values(kind, &flags_typed)
                .into_iter()
                .filter(|(v, _)| v.starts_with(typed))
                .map(|(v, d)| (format!("{prefix}{v}"), d))
                .collect(),
            directive: DIRECTIVE_NO_FILES,
        },
        None => fixed_values(arg, typed, prefix),
    };
    if let Some(arg) = pending_value {
        return values(arg, current, "");
    }
    if !only_positionals && let Some(flag) = current.strip_prefix("--") {
        if let Some((name, value)) = flag.split_once('=') {
            return match find_long(cmd, name) {
                Some(arg) => values(arg, value, &format!("--{name}=")),
                None => no_candidates(),
            };
        }
        return Completion {
            candidates: flags(cmd)
                .filter(|(long, _)| long.starts_with(current))
                .collect(),
            directive: DIRECTIVE_NO_FILES,
        };
    }
    if !only_positionals && current.starts_with('-') && current != "-" {
        return Completion {
            candidates: flags(cmd).collect(),
            directive: DIRECTIVE_NO_FILES,
        };
    }
    let mut candidates: Vec<(String, String)> = if only_positionals {
        Vec::new()
    } else {
        cmd.get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name().starts_with(current))
            .map(|s| (s.get_name().to_string(), about(s)))
            .collect()
    };
    if let Some(positional) = cmd.get_positionals().nth(positionals) {
        let more = values(positional, current, "");
        if candidates.is_empty() {
            return more;
        }
        candidates.extend(more.candidates);
    }
    Completion {
        candidates,
        directive: DIRECTIVE_NO_FILES,
    }
}

fn find_long<'a>(cmd: &'a Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name)
            || a.get_all_aliases()
                .is_some_and(|aliases| aliases.contains(&name))
    })
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// Every visible long flag of `cmd`, with its help.
fn flags(cmd: &Command) -> impl Iterator<Item = (String, String)> + '_ {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .filter_map(|a| {
            a.get_long()
                .map(|long| (format!("--{long}"), first_line(a.get_help())))
        })
}

/// The values an argument takes that start with `typed`: its fixed choices, or file names
/// from the shell for a path.
fn fixed_values(arg: &Arg, typed: &str, prefix: &str) -> Completion {
    let choices = arg.get_possible_values();
    if choices.is_empty() {
        let directive = match arg.get_value_hint() {
            ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath => DIRECTIVE_FILES,
            _ => DIRECTIVE_NO_FILES,
        };
        return Completion {
            candidates: Vec::new(),
            directive,
        };
    }
    Completion {
        candidates: choices
            .iter()
            .filter(|v| !v.is_hide_set() && v.get_name().starts_with(typed))
            .map(|v| {
                (
                    format!("{prefix}{}", v.get_name()),
                    first_line(v.get_help()),
                )
            })
            .collect(),
        directive: DIRECTIVE_NO_FILES,
    }
}

fn no_candidates() -> Completion {
    Completion {
        candidates: Vec::new(),
        directive: DIRECTIVE_NO_FILES,
    }
}

fn about(cmd: &Command) -> String {
    first_line(cmd.get_about())
}

fn first_line(text: Option<&clap::builder::StyledStr>) -> String {
    text.map(|t| t.to_string().lines().next().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values_for(words: &[&str]) -> (Vec<String>, u8) {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let c = complete(&crate::cli::command(), &words);
        (
            c.candidates.into_iter().map(|(v, _)| v).collect(),
            c.directive,
        )
    }

    #[test]
    fn subcommands_at_each_level() {
        let (top, directive) = values_for(&[""]);
        for sub in ["leases", "check", "snapshots", "completions", "man"] {
            assert!(top.contains(&sub.to_string()), "{top:?}");
        }
        assert_eq!(directive, DIRECTIVE_NO_FILES);
        assert_eq!(values_for(&["sn"]).0, ["snapshots"]);
        assert_eq!(values_for(&["snapshots", "d"]).0, ["diff"]);
        assert_eq!(values_for(&["leases", "f"]).0, ["follow"]);
    }

    #[test]
    fn flags_values_and_globals_after_the_subcommand() {
        assert_eq!(
            values_for(&["check", "--fail-on", ""]).0,
            ["error", "warning", "never"]
        );
        assert_eq!(
            values_for(&["check", "--fail-on=w"]).0,
            ["--fail-on=warning"]
        );
        assert_eq!(values_for(&["snapshots", "list", "-o", "w"]).0, ["wide"]);
        assert_eq!(values_for(&["-o", "json", "le"]).0, ["leases"]);
        assert!(
            values_for(&["snapshots", "diff", "--"])
                .0
                .contains(&"--fail-on".to_string())
        );
        assert_eq!(
            values_for(&["leases", "follow", "--no-"]).0,
            ["--no-wait", "--no-headers"]
        );
        assert_eq!(
            values_for(&["completions", ""]).0,
            ["bash", "elvish", "fish", "powershell", "zsh"]
        );
    }

    #[test]
    fn paths_are_left_to_the_shell() {
        assert_eq!(values_for(&["--kubeconfig", ""]), (vec![], DIRECTIVE_FILES));
        assert_eq!(
            values_for(&["check", "--from-file", "x"]),
            (vec![], DIRECTIVE_FILES)
        );
        assert_eq!(values_for(&["--context", ""]), (vec![], DIRECTIVE_NO_FILES));
    }

    /// Answers from a table, and remembers what it was asked with.
    struct Recorded(std::cell::RefCell<Vec<(Dynamic, TypedFlags)>>);

    impl ClusterValues for Recorded {
        fn values(&self, kind: Dynamic, typed: &TypedFlags) -> Vec<(String, String)> {
            self.0.borrow_mut().push((kind, typed.clone()));
            let names: &[&str] = match kind {
                Dynamic::Contexts => &["prod", "prod-eu", "lab"],
                Dynamic::ServerNodes => &["ip-10-0-0-11", "server-1"],
                Dynamic::LockNames => &["k3s", "k3s-etcd"],
            };
            names
                .iter()
                .map(|n| (n.to_string(), String::new()))
                .collect()
        }
    }

    fn dynamic(words: &[&str]) -> (Vec<String>, Vec<(Dynamic, TypedFlags)>) {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let cluster = Recorded(Default::default());
        let c = complete_with(&crate::cli::command(), &words, &cluster);
        assert_eq!(c.directive, DIRECTIVE_NO_FILES);
        let values = c.candidates.into_iter().map(|(v, _)| v).collect();
        (values, cluster.0.into_inner())
    }

    #[test]
    fn contexts_nodes_and_locks_come_from_the_cluster_with_the_flags_typed_before() {
        let (values, asked) = dynamic(&["--kubeconfig", "/k", "leases", "--context", "pr"]);
        assert_eq!(values, ["prod", "prod-eu"]);
        assert_eq!(asked[0].0, Dynamic::Contexts);
        assert_eq!(asked[0].1.last("kubeconfig"), Some("/k"));

        let (values, asked) = dynamic(&[
            "--context=prod",
            "leases",
            "follow",
            "-n",
            "kube-system",
            "--distro",
            "k3s",
            "--to",
            "",
        ]);
        assert_eq!(values, ["ip-10-0-0-11", "server-1"]);
        let typed = &asked[0].1;
        assert_eq!(asked[0].0, Dynamic::ServerNodes);
        assert_eq!(typed.last("context"), Some("prod"));
        assert_eq!(typed.last("distro"), Some("k3s"));
        assert_eq!(typed.last("namespace"), Some("kube-system"));

        assert_eq!(
            dynamic(&["leases", "follow", "--lease=k3s-"]).0,
            ["--lease=k3s-etcd"]
        );
        let (_, asked) = dynamic(&[
            "--insecure-skip-tls-verify",
            "--context",
            "a",
            "--context",
            "",
        ]);
        assert!(asked[0].1.has("insecure_skip_tls_verify"));
        assert_eq!(asked[0].1.all("context"), ["a"]);
        // Not asked where the cluster has nothing to say.
        assert!(dynamic(&["check", "--fail-on", ""]).1.is_empty());
    }

    #[test]
    fn check_offers_only_the_formats_it_prints() {
        assert_eq!(
            values_for(&["check", "-o", ""]).0,
            ["table", "wide", "json", "yaml", "jsonl"]
        );
        assert_eq!(
            values_for(&["snapshots", "diff", "-o", ""]).0,
            ["table", "json", "yaml"]
        );
        assert_eq!(
            values_for(&["leases", "follow", "--output=j"]).0,
            ["--output=json"]
        );
        // serve takes no -o, and does not offer it.
        assert!(
            !values_for(&["serve", "--"])
                .0
                .contains(&"--output".to_string())
        );
        assert!(
            !values_for(&["serve", "--"])
                .0
                .contains(&"--from-file".to_string())
        );
    }

    #[test]
    fn the_wire_format_is_cobras() {
        let c = Completion {
            candidates: vec![
                ("check".into(), "Every check".into()),
                ("man".into(), String::new()),
            ],
            directive: 4,
        };
        assert_eq!(c.to_protocol(), "check\tEvery check\nman\n:4\n");
    }
}
