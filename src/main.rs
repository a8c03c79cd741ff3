use std::process::ExitCode;

fn main() -> ExitCode {
    let name = k3sdoctor::cli::display_name(std::env::args_os().next().as_deref());
    let cli = k3sdoctor::cli::parse_as(&name);
    ExitCode::from(k3sdoctor::run(cli, &name).code())
}
