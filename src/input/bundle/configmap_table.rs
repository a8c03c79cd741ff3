//! `kubectl get configmaps -n kube-system` (also `-A`, and `kubectl get configmap NAME`): a
//! table headed `NAME DATA AGE`, with NAMESPACE first under `-A`. DATA is the number of
//! entries; the keys, values and sizes are not shown. Only the snapshot ConfigMaps
//! (`<prog>-etcd-snapshots`, `<prog>-etcd-snapshot-extra-metadata`) are kept, so a hostile
//! table of a million rows holds a handful of counts. Whether the table lists the whole
//! namespace (so a ConfigMap it lacks does not exist) is read from the pasted command line,
//! or, without one, from a row only a listing shows: `extension-apiserver-authentication`,
//! which the API server keeps in kube-system.

use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::model::configmap_listing::ConfigMapListing;

/// No ConfigMap holds more entries than bytes: the API server limits its data to 1 MiB.
const MOST_ENTRIES: usize = 1_048_576;

/// The ConfigMap only a listing of kube-system shows beside the others.
const LISTING_MARKER: &str = "extension-apiserver-authentication";

pub(super) fn is_header(words: &[&str]) -> bool {
    matches!(
        words,
        ["NAME", "DATA", "AGE"] | ["NAMESPACE", "NAME", "DATA", "AGE"]
    )
}

/// The table read: the counts kept, and how many rows were not readable.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ConfigMapTable {
    pub listing: ConfigMapListing,
    pub rows: usize,
    /// Rows that are not `[NAMESPACE] NAME DATA AGE` with DATA a count a ConfigMap can hold.
    pub unreadable: usize,
}

/// The rows under `header`, with the pasted `command` line when there was one.
pub(super) fn rows<'a>(
    header: &str,
    command: Option<&str>,
    lines: impl Iterator<Item = &'a str>,
) -> ConfigMapTable {
    let with_namespace = header.split_whitespace().next() == Some("NAMESPACE");
    let scope = command.and_then(Scope::of);
    // Without a NAMESPACE column the rows are in the namespace the command names, else the
    // one the table is pasted for.
    let default_namespace = scope
        .as_ref()
        .and_then(|s| s.namespace.clone())
        .unwrap_or_else(|| LOCK_NAMESPACE.to_string());
    let kept: Vec<String> = Distro::ALL
        .iter()
        .flat_map(|d| [d.snapshots_configmap(), d.extra_metadata_configmap()])
        .collect();
    let mut table = ConfigMapTable {
        listing: ConfigMapListing::default(),
        rows: 0,
        unreadable: 0,
    };
    let mut marker = false;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        table.rows += 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        let (namespace, name, data) = match (with_namespace, &words[..]) {
            (true, [namespace, name, data, _age]) => (*namespace, *name, *data),
            (false, [name, data, _age]) => (default_namespace.as_str(), *name, *data),
            _ => {
                table.unreadable += 1;
                continue;
            }
        };
        let Some(count) = data.parse::<usize>().ok().filter(|n| *n <= MOST_ENTRIES) else {
            table.unreadable += 1;
            continue;
        };
        if namespace != LOCK_NAMESPACE {
            continue;
        }
        marker |= name == LISTING_MARKER;
        if kept.iter().any(|k| k == name) {
            table.listing.entries.insert(name.to_string(), count);
        }
    }
    // A row that could not be read may be the one the verdict needs: then the table shows
    // the ConfigMaps it names, not which are absent.
    table.listing.whole_namespace = table.unreadable == 0
        && match scope {
            Some(scope) => scope.is_whole_kube_system(),
            None => marker,
        };
    table
}

/// What a pasted `kubectl get configmaps …` command line asked for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Scope {
    namespace: Option<String>,
    all_namespaces: bool,
    /// Names given (`kubectl get cm NAME`), or a selector: not every ConfigMap.
    chosen: bool,
}

/// Flags of `kubectl get` that take a value as the next word.
const VALUED_FLAGS: &[&str] = &[
    "-o",
    "--output",
    "--kubeconfig",
    "--context",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--sort-by",
    "-L",
    "--label-columns",
    "--chunk-size",
    "--request-timeout",
    "--token",
    "--as",
    "--template",
];

impl Scope {
    /// The scope of `line` when it runs `kubectl get` on ConfigMaps; `None` when it does not
    /// (then the line says nothing about the table).
    fn of(line: &str) -> Option<Scope> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let kubectl = words
            .iter()
            .position(|w| *w == "kubectl" || w.ends_with("/kubectl"))?;
        let mut scope = Scope::default();
        let mut resource = None;
        let mut get = false;
        let mut rest = words[kubectl + 1..].iter();
        while let Some(word) = rest.next() {
            let word = *word;
            if let Some(ns) = word.strip_prefix("--namespace=") {
                scope.namespace = Some(ns.to_string());
            } else if word == "-n" || word == "--namespace" {
                scope.namespace = rest.next().map(|n| n.to_string());
            } else if let Some(ns) = word.strip_prefix("-n").filter(|n| !n.is_empty()) {
                scope.namespace = Some(ns.to_string());
            } else if word == "-A" || word == "--all-namespaces" {
                scope.all_namespaces = true;
            } else if ["-l", "--selector", "--field-selector"].contains(&word)
                || ["--selector=", "--field-selector=", "-l"]
                    .iter()
                    .any(|p| word.starts_with(p))
            {
                scope.chosen = true;
            } else if VALUED_FLAGS.contains(&word) {
                rest.next();
            } else if word.starts_with('-') {
            } else if !get {
                get = word == "get";
                if !get {
                    return None;
                }
            } else if resource.is_none() {
                resource = Some(word);
            } else {
                scope.chosen = true;
            }
        }
        let resource = resource?;
        let (kind, name) = resource.split_once('/').unwrap_or((resource, ""));
        if !["cm", "configmap", "configmaps"].contains(&kind) {
            return None;
        }
        scope.chosen |= !name.is_empty();
        Some(scope)
    }

    fn is_whole_kube_system(&self) -> bool {
        !self.chosen && (self.all_namespaces || self.namespace.as_deref() == Some(LOCK_NAMESPACE))
    }
}

/// The counts a table gives, for `source.notes`: `k3s-etcd-snapshots 12`.
pub(super) fn describe(listing: &ConfigMapListing) -> String {
    if listing.entries.is_empty() {
        return "no snapshot ConfigMap".to_string();
    }
    listing
        .entries
        .iter()
        .map(|(name, n)| format!("{name} with {n} entr{}", if *n == 1 { "y" } else { "ies" }))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::configmap_listing::Listed;

    const LISTING: &str = "\
chart-content-traefik                  0      41d
cluster-dns                            2      41d
extension-apiserver-authentication     6      41d
k3s-etcd-snapshot-extra-metadata       1      41d
k3s-etcd-snapshots                     0      41d
kube-root-ca.crt                       1      41d
";

    #[test]
    fn a_listing_keeps_the_snapshot_configmaps_counts_and_knows_it_is_whole() {
        let table = rows("NAME DATA AGE", None, LISTING.lines());
        assert_eq!((table.rows, table.unreadable), (6, 0));
        let l = &table.listing;
        assert_eq!(l.shows("k3s-etcd-snapshots"), Listed::Entries(0));
        assert_eq!(
            l.shows("k3s-etcd-snapshot-extra-metadata"),
            Listed::Entries(1)
        );
        assert_eq!(l.shows("rke2-etcd-snapshots"), Listed::Absent);
        assert!(!l.entries.contains_key("cluster-dns"), "only what is read");
    }

    #[test]
    fn a_get_of_one_name_says_nothing_of_the_others() {
        let one = "k3s-etcd-snapshot-extra-metadata   1   41d\n";
        for command in [
            Some("$ kubectl get configmap k3s-etcd-snapshot-extra-metadata -n kube-system"),
            Some("$ kubectl -n kube-system get cm/k3s-etcd-snapshot-extra-metadata"),
            Some("$ kubectl get cm -n kube-system -l app=x"),
            None,
        ] {
            let table = rows("NAME DATA AGE", command, one.lines());
            assert_eq!(
                table.listing.shows("k3s-etcd-snapshots"),
                Listed::NotShown,
                "{command:?}"
            );
        }
        // The marker row, but a command naming it: still chosen names.
        let table = rows(
            "NAME DATA AGE",
            Some(
                "$ kubectl get cm extension-apiserver-authentication k3s-etcd-snapshots -n kube-system",
            ),
            LISTING.lines(),
        );
        assert_eq!(table.listing.shows("rke2-etcd-snapshots"), Listed::NotShown);
    }

    #[test]
    fn the_command_line_decides_the_scope_and_namespace() {
        let row = "k3s-etcd-snapshots   12   41d\n";
        for command in [
            "$ kubectl get cm -n kube-system",
            "root@s1:~# k3s kubectl get configmaps --namespace=kube-system",
            "$ /var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml get cm -nkube-system",
        ] {
            let table = rows("NAME DATA AGE", Some(command), row.lines());
            assert_eq!(
                table.listing.shows("k3s-etcd-snapshots"),
                Listed::Entries(12)
            );
            assert_eq!(
                table.listing.shows("rke2-etcd-snapshots"),
                Listed::Absent,
                "{command}"
            );
        }
        // Another namespace's ConfigMap of that name is not the one k3s writes.
        let table = rows(
            "NAME DATA AGE",
            Some("$ kubectl get cm -n default"),
            row.lines(),
        );
        assert_eq!(table.listing.shows("k3s-etcd-snapshots"), Listed::NotShown);
    }

    #[test]
    fn all_namespaces_reads_kube_system_rows_only() {
        let text = "\
default       k3s-etcd-snapshots   9   1d
kube-system   k3s-etcd-snapshots   3   41d
";
        let table = rows(
            "NAMESPACE NAME DATA AGE",
            Some("$ kubectl get cm -A"),
            text.lines(),
        );
        assert_eq!(
            table.listing.shows("k3s-etcd-snapshots"),
            Listed::Entries(3)
        );
        assert!(table.listing.whole_namespace);
    }

    #[test]
    fn hostile_counts_and_ragged_rows_are_unreadable_and_end_the_claim_of_absence() {
        let text = "\
extension-apiserver-authentication   6   41d
k3s-etcd-snapshots   99999999999999999999999999   41d
rke2-etcd-snapshots   -1   41d
x\u{7}\u{1b}[2J   2   1d
a b
a b c d e
";
        let table = rows("NAME DATA AGE", None, text.lines());
        assert_eq!((table.rows, table.unreadable), (6, 4));
        assert!(table.listing.entries.is_empty());
        assert_eq!(table.listing.shows("k3s-etcd-snapshots"), Listed::NotShown);
        let big = format!("k3s-etcd-snapshots {} 1d\n", MOST_ENTRIES + 1);
        assert_eq!(rows("NAME DATA AGE", None, big.lines()).unreadable, 1);
    }

    #[test]
    fn only_kubectls_configmap_headers_are_read() {
        assert!(is_header(&["NAME", "DATA", "AGE"]));
        assert!(is_header(&["NAMESPACE", "NAME", "DATA", "AGE"]));
        assert!(
            !is_header(&["NAME", "TYPE", "DATA", "AGE"]),
            "a Secret table"
        );
        assert!(!is_header(&["NAME", "DATA"]));
    }
}
