//! The global options' help on its own, for `k3sdoctor options` (as `kubectl options`).

use clap::Args as _;

/// The global options' help, laid out for `width` columns.
pub fn text(name: &str, width: usize) -> String {
    let options = super::GlobalArgs::augment_args(
        clap::Command::new(name.to_string())
            .disable_help_flag(true)
            .disable_version_flag(true),
    )
    .term_width(width)
    .help_template("{all-args}");
    let mut options = options;
    format!(
        "The following options can be given before or after any command that uses them (a \
         command that does not use one refuses it; `{name} COMMAND --help` names the command's \
         own):\n\n{}\n",
        options.render_long_help().to_string().trim_end()
    )
}
