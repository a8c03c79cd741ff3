//! WATCH (`?watch=true`): the events after a resourceVersion, then every later write, one JSON
//! object per line (`{"type":"ADDED","object":{...}}`), until `timeoutSeconds` or the client
//! leaves. Changes between the requested resourceVersion and now are replayed as the net
//! change per object (ADDED / MODIFIED / DELETED), which is what a reflector converges to; a
//! compacted resourceVersion answers an ERROR event with a 410 `Status`, as the real server does
//! for "too old resource version".

use std::time::Duration;

use serde_json::{Value, json};

use super::handlers::Ctx;
use super::selectors::{FieldSelector, LabelSelector};
use super::state::State;
use super::status::{self, Reply, Result};
use super::store::{Snapshot, WatchEvent};

/// What a watch streams once its request is authorised; carried out by the server.
#[derive(Clone, Debug)]
pub(crate) struct WatchStart {
    /// Event lines to send first (replayed changes, or an ERROR).
    pub initial: Vec<Vec<u8>>,
    /// Whether to follow later writes (not after an ERROR).
    pub follow: bool,
    pub resource: &'static str,
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub timeout: Option<Duration>,
}

impl WatchStart {
    /// The event line for a later write, when this watch sees it.
    pub(super) fn line_for(&self, event: &WatchEvent) -> Option<Vec<u8>> {
        let namespace = event.object["metadata"]["namespace"].as_str().unwrap_or("");
        let visible = event.resource == self.resource
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
            && self.matches(&event.object);
        visible.then(|| line(event.event_type, &event.object))
    }

    fn matches(&self, object: &Value) -> bool {
        self.labels
            .matches(object["metadata"]["labels"].as_object())
            && self.fields.matches(object)
    }
}

fn line(event_type: &str, object: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({"type": event_type, "object": object}))
        .expect("serialisable event");
    line.push(b'\n');
    line
}

pub(crate) fn watch(
    state: &State,
    ctx: &Ctx,
    labels: LabelSelector,
    fields: FieldSelector,
    namespace: Option<&str>,
) -> Result<Reply> {
    let q = &ctx.req.query;
    let timeout = match q.get("timeoutSeconds").filter(|t| !t.is_empty()) {
        None => None,
        Some(t) => Some(Duration::from_secs(t.parse().map_err(|_| {
            status::bad_request(&format!(
                "strconv.ParseInt: parsing \"{t}\": invalid syntax"
            ))
        })?)),
    };
    let mut start = WatchStart {
        initial: Vec::new(),
        follow: true,
        resource: ctx.def.plural,
        namespace: namespace.map(str::to_string),
        labels,
        fields,
        timeout,
    };
    let store = &state.store;
    let visible = |items: Vec<Snapshot>| -> Vec<Snapshot> {
        items
            .into_iter()
            .filter(|i| start.matches(&i.object))
            .collect()
    };
    let now = visible(
        store
            .snapshot(ctx.def.plural, namespace, None)
            .unwrap_or_default(),
    );
    let initial = match q.get("resourceVersion").unwrap_or("") {
        // "Start at most recent" / "any": the current objects as ADDED, then the changes.
        "" | "0" => now.iter().map(|i| line("ADDED", &i.object)).collect(),
        rv => {
            let rv: u64 = rv
                .parse()
                .map_err(|_| status::bad_request(&format!("invalid resource version: {rv}")))?;
            match store.snapshot(ctx.def.plural, namespace, Some(rv.min(store.current_rv()))) {
                Ok(then) => replay(&visible(then), &now),
                Err(()) => {
                    start.follow = false;
                    let gone = status::status_value(
                        410,
                        "Expired",
                        &format!("too old resource version: {rv} ({})", store.compacted_rv()),
                        None,
                    );
                    vec![line("ERROR", &gone)]
                }
            }
        }
    };
    start.initial = initial;
    let mut reply = Reply::raw(200, "application/json", Vec::new());
    reply.watch = Some(Box::new(start));
    Ok(reply)
}

/// The net change per object from `then` to `now`, in key order.
fn replay(then: &[Snapshot], now: &[Snapshot]) -> Vec<Vec<u8>> {
    let rv = |o: &Value| o["metadata"]["resourceVersion"].clone();
    let mut lines = Vec::new();
    for item in now {
        match then.iter().find(|t| t.key == item.key) {
            None => lines.push(line("ADDED", &item.object)),
            Some(old) if rv(&old.object) != rv(&item.object) => {
                lines.push(line("MODIFIED", &item.object));
            }
            Some(_) => {}
        }
    }
    for old in then {
        if !now.iter().any(|n| n.key == old.key) {
            lines.push(line("DELETED", &old.object));
        }
    }
    lines
}
