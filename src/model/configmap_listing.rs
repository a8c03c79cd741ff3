//! What a pasted `kubectl get configmaps` table (`NAME DATA AGE`) shows of kube-system: which
//! of the ConfigMaps k3sdoctor reads exist, and how many entries each holds (the DATA column).
//! Never their keys, values or sizes: a count, not the entries.

use std::collections::BTreeMap;

/// What the pasted ConfigMap tables showed, over every such table read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ConfigMapListing {
    /// The pasted file, for messages (the first, when several were read).
    pub file: String,
    /// Entry counts (DATA) of the snapshot ConfigMaps listed in kube-system, by name.
    pub entries: BTreeMap<String, usize>,
    /// A table listed every ConfigMap in kube-system (no names chosen, no selector), so one it
    /// does not list does not exist.
    pub whole_namespace: bool,
}

/// What the listing says of one ConfigMap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    /// It exists and holds this many entries.
    Entries(usize),
    /// Every ConfigMap in kube-system was listed and this one was not: it does not exist.
    Absent,
    /// Only chosen ConfigMaps were listed, not this one: whether it exists is not shown.
    NotShown,
}

impl ConfigMapListing {
    pub(crate) fn shows(&self, name: &str) -> Listed {
        match self.entries.get(name) {
            Some(n) => Listed::Entries(*n),
            None if self.whole_namespace => Listed::Absent,
            None => Listed::NotShown,
        }
    }

    /// Another table's rows into this one: a ConfigMap listed twice keeps the later count.
    pub(crate) fn merge(&mut self, other: ConfigMapListing) {
        if self.file.is_empty() {
            self.file = other.file;
        }
        self.entries.extend(other.entries);
        self.whole_namespace |= other.whole_namespace;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_of_chosen_names_says_nothing_of_another() {
        let mut listing = ConfigMapListing {
            file: "a.txt".into(),
            entries: BTreeMap::from([("k3s-etcd-snapshots".into(), 3)]),
            whole_namespace: false,
        };
        assert_eq!(listing.shows("k3s-etcd-snapshots"), Listed::Entries(3));
        assert_eq!(listing.shows("rke2-etcd-snapshots"), Listed::NotShown);
        listing.merge(ConfigMapListing {
            file: "b.txt".into(),
            entries: BTreeMap::new(),
            whole_namespace: true,
        });
        assert_eq!(listing.file, "a.txt");
        assert_eq!(listing.shows("rke2-etcd-snapshots"), Listed::Absent);
        assert_eq!(listing.shows("k3s-etcd-snapshots"), Listed::Entries(3));
    }
}
