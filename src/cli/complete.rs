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

mod cluster_values;
#[cfg(test)]
mod tests;

pub use cluster_values::{ClusterValues, Dynamic, NoClusterValues, TypedFlags};

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
    let Walked {
        cmd,
        pending_value,
        positionals,
        only_positionals,
        flags_typed,
    } = walk(&root, typed);
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

/// Where the words typed so far leave the command line: the (sub)command reached, a flag
/// waiting for its value, how many positionals were given, whether `--` ended the flags, and
/// the flags' values (which the cluster's values may depend on).
struct Walked<'a> {
    cmd: &'a Command,
    pending_value: Option<&'a Arg>,
    positionals: usize,
    only_positionals: bool,
    flags_typed: TypedFlags,
}

fn walk<'a>(root: &'a Command, typed: &[String]) -> Walked<'a> {
    let mut cmd = root;
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
    Walked {
        cmd,
        pending_value,
        positionals,
        only_positionals,
        flags_typed,
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
