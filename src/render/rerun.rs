//! The connection flags a run used, put into every command it tells the user to run next, so
//! a pasted command targets the same cluster. Pure.

/// Quotes a word for POSIX shells: bare when it is plainly safe, single-quoted otherwise.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The flags, already quoted: ` --kubeconfig F --context C` (kubectl spells them the same) and,
/// for k3sdoctor, an explicit `--distro`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RerunFlags {
    pub kubectl: String,
    pub k3sdoctor: String,
}

impl RerunFlags {
    pub(crate) fn new(
        kubeconfig: Option<&str>,
        context: Option<&str>,
        distro: Option<&str>,
    ) -> Self {
        let mut kubectl = String::new();
        if let Some(path) = kubeconfig {
            kubectl.push_str(&format!(" --kubeconfig {}", shell_quote(path)));
        }
        if let Some(context) = context {
            kubectl.push_str(&format!(" --context {}", shell_quote(context)));
        }
        let mut k3sdoctor = kubectl.clone();
        if let Some(distro) = distro {
            k3sdoctor.push_str(&format!(" --distro {}", shell_quote(distro)));
        }
        RerunFlags { kubectl, k3sdoctor }
    }

    /// Inserts the flags after every `k3sdoctor` that starts one of its commands and every
    /// `kubectl` that starts a kubectl command; prose that merely names the tool is left alone.
    pub(crate) fn apply(&self, text: &str) -> String {
        if self.k3sdoctor.is_empty() {
            return text.to_string();
        }
        let text = insert_after(
            text,
            "k3sdoctor ",
            &["leases", "snapshots", "check"],
            &self.k3sdoctor,
        );
        insert_after(
            &text,
            "kubectl ",
            &["-n ", "get ", "patch ", "edit "],
            &self.kubectl,
        )
    }
}

fn insert_after(text: &str, program: &str, starts: &[&str], flags: &str) -> String {
    if flags.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + flags.len());
    let mut rest = text;
    while let Some(i) = rest.find(program) {
        let after = &rest[i + program.len()..];
        out.push_str(&rest[..i]);
        if starts.iter().any(|s| after.starts_with(s)) {
            out.push_str(program.trim_end());
            out.push_str(flags);
            out.push(' ');
        } else {
            out.push_str(program);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_paths_and_names_intact_in_a_shell() {
        assert_eq!(
            shell_quote("/etc/rancher/k3s/k3s.yaml"),
            "/etc/rancher/k3s/k3s.yaml"
        );
        assert_eq!(shell_quote("my ctx"), "'my ctx'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(rm -rf)"), "'$(rm -rf)'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn commands_get_the_flags_and_prose_does_not() {
        let flags = RerunFlags::new(Some("/tmp/a b/kc.yaml"), Some("prod"), Some("rke2"));
        assert_eq!(
            flags.apply(
                "k3sdoctor leases follow --fix (moves rke2); or k3sdoctor snapshots backfill --fix"
            ),
            "k3sdoctor --kubeconfig '/tmp/a b/kc.yaml' --context prod --distro rke2 leases follow --fix (moves rke2); \
             or k3sdoctor --kubeconfig '/tmp/a b/kc.yaml' --context prod --distro rke2 snapshots backfill --fix"
        );
        assert_eq!(
            flags.apply("finish now with: kubectl -n kube-system patch lease k3s"),
            "finish now with: kubectl --kubeconfig '/tmp/a b/kc.yaml' --context prod -n kube-system patch lease k3s"
        );
        assert_eq!(
            flags.apply("k3sdoctor only moves the k3s locks"),
            "k3sdoctor only moves the k3s locks"
        );
        assert_eq!(
            RerunFlags::default().apply("k3sdoctor leases"),
            "k3sdoctor leases"
        );
    }
}
