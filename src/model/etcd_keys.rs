//! The `etcd.<prog>.cattle.io/…` labels or annotations of an ETCDSnapshotFile: one or two
//! short entries per CR, kept as one boxed slice. A `BTreeMap` allocates a node of about 540
//! bytes for its first entry, and every CR has two of them: at 50,000 CRs that alone was
//! 50 MiB.

/// Key-value pairs in key order; lookups are a scan of one or two entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct EtcdKeys(Box<[(Box<str>, Box<str>)]>);

impl EtcdKeys {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, String)> for EtcdKeys {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> EtcdKeys {
        let mut pairs: Vec<(Box<str>, Box<str>)> = pairs
            .into_iter()
            .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
            .collect();
        pairs.sort();
        pairs.dedup_by(|a, b| a.0 == b.0);
        EtcdKeys(pairs.into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_kept_and_nothing_else() {
        let keys: EtcdKeys = [
            (
                "etcd.k3s.cattle.io/snapshot-token-hash".to_string(),
                "37831a857fac".to_string(),
            ),
            (
                "etcd.k3s.cattle.io/snapshot-storage-node".to_string(),
                "n1".to_string(),
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            keys.get("etcd.k3s.cattle.io/snapshot-storage-node"),
            Some("n1")
        );
        assert_eq!(
            keys.get("etcd.k3s.cattle.io/snapshot-token-hash"),
            Some("37831a857fac")
        );
        assert_eq!(keys.get("etcd.rke2.cattle.io/snapshot-storage-node"), None);
        assert_eq!(keys.len(), 2);
        assert!(EtcdKeys::default().is_empty());
    }
}
