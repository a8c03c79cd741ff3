use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = k3sdoctor::cli::Cli::parse();
    ExitCode::from(k3sdoctor::run(cli, "k3sdoctor").code())
}
