//! `k3sdoctor completions SHELL`, and the answers for kubectl's plugin completion.

use std::io::Write;

use clap_complete::Shell;

use crate::cli::complete::complete;

/// A static script for the executable `script_name` (`k3sdoctor` or `kubectl-k3s_doctor`).
pub fn write(shell: Shell, script_name: &str, out: &mut dyn Write) {
    clap_complete::generate(
        shell,
        &mut crate::cli::command_for_scripts(script_name),
        script_name,
        out,
    );
}

/// Cobra's `__complete` answer for the words kubectl passes.
pub fn write_kubectl_protocol(words: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(
        complete(&crate::cli::command(), words)
            .to_protocol()
            .as_bytes(),
    )?;
    out.flush()
}
