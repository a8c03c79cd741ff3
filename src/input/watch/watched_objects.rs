//! One watch's view of a set of objects, kept as the plain facts the analysers read. Pure: the
//! watch events come in, the current set comes out, so relists and deletions are unit-tested
//! without a server.

use std::collections::BTreeMap;

use kube::runtime::watcher::Event;

/// The objects one watch has seen, by name.
#[derive(Debug, Clone)]
pub(super) struct WatchedObjects<T> {
    objects: BTreeMap<String, T>,
    /// A relist in progress: its objects replace `objects` only once it is complete, so an
    /// evaluation never sees half a list (and never reports a lock missing mid-relist). `None`
    /// for an object whose facts equal the ones already in `objects`: those are moved over at
    /// the end instead of being held twice, so a relist after a 410 does not double the peak
    /// (50,000 ETCDSnapshotFiles).
    relisting: Option<BTreeMap<String, Option<T>>>,
    synced: bool,
}

impl<T> Default for WatchedObjects<T> {
    fn default() -> Self {
        WatchedObjects {
            objects: BTreeMap::new(),
            relisting: None,
            synced: false,
        }
    }
}

/// What one event did to the visible set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    None,
    /// An object changed only as its kind's `renewal_only` allows (a lock's renewTime).
    Renewal,
    Changed,
}

impl<T: Clone + PartialEq> WatchedObjects<T> {
    /// Applies one watch event; `true` when the visible set changed.
    pub(super) fn apply<K>(
        &mut self,
        event: Event<K>,
        name: impl Fn(&K) -> String,
        facts: impl Fn(&K) -> T,
    ) -> bool {
        self.apply_telling_renewals(event, name, facts, |_, _| false) != Change::None
    }

    /// [`WatchedObjects::apply`], telling an update that `renewal_only(old, new)` calls a mere
    /// renewal from other changes.
    pub(super) fn apply_telling_renewals<K>(
        &mut self,
        event: Event<K>,
        name: impl Fn(&K) -> String,
        facts: impl Fn(&K) -> T,
        renewal_only: impl Fn(&T, &T) -> bool,
    ) -> Change {
        let change = |yes: bool| if yes { Change::Changed } else { Change::None };
        match event {
            Event::Init => {
                self.relisting = Some(BTreeMap::new());
                Change::None
            }
            Event::InitApply(object) => {
                let (name, new) = (name(&object), facts(&object));
                let kept = (self.objects.get(&name) != Some(&new)).then_some(new);
                self.relisting
                    .get_or_insert_with(BTreeMap::new)
                    .insert(name, kept);
                Change::None
            }
            Event::InitDone => {
                let listed = self.relisting.take().unwrap_or_default();
                let changed = !self.synced
                    || listed.len() != self.objects.len()
                    || listed.values().any(Option::is_some);
                let mut old = std::mem::take(&mut self.objects);
                self.objects = listed
                    .into_iter()
                    .filter_map(|(name, new)| {
                        let facts = new.or_else(|| old.remove(&name))?;
                        Some((name, facts))
                    })
                    .collect();
                self.synced = true;
                change(changed)
            }
            Event::Apply(object) => {
                let new = facts(&object);
                match self.objects.insert(name(&object), new.clone()) {
                    Some(old) if old == new => Change::None,
                    Some(old) if renewal_only(&old, &new) => Change::Renewal,
                    _ => Change::Changed,
                }
            }
            Event::Delete(object) => change(self.objects.remove(&name(&object)).is_some()),
        }
    }

    /// Whether the first list has completed.
    pub(super) fn synced(&self) -> bool {
        self.synced
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.objects.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(set: &mut WatchedObjects<String>, event: Event<(&str, &str)>) -> bool {
        set.apply(event, |o| o.0.to_string(), |o| o.1.to_string())
    }

    /// A relist of `objects`, not yet done.
    fn relist_partly(set: &mut WatchedObjects<String>, objects: &[(&str, &str)]) {
        apply(set, Event::Init);
        for &object in objects {
            apply(set, Event::InitApply(object));
        }
    }

    /// A whole (re)list of `objects`; whether it changed what is visible.
    fn relist(set: &mut WatchedObjects<String>, objects: &[(&str, &str)]) -> bool {
        relist_partly(set, objects);
        apply(set, Event::InitDone)
    }

    fn contents(set: &WatchedObjects<String>) -> Vec<&str> {
        set.values().map(String::as_str).collect()
    }

    #[test]
    fn a_list_becomes_visible_only_when_complete() {
        let mut set = WatchedObjects::default();
        assert!(!apply(&mut set, Event::Init));
        assert!(!apply(&mut set, Event::InitApply(("k3s", "a"))));
        assert!(!set.synced());
        assert!(contents(&set).is_empty());
        assert!(apply(&mut set, Event::InitDone));
        assert!(set.synced());
        assert_eq!(contents(&set), ["a"]);
    }

    #[test]
    fn an_empty_first_list_still_counts_as_a_change_so_the_first_evaluation_runs() {
        let mut set = WatchedObjects::default();
        assert!(relist(&mut set, &[]));
        assert!(set.synced());
    }

    #[test]
    fn a_relist_drops_what_was_deleted_while_the_watch_was_down() {
        let mut set = WatchedObjects::default();
        relist(&mut set, &[("k3s", "a"), ("k3s-etcd", "b")]);
        relist_partly(&mut set, &[("k3s", "a")]);
        assert_eq!(contents(&set), ["a", "b"], "old set kept during a relist");
        assert!(apply(&mut set, Event::InitDone));
        assert_eq!(contents(&set), ["a"]);
    }

    #[test]
    fn a_relist_holds_only_what_changed_a_second_time() {
        let mut set = WatchedObjects::default();
        relist(&mut set, &[("a", "1"), ("b", "2")]);
        relist_partly(&mut set, &[("a", "1"), ("b", "3")]);
        let pending = set.relisting.as_ref().unwrap();
        assert_eq!(pending["a"], None, "unchanged facts are not held twice");
        assert_eq!(pending["b"].as_deref(), Some("3"));
        assert!(apply(&mut set, Event::InitDone));
        assert_eq!(contents(&set), ["1", "3"]);
    }

    #[test]
    fn a_relist_that_only_drops_an_object_is_a_change() {
        let mut set = WatchedObjects::default();
        relist(&mut set, &[("a", "1"), ("b", "2")]);
        assert!(relist(&mut set, &[("b", "2")]));
        assert_eq!(contents(&set), ["2"]);
    }

    #[test]
    fn an_identical_relist_is_no_change() {
        let mut set = WatchedObjects::default();
        assert!(relist(&mut set, &[("k3s", "a")]));
        assert!(!relist(&mut set, &[("k3s", "a")]));
    }

    #[test]
    fn a_renewal_is_told_from_other_changes() {
        let mut set = WatchedObjects::default();
        relist(&mut set, &[("k3s", "s1 renewed 10:00")]);
        let same_holder = |old: &String, new: &String| old[..2] == new[..2];
        let mut apply = |event| {
            set.apply_telling_renewals(
                event,
                |o: &(&str, &str)| o.0.into(),
                |o| o.1.into(),
                same_holder,
            )
        };
        assert_eq!(
            apply(Event::Apply(("k3s", "s1 renewed 10:02"))),
            Change::Renewal
        );
        assert_eq!(
            apply(Event::Apply(("k3s", "s1 renewed 10:02"))),
            Change::None
        );
        assert_eq!(
            apply(Event::Apply(("k3s", "s2 renewed 10:03"))),
            Change::Changed
        );
        assert_eq!(
            apply(Event::Apply(("k3s-etcd", "s2 renewed 10:03"))),
            Change::Changed
        );
    }

    #[test]
    fn updates_and_deletes_report_whether_anything_visible_changed() {
        let mut set = WatchedObjects::default();
        relist(&mut set, &[]);
        assert!(apply(&mut set, Event::Apply(("k3s", "a"))));
        assert!(!apply(&mut set, Event::Apply(("k3s", "a"))));
        assert!(apply(&mut set, Event::Apply(("k3s", "b"))));
        assert_eq!(contents(&set), ["b"]);
        assert!(apply(&mut set, Event::Delete(("k3s", "b"))));
        assert!(!apply(&mut set, Event::Delete(("k3s", "b"))));
        assert!(contents(&set).is_empty());
    }
}
