//! What an object holds when it is read again after a write whose answer was lost. Every
//! write carries the resourceVersion it was planned on, so the object either holds the
//! change, is as it was read, or was changed by another writer (and then ours, conditioned on
//! the old version, can no longer land).

/// What reading the object again showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Landed {
    /// It holds the planned change: the write landed.
    Written { resource_version: String },
    /// It is exactly as it was read before the write: the write did not land.
    NotWritten,
    /// It changed, but not to what was planned: what it shows now.
    ByOther(String),
}

impl Landed {
    /// The sentence after "read again, <object> ".
    pub(crate) fn describe(&self) -> String {
        match self {
            Landed::Written { resource_version } => format!(
                "holds the planned change (resourceVersion {resource_version}): the write landed"
            ),
            Landed::NotWritten => "is unchanged: the write did not land".to_string(),
            Landed::ByOther(what) => {
                format!("{what}: another writer changed it and this run's change is not in it")
            }
        }
    }
}

/// A ConfigMap write: `before` is the resourceVersion it was planned on (`None`: it was to be
/// created); `now` is (resourceVersion, whether it holds every planned change) as read
/// again, `None` when it does not exist.
pub(crate) fn configmap_landed(before: Option<&str>, now: Option<(&str, bool)>) -> Landed {
    match (before, now) {
        (None, None) => Landed::NotWritten,
        (Some(_), None) => Landed::ByOther("is gone".to_string()),
        (_, Some((rv, true))) => Landed::Written {
            resource_version: rv.to_string(),
        },
        (Some(was), Some((rv, false))) if was == rv => Landed::NotWritten,
        (None, Some((rv, false))) => Landed::ByOther(format!(
            "was created without the planned entries (resourceVersion {rv})"
        )),
        (Some(_), Some((rv, false))) => Landed::ByOther(format!(
            "changed without the planned entries (resourceVersion {rv})"
        )),
    }
}

/// One copy of a lock moved from `from` to `to`: `before` is the resourceVersion the write
/// carried; `now` is (resourceVersion, holder) as read again, `None` when it is gone.
pub(crate) fn lock_landed(before: &str, now: Option<(&str, &str)>, from: &str, to: &str) -> Landed {
    match now {
        None => Landed::ByOther("is gone".to_string()),
        Some((rv, holder)) if holder == to => Landed::Written {
            resource_version: rv.to_string(),
        },
        Some((rv, _)) if rv == before => Landed::NotWritten,
        Some((_, holder)) if holder == from && !from.is_empty() => {
            Landed::ByOther(format!("was renewed by its holder {from:?}"))
        }
        Some((_, holder)) => Landed::ByOther(format!("names {holder:?} now")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configmap_holding_the_plan_was_written_whatever_else_changed() {
        assert_eq!(
            configmap_landed(Some("10"), Some(("12", true))),
            Landed::Written {
                resource_version: "12".into()
            }
        );
        assert_eq!(
            configmap_landed(None, Some(("3", true))),
            Landed::Written {
                resource_version: "3".into()
            }
        );
    }

    #[test]
    fn a_configmap_at_its_old_version_was_not_written() {
        assert_eq!(
            configmap_landed(Some("10"), Some(("10", false))),
            Landed::NotWritten
        );
        assert_eq!(configmap_landed(None, None), Landed::NotWritten);
    }

    #[test]
    fn a_configmap_changed_otherwise_was_written_by_someone_else() {
        assert!(matches!(
            configmap_landed(Some("10"), Some(("11", false))),
            Landed::ByOther(w) if w.contains("resourceVersion 11")
        ));
        assert!(matches!(
            configmap_landed(Some("10"), None),
            Landed::ByOther(w) if w == "is gone"
        ));
        assert!(matches!(
            configmap_landed(None, Some(("4", false))),
            Landed::ByOther(w) if w.starts_with("was created")
        ));
    }

    #[test]
    fn a_lock_naming_the_target_was_written() {
        assert_eq!(
            lock_landed("5", Some(("7", "s2")), "s1", "s2"),
            Landed::Written {
                resource_version: "7".into()
            }
        );
    }

    #[test]
    fn a_lock_unchanged_or_renewed_by_its_holder_was_not_written_by_us() {
        assert_eq!(
            lock_landed("5", Some(("5", "s1")), "s1", "s2"),
            Landed::NotWritten
        );
        assert!(matches!(
            lock_landed("5", Some(("6", "s1")), "s1", "s2"),
            Landed::ByOther(w) if w.contains("renewed by its holder \"s1\"")
        ));
        assert!(matches!(
            lock_landed("5", Some(("6", "s3")), "s1", "s2"),
            Landed::ByOther(w) if w == "names \"s3\" now"
        ));
        assert!(matches!(
            lock_landed("5", None, "s1", "s2"),
            Landed::ByOther(_)
        ));
        // A released lock taken by anyone but the target is another writer's.
        assert!(matches!(
            lock_landed("5", Some(("6", "")), "", "s2"),
            Landed::ByOther(w) if w == "names \"\" now"
        ));
    }

    #[test]
    fn each_outcome_is_one_sentence_that_says_whether_it_landed() {
        assert!(
            Landed::Written {
                resource_version: "7".into()
            }
            .describe()
            .ends_with("the write landed")
        );
        assert!(Landed::NotWritten.describe().ends_with("did not land"));
        assert!(
            Landed::ByOther("names \"s3\" now".into())
                .describe()
                .contains("this run's change is not in it")
        );
    }
}
