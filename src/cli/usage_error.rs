//! A command line clap refuses, told in the tool's one-line error format (README, "Exit
//! codes"): clap's message and hints on one line, and the `--help` to read.

/// A command line clap refused, and the (sub)command it was for (`k3sdoctor leases follow`),
/// whose `--help` the error line points to.
#[derive(Debug)]
pub struct UsageError {
    pub error: clap::Error,
    pub command_path: String,
    /// `-v` was given: `--version -v` prints the build details (`k3sdoctor version`).
    pub verbose: bool,
}

/// The program and the subcommands named on the command line, as far as they are known.
pub(super) fn command_path(command: &clap::Command, args: &[std::ffi::OsString]) -> String {
    let mut path = vec![command.get_name().to_string()];
    let mut current = command;
    for arg in args.iter().skip(1).map(|a| a.to_string_lossy()) {
        if let Some(sub) = current.find_subcommand(arg.as_ref()) {
            path.push(sub.get_name().to_string());
            current = sub;
        }
    }
    path.join(" ")
}

/// A usage error in the tool's own one-line format (`k3sdoctor: error: …` is added by the
/// caller): clap's message, its hints (`tip: …`, `[possible values: …]`) on the same line, and
/// the `--help` to read; `None` for what clap prints as is (`--help`, `--version`, the help
/// shown when no command is given).
pub fn one_line_usage_error(usage: &UsageError) -> Option<String> {
    use clap::error::ErrorKind;
    let e = &usage.error;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return None;
    }
    let rendered = e.render().to_string();
    let mut message = String::new();
    let mut hints: Vec<&str> = Vec::new();
    let mut help = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("error: ") {
            message = rest.to_string();
        } else if let Some(usage) = line.strip_prefix("Usage: ") {
            // `k3sdoctor check [OPTIONS]` → `k3sdoctor check`.
            let words: Vec<&str> = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            help = Some(words.join(" "));
        } else if !line.starts_with("For more information") {
            let hint = line.strip_prefix("tip: ").unwrap_or(line);
            hints.push(
                hint.strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(hint),
            );
        }
    }
    if message.is_empty() {
        message = e.kind().to_string();
    }
    for hint in hints {
        message.push_str("; ");
        message.push_str(hint);
    }
    let help = help.unwrap_or_else(|| usage.command_path.clone());
    Some(format!("{message}; see `{help} --help`"))
}
