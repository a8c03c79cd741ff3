use std::process::ExitCode;

fn main() -> ExitCode {
    let argv0 = std::env::args_os().next();
    if k3sdoctor::cli::is_kubectl_completer(argv0.as_deref()) {
        let words: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        return ExitCode::from(k3sdoctor::complete_for_kubectl(&words).code());
    }
    let name = k3sdoctor::cli::display_name(argv0.as_deref());
    match k3sdoctor::cli::parse_as(&name) {
        Ok(cli) => ExitCode::from(k3sdoctor::run(cli, &name).code()),
        Err(e) => ExitCode::from(k3sdoctor::usage_error(&e, &name).code()),
    }
}
