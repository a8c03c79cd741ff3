//! The name the program runs under: itself, a kubectl plugin, or kubectl's completion helper.

/// The name to show in help and messages: `kubectl-k3s_doctor` on PATH makes the tool a
/// kubectl plugin, invoked as `kubectl k3s-doctor`.
pub fn display_name(argv0: Option<&std::ffi::OsStr>) -> String {
    let base = argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    match base.strip_prefix("kubectl-") {
        Some(plugin) if !plugin.is_empty() => format!("kubectl {}", plugin.replace('_', "-")),
        _ => "k3sdoctor".to_string(),
    }
}

/// The executable a completion script completes: `kubectl-k3s_doctor` for the plugin (a
/// shell completes one word, and `kubectl k3s-doctor` is completed by kubectl itself).
pub fn script_name(display_name: &str) -> String {
    match display_name.strip_prefix("kubectl ") {
        Some(plugin) => format!("kubectl-{}", plugin.replace('-', "_")),
        None => display_name.to_string(),
    }
}

/// Whether we run as kubectl's completion helper for the plugin, `kubectl_complete-<plugin>`.
pub fn is_kubectl_completer(argv0: Option<&std::ffi::OsStr>) -> bool {
    argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|f| f.to_string_lossy())
        .is_some_and(|f| {
            f.strip_suffix(".exe")
                .unwrap_or(&f)
                .strip_prefix("kubectl_complete-")
                .is_some_and(|plugin| !plugin.is_empty())
        })
}

/// The words to complete when this run is a completion request, not a command: kubectl's
/// plugin completion runs `kubectl_complete-k3s_doctor WORD...`, and the bash, zsh and fish
/// scripts run `k3sdoctor __complete WORD...` (Cobra's hidden command, by the same name).
pub fn completion_request(args: &[std::ffi::OsString]) -> Option<Vec<String>> {
    let words = |skip: usize| {
        args.iter()
            .skip(skip)
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    };
    if is_kubectl_completer(args.first().map(|a| a.as_os_str())) {
        return Some(words(1));
    }
    (args.get(1).is_some_and(|w| w == "__complete")).then(|| words(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_plugin_names() {
        use std::ffi::OsStr;
        assert_eq!(
            display_name(Some(OsStr::new("/usr/local/bin/kubectl-k3s_doctor"))),
            "kubectl k3s-doctor"
        );
        assert_eq!(display_name(Some(OsStr::new("k3sdoctor"))), "k3sdoctor");
        assert_eq!(
            display_name(Some(OsStr::new("./target/release/k3sdoctor"))),
            "k3sdoctor"
        );
        assert_eq!(display_name(None), "k3sdoctor");
        assert_eq!(script_name("kubectl k3s-doctor"), "kubectl-k3s_doctor");
        assert_eq!(script_name("k3sdoctor"), "k3sdoctor");
        assert!(is_kubectl_completer(Some(OsStr::new(
            "/usr/bin/kubectl_complete-k3s_doctor"
        ))));
        assert!(!is_kubectl_completer(Some(OsStr::new(
            "kubectl-k3s_doctor"
        ))));
        assert!(!is_kubectl_completer(Some(OsStr::new("kubectl_complete-"))));
    }
}
