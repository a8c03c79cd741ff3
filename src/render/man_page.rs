//! Man pages laid out as man-pages(7) asks: NAME, SYNOPSIS, DESCRIPTION, COMMANDS, OPTIONS,
//! EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE ALSO. clap_mangen renders the title, name,
//! description and options from the same definitions as `--help`; the rest is written here,
//! because clap_mangen's synopsis drops value placeholders and its command list names a page
//! for clap's `help` that is never shipped.

use std::io::Write;

use clap::{Arg, Command};

/// The heading the global flags carry in `--help` (the `cli` module's global arguments).
const GLOBAL_HEADING: &str = "Global options";

/// Everything a page says beyond the clap definitions.
pub(crate) struct PageText<'a> {
    /// The page's name: `k3sdoctor`, `k3sdoctor-leases-follow`.
    pub name: &'a str,
    /// The words that run the command: `k3sdoctor leases follow`.
    pub path: &'a [&'a str],
    /// The exit codes and their meanings.
    pub exit_codes: &'a [(u8, &'a str)],
    /// Paragraphs after them.
    pub exit_notes: &'a [&'a str],
    /// The other pages shipped with this one, for SEE ALSO.
    pub related: &'a [String],
    /// Extra sections in roff, placed after the options (the finding codes on the main page).
    pub extra_roff: &'a str,
    /// Whether the command reads a cluster (and so its environment and files matter).
    pub reads_cluster: bool,
}

pub(crate) fn write_page(
    out: &mut dyn Write,
    cmd: &Command,
    text: &PageText<'_>,
) -> std::io::Result<()> {
    let version = cmd.get_version().unwrap_or_default();
    let man = clap_mangen::Man::new(cmd.clone().name(text.name.to_string()));
    // No date: the pages are generated and committed, and must not change by the day.
    writeln!(
        out,
        r#".TH {} 1 "" "k3sdoctor {}" "User Commands""#,
        escape(&text.name.to_uppercase()),
        version
    )?;
    // Flags and page names are not to be hyphenated where a line breaks.
    writeln!(out, ".nh")?;
    man.render_name_section(out)?;
    write_synopsis(out, cmd, text.path)?;
    man.render_description_section(out)?;
    write_commands(out, cmd, text.name)?;
    man.render_options_section(out)?;
    out.write_all(text.extra_roff.as_bytes())?;
    write_exit_status(out, text.exit_codes, text.exit_notes)?;
    if text.reads_cluster {
        out.write_all(ENVIRONMENT_AND_FILES.as_bytes())?;
    }
    write_examples(out, cmd)?;
    write_see_also(out, text.name, text.related)
}

/// `k3sdoctor [--kubeconfig FILE] ... leases follow [--fix] [--to NODE|HOSTNAME] ...`: the
/// global options go before the command words, where they are always accepted.
fn write_synopsis(out: &mut dyn Write, cmd: &Command, path: &[&str]) -> std::io::Result<()> {
    let visible = |global: bool| {
        cmd.get_arguments()
            .filter(move |a| !a.is_hide_set())
            .filter(move |a| (a.get_help_heading() == Some(GLOBAL_HEADING)) == global)
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .map(synopsis_arg)
            .collect::<Vec<_>>()
    };
    // An empty path is the program alone.
    let (program, words) = path.split_first().unwrap_or((&"k3sdoctor", &[]));
    let mut line = vec![format!("\\fB{}\\fR", escape(program))];
    line.extend(visible(true));
    if !words.is_empty() {
        line.push(format!("\\fB{}\\fR", escape(&words.join(" "))));
    }
    line.extend(visible(false));
    if cmd.has_subcommands() {
        line.push("\\fICOMMAND\\fR".to_string());
    }
    writeln!(out, ".SH SYNOPSIS")?;
    writeln!(out, ".ad l")?;
    writeln!(out, "{}", line.join(" "))?;
    writeln!(out, ".ad b")
}

/// `[--to NODE|HOSTNAME]`, `[-o table|wide|json|yaml]`, `SHELL`, `[-v]...`.
fn synopsis_arg(arg: &Arg) -> String {
    let placeholder = || {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        // The values themselves say more than the placeholder clap derives from the field.
        if !values.is_empty() {
            return values.join("|");
        }
        match arg.get_value_names() {
            Some(names) => names
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            None => arg.get_id().as_str().to_uppercase(),
        }
    };
    if arg.is_positional() {
        let value = format!("\\fI{}\\fR", escape(&placeholder()));
        return if arg.is_required_set() {
            value
        } else {
            format!("[{value}]")
        };
    }
    let flag = match (arg.get_short(), arg.get_long()) {
        (Some(s), _) if arg.get_long().is_none() => format!("-{s}"),
        (_, Some(l)) => format!("--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, None) => arg.get_id().to_string(),
    };
    let takes_value = arg.get_action().takes_values();
    let mut text = format!("\\fB{}\\fR", escape(&flag));
    if takes_value {
        text.push_str(&format!(" \\fI{}\\fR", escape(&placeholder())));
    }
    let repeats = matches!(
        arg.get_action(),
        clap::ArgAction::Count | clap::ArgAction::Append
    );
    format!("[{text}]{}", if repeats { "..." } else { "" })
}

/// The subcommands, each with the page that describes it; clap's `help` is left out, since
/// it has no page.
fn write_commands(out: &mut dyn Write, cmd: &Command, name: &str) -> std::io::Result<()> {
    let subs: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
        .collect();
    if subs.is_empty() {
        return Ok(());
    }
    writeln!(out, ".SH COMMANDS")?;
    for sub in subs {
        writeln!(out, ".TP")?;
        writeln!(out, "\\fB{}\\fR", escape(sub.get_name()))?;
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let stop = if about.ends_with('.') { "" } else { "." };
        writeln!(out, "{}{stop}", escape(&about))?;
        writeln!(
            out,
            "See \\fB{}\\fR(1).",
            escape(&format!("{name}-{}", sub.get_name()))
        )?;
    }
    Ok(())
}

/// One tagged paragraph per code, then the notes as plain paragraphs: text written for
/// `--help`'s layout (pre-wrapped, `  0  meaning`) made tags of whatever word began a line.
fn write_exit_status(
    out: &mut dyn Write,
    codes: &[(u8, &str)],
    notes: &[&str],
) -> std::io::Result<()> {
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in codes {
        writeln!(out, ".TP\n.B {code}\n{}", escape(meaning))?;
    }
    for note in notes {
        writeln!(out, ".PP\n{}", escape(note))?;
    }
    Ok(())
}

const ENVIRONMENT_AND_FILES: &str = r#".SH ENVIRONMENT
.TP
.B KUBECONFIG
A colon-separated list of kubeconfig files, merged as kubectl merges them; used when
\fB\-\-kubeconfig\fR is not given.
.TP
.B HOME
Where \fI~/.kube/config\fR is looked for when \fBKUBECONFIG\fR is unset.
.TP
.BR KUBERNETES_SERVICE_HOST ", " KUBERNETES_SERVICE_PORT
Inside a pod without a kubeconfig: the API server to use, with the pod's service account.
.TP
.B NO_COLOR
When set and not empty, no colour even on a terminal (as with \fB\-\-color never\fR).
.SH FILES
.TP
.I ~/.kube/config
The kubeconfig used when neither \fB\-\-kubeconfig\fR nor \fBKUBECONFIG\fR is given.
.TP
.I /var/run/secrets/kubernetes.io/serviceaccount/
The service account token and CA used in a pod.
.TP
.IR /etc/rancher/k3s/k3s.yaml ", " /etc/rancher/rke2/rke2.yaml
The admin kubeconfigs k3s and RKE2 write on a server. Never read unless passed with
\fB\-\-kubeconfig\fR; the error for a missing kubeconfig names them.
"#;

/// The examples that end the command's `--help`, in an example block.
fn write_examples(out: &mut dyn Write, cmd: &Command) -> std::io::Result<()> {
    let help = cmd
        .get_after_long_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let Some((_, examples)) = help.split_once("Examples:\n") else {
        return Ok(());
    };
    // The top-level help continues with the exit codes, which have their own section.
    let examples = examples.split("\nExit codes:").next().unwrap_or_default();
    writeln!(out, ".SH EXAMPLES")?;
    // A comment is a filled paragraph (it may span lines in `--help`); a command is set as
    // typed, with its `\`-continued lines, indented 2 so a 71-column line fits 80 columns.
    let mut in_command = false;
    let mut in_comment = false;
    for line in examples.trim().lines() {
        let trimmed = line.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            if in_command {
                writeln!(out, ".fi\n.RE")?;
                in_command = false;
            }
            if !in_comment {
                writeln!(out, ".PP")?;
            }
            writeln!(out, "{}", escape(comment.trim()))?;
            in_comment = true;
        } else if trimmed.is_empty() {
            if in_command {
                writeln!(out, ".fi\n.RE")?;
                in_command = false;
            }
            in_comment = false;
        } else {
            in_comment = false;
            if !in_command {
                writeln!(out, ".RS 2\n.nf")?;
                in_command = true;
            }
            // Continuation lines keep their extra indent under the command.
            let continued = line.strip_prefix("  ").unwrap_or(line);
            writeln!(out, "\\fB{}\\fR", escape(continued))?;
        }
    }
    if in_command {
        writeln!(out, ".fi\n.RE")?;
    }
    Ok(())
}

fn write_see_also(out: &mut dyn Write, name: &str, related: &[String]) -> std::io::Result<()> {
    writeln!(out, ".SH \"SEE ALSO\"")?;
    let mut refs: Vec<String> = related
        .iter()
        .filter(|r| r.as_str() != name)
        .map(|r| format!(".BR {} (1),", escape(r)))
        .collect();
    refs.push(".BR kubectl (1),".to_string());
    refs.push(".BR k3s (1)".to_string());
    writeln!(out, ".ad l\n{}\n.ad b", refs.join("\n"))
}

/// Text as roff prints it literally: hyphens as minus signs (so they can be searched and
/// pasted), backslashes escaped, and no line read as a request.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synopsis_placeholders() {
        let arg = Arg::new("to").long("to").value_name("NODE|HOSTNAME");
        assert_eq!(
            synopsis_arg(&arg),
            "[\\fB\\-\\-to\\fR \\fINODE|HOSTNAME\\fR]"
        );
        let arg = Arg::new("output")
            .short('o')
            .long("output")
            .value_parser(["table", "json"]);
        assert_eq!(
            synopsis_arg(&arg),
            "[\\fB\\-\\-output\\fR \\fItable|json\\fR]"
        );
        let arg = Arg::new("v").short('v').action(clap::ArgAction::Count);
        assert_eq!(synopsis_arg(&arg), "[\\fB\\-v\\fR]...");
    }

    #[test]
    fn escaping_keeps_text_literal() {
        assert_eq!(escape("--fix"), "\\-\\-fix");
        assert_eq!(escape(".hidden"), "\\&.hidden");
        assert_eq!(escape("a\\b"), "a\\eb");
    }
}
