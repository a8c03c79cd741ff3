//! The object store: one global, monotonically increasing resourceVersion like etcd's revision,
//! a history of changes (so paged LISTs read a consistent snapshot at the token's revision, as
//! etcd does, samples 110–112), and a broadcast of every change for a future watch endpoint.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast;

/// Where an object lives: resource plural, namespace (`""` when cluster-scoped), name.
/// Ordered like etcd keys (`/registry/<resource>/<namespace>/<name>`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    pub resource: &'static str,
    pub namespace: String,
    pub name: String,
}

/// One change, as a watch would report it (`ADDED`, `MODIFIED`, `DELETED`).
#[derive(Clone, Debug)]
pub(crate) struct WatchEvent {
    pub event_type: &'static str,
    pub resource: &'static str,
    pub resource_version: u64,
    /// The object after the change (the last state for `DELETED`).
    pub object: Value,
}

struct Change {
    rv: u64,
    key: Key,
    previous: Option<Value>,
}

struct Entry {
    object: Value,
    /// Creation order; the watch cache (`resourceVersion=0` lists) does not sort by key.
    created: u64,
}

/// An object as read at some revision.
pub(crate) struct Snapshot {
    pub key: Key,
    pub object: Value,
    pub created: u64,
}

pub(crate) struct Store {
    rv: u64,
    compacted: u64,
    created_counter: u64,
    objects: BTreeMap<Key, Entry>,
    history: Vec<Change>,
    events: broadcast::Sender<WatchEvent>,
}

impl Store {
    pub(super) fn new(first_rv: u64) -> Store {
        let (events, _) = broadcast::channel(1024);
        Store {
            rv: first_rv,
            compacted: 0,
            created_counter: 0,
            objects: BTreeMap::new(),
            history: Vec::new(),
            events,
        }
    }

    pub(super) fn current_rv(&self) -> u64 {
        self.rv
    }

    /// Jump the revision forward. Backwards only before the first write: resourceVersions handed
    /// out stay monotonic.
    pub(super) fn advance_to(&mut self, rv: u64) {
        let untouched =
            self.objects.is_empty() && self.history.is_empty() && self.created_counter == 0;
        assert!(
            untouched || rv >= self.rv,
            "resourceVersion {rv} is older than the current {}",
            self.rv
        );
        self.rv = rv;
    }

    pub(super) fn compacted_rv(&self) -> u64 {
        self.compacted
    }

    pub(super) fn get(&self, key: &Key) -> Option<&Value> {
        self.objects.get(key).map(|e| &e.object)
    }

    /// Create or replace: bumps the revision and stamps it into `metadata.resourceVersion`.
    pub(super) fn write(&mut self, key: Key, mut object: Value) -> Value {
        self.rv += 1;
        object["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let previous = self.objects.get(&key).map(|e| e.object.clone());
        let created = match self.objects.get(&key) {
            Some(e) => e.created,
            None => {
                self.created_counter += 1;
                self.created_counter
            }
        };
        let event_type = if previous.is_some() {
            "MODIFIED"
        } else {
            "ADDED"
        };
        self.history.push(Change {
            rv: self.rv,
            key: key.clone(),
            previous,
        });
        self.objects.insert(
            key.clone(),
            Entry {
                object: object.clone(),
                created,
            },
        );
        self.publish(event_type, &key, object.clone());
        object
    }

    /// Remove: bumps the revision. Returns the last state.
    pub(super) fn delete(&mut self, key: &Key) -> Option<Value> {
        let entry = self.objects.remove(key)?;
        self.rv += 1;
        self.history.push(Change {
            rv: self.rv,
            key: key.clone(),
            previous: Some(entry.object.clone()),
        });
        let mut last = entry.object.clone();
        last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.publish("DELETED", key, last);
        Some(entry.object)
    }

    fn publish(&self, event_type: &'static str, key: &Key, object: Value) {
        // Nobody listening is fine.
        let _ = self.events.send(WatchEvent {
            event_type,
            resource: key.resource,
            resource_version: self.rv,
            object,
        });
    }

    pub(super) fn subscribe(&self) -> broadcast::Receiver<WatchEvent> {
        self.events.subscribe()
    }

    /// Forget history up to now: older revisions answer 410 Expired (samples 115, 132).
    pub(super) fn compact(&mut self) {
        self.compacted = self.rv;
        self.history.clear();
    }

    /// All objects of `resource` (optionally in one namespace) as of revision `at` (`None` = now),
    /// sorted by key. `Err(())` when `at` has been compacted.
    pub(super) fn snapshot(
        &self,
        resource: &str,
        namespace: Option<&str>,
        at: Option<u64>,
    ) -> Result<Vec<Snapshot>, ()> {
        let in_scope =
            |k: &Key| k.resource == resource && namespace.is_none_or(|ns| k.namespace == ns);
        let mut view: BTreeMap<Key, (Value, u64)> = self
            .objects
            .iter()
            .filter(|(k, _)| in_scope(k))
            .map(|(k, e)| (k.clone(), (e.object.clone(), e.created)))
            .collect();
        if let Some(at) = at {
            if at < self.compacted {
                return Err(());
            }
            for change in self.history.iter().rev().take_while(|c| c.rv > at) {
                if !in_scope(&change.key) {
                    continue;
                }
                match &change.previous {
                    Some(prev) => {
                        let created = view.get(&change.key).map_or(u64::MAX, |(_, c)| *c);
                        view.insert(change.key.clone(), (prev.clone(), created));
                    }
                    None => {
                        view.remove(&change.key);
                    }
                }
            }
        }
        Ok(view
            .into_iter()
            .map(|(key, (object, created))| Snapshot {
                key,
                object,
                created,
            })
            .collect())
    }

    /// Every current object of `resource`, sorted by key.
    pub(super) fn all(&self, resource: &str) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|(k, _)| k.resource == resource)
            .map(|(_, e)| e.object.clone())
            .collect()
    }
}

/// A random version-4 UUID (no dependency needed: std's `RandomState` is randomly seeded).
pub(crate) fn new_uid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let random = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed) ^ salt);
        h.finish()
    };
    let (a, b) = (random(1), random(2));
    let bytes: Vec<u8> = a.to_be_bytes().into_iter().chain(b.to_be_bytes()).collect();
    let hex: String = bytes
        .iter()
        .enumerate()
        .map(|(i, byte)| match i {
            6 => format!("{:02x}", (byte & 0x0f) | 0x40),
            8 => format!("{:02x}", (byte & 0x3f) | 0x80),
            _ => format!("{byte:02x}"),
        })
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A lowercase alphanumeric suffix for `metadata.generateName` (5 chars, like the apiserver).
pub(crate) fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let uid = new_uid().replace('-', "");
    uid.as_bytes()
        .chunks(2)
        .take(5)
        .map(|pair| {
            ALPHABET[(u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("0"), 16).unwrap_or(0)
                as usize)
                % ALPHABET.len()] as char
        })
        .collect()
}
