//! `k3sdoctor completions SHELL`.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn write(shell: Shell, bin_name: &str, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), bin_name, out);
}
