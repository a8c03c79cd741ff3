//! One shape for every optional read: read, or exactly why not. A check that needs what was
//! not read says "not checked" with that reason, never a healthy result.

/// What became of one read a check needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Collected<T> {
    /// Not asked for by this command, or not yet (serve before its first read).
    #[default]
    NotAsked,
    Read(T),
    /// The dump or bundle does not hold it: what it lacks and the kubectl command that adds it.
    NotInDump(String),
    /// The API server refused it (403): what was refused and the role that grants it.
    Refused(String),
    /// The read failed otherwise: the error.
    Failed(String),
}

impl<T> Collected<T> {
    pub(crate) fn as_read(&self) -> Option<&T> {
        match self {
            Collected::Read(t) => Some(t),
            _ => None,
        }
    }

    /// Why it was not read; `None` when it was, or was not asked for.
    pub(crate) fn why_not(&self) -> Option<&str> {
        match self {
            Collected::NotInDump(why) | Collected::Refused(why) | Collected::Failed(why) => {
                Some(why)
            }
            Collected::NotAsked | Collected::Read(_) => None,
        }
    }

    /// The same outcome with the value read turned by `f`.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Collected<U> {
        match self {
            Collected::NotAsked => Collected::NotAsked,
            Collected::Read(t) => Collected::Read(f(t)),
            Collected::NotInDump(why) => Collected::NotInDump(why),
            Collected::Refused(why) => Collected::Refused(why),
            Collected::Failed(why) => Collected::Failed(why),
        }
    }

    /// Changes the value read with `change`, starting from `empty` the first time a reader
    /// finds one: a dump adds its objects one at a time.
    pub(crate) fn add(&mut self, empty: impl FnOnce() -> T, change: impl FnOnce(&mut T)) {
        if let Collected::Read(t) = self {
            change(t);
            return;
        }
        let mut t = empty();
        change(&mut t);
        *self = Collected::Read(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_read_has_objects_and_only_a_failure_has_a_reason() {
        let read: Collected<Vec<u8>> = Collected::Read(vec![1]);
        assert_eq!(read.as_read(), Some(&vec![1]));
        assert_eq!(read.why_not(), None);
        assert_eq!(Collected::<u8>::NotAsked.why_not(), None);
        for not in [
            Collected::<u8>::NotInDump("x".into()),
            Collected::Refused("x".into()),
            Collected::Failed("x".into()),
        ] {
            assert_eq!(not.why_not(), Some("x"));
            assert!(not.as_read().is_none());
        }
    }

    #[test]
    fn a_dump_reader_starts_a_read_once_and_adds_to_it() {
        let mut c: Collected<Vec<u8>> = Collected::NotAsked;
        c.add(Vec::new, |v| v.push(1));
        c.add(Vec::new, |v| v.push(2));
        assert_eq!(c, Collected::Read(vec![1, 2]));
        assert_eq!(c.map(|v| v.len()), Collected::Read(2));
        assert_eq!(
            Collected::<u8>::Refused("r".into()).map(|_| ()),
            Collected::Refused("r".into())
        );
    }
}
