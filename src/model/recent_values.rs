//! Sharing equal values between ETCDSnapshotFiles read one after another. Every CR k3s writes
//! carries the extra-metadata ConfigMap's data as it was at snapshot time (Rancher's
//! `provisioning-cluster-spec`, often kilobytes) and, for S3, the same bucket settings: tens of
//! thousands of copies of a handful of values. Each value is compared with the few
//! met most recently and, when equal, shares their allocation.
//!
//! The cache is per thread and holds at most [`KEPT`] values, so it never grows with the
//! cluster and never keeps much alive after a read.

use std::cell::RefCell;
use std::sync::Arc;

/// How many distinct recent values are remembered per type: the metadata changes rarely (when
/// Rancher edits the ConfigMap), a cluster has one or two S3 targets, and the storage-node
/// label takes one value per server plus `s3`.
const KEPT: usize = 8;

/// Per-thread lists of recently seen values of one type.
pub(super) struct Recent<T: 'static>(&'static std::thread::LocalKey<RefCell<Vec<Arc<T>>>>);

impl<T: PartialEq + 'static> Recent<T> {
    pub(super) const fn new(
        cache: &'static std::thread::LocalKey<RefCell<Vec<Arc<T>>>>,
    ) -> Recent<T> {
        Recent(cache)
    }

    /// `value`, sharing the allocation of an equal value seen recently.
    pub(super) fn share(&self, value: T) -> Arc<T> {
        self.0.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(i) = cache.iter().position(|seen| **seen == value) {
                let seen = cache.remove(i);
                cache.push(Arc::clone(&seen));
                return seen;
            }
            let value = Arc::new(value);
            if cache.len() == KEPT {
                cache.remove(0);
            }
            cache.push(Arc::clone(&value));
            value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SEEN: RefCell<Vec<Arc<String>>> = const { RefCell::new(Vec::new()) };
    }
    static STRINGS: Recent<String> = Recent::new(&SEEN);

    #[test]
    fn equal_values_share_one_allocation_and_the_cache_stays_small() {
        let a = STRINGS.share("spec".to_string());
        let b = STRINGS.share("spec".to_string());
        assert!(Arc::ptr_eq(&a, &b));
        for i in 0..10 {
            STRINGS.share(i.to_string());
        }
        SEEN.with(|s| assert_eq!(s.borrow().len(), KEPT));
        let c = STRINGS.share("spec".to_string());
        assert!(!Arc::ptr_eq(&a, &c), "forgotten after KEPT others");
        assert_eq!(a, c);
    }
}
