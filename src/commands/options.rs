//! `k3sdoctor options`: the global options, once, as `kubectl options` prints them; every
//! subcommand's help leaves them out and points here.

use std::io::Write;

use crate::cli::global_options::text;

pub(crate) fn write(name: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let text = text(name, crate::cli::help_width());
    // The intro is one line here; wrap it like the rest of the help.
    let (intro, rest) = text.split_once("\n\n").unwrap_or((&text, ""));
    crate::render::wrap::write_wrapped(out, intro, "", "", crate::cli::help_width())?;
    writeln!(out)?;
    out.write_all(rest.as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_global_option_is_listed_once() {
        let text = crate::cli::global_options::text("k3sdoctor", 100);
        for flag in [
            "--kubeconfig",
            "--context",
            "--from-file",
            "--no-headers",
            "--color",
        ] {
            assert_eq!(
                text.matches(&format!("{flag} ")).count()
                    + text.matches(&format!("{flag}\n")).count(),
                1,
                "{flag}:\n{text}"
            );
        }
    }
}
