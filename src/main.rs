use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(words) = k3sdoctor::cli::completion_request(&args) {
        return ExitCode::from(k3sdoctor::complete(&words).code());
    }
    let name = k3sdoctor::cli::display_name(args.first().map(|a| a.as_os_str()));
    match k3sdoctor::cli::parse_as(&name) {
        Ok(cli) => ExitCode::from(k3sdoctor::run(cli, &name).code()),
        Err(e) => ExitCode::from(k3sdoctor::usage_error(&e, &name).code()),
    }
}
