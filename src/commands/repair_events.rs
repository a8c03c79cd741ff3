//! Recording a person's repair as an Event: the kubeconfig user and context say who asked,
//! and a failure to record it is a note on stderr (the repair's exit code stays its own).

use super::Ui;
use crate::events::event_apply::record_event;
use crate::events::repair_event::{RepairEvent, asked_by_user};
use crate::input::connect::Connection;

/// `<command>, run by <user> (context <context>)`.
pub(super) fn asked_by(conn: &Connection, command: &str) -> String {
    asked_by_user(command, conn.user.as_deref(), conn.context.as_deref())
}

/// Records `event` now (the local clock: the Event says when it was recorded).
pub(super) async fn record(conn: &Connection, ui: &Ui, event: &RepairEvent) {
    match record_event(conn, event, jiff::Timestamp::now()).await {
        Ok(name) => ui.trace(&format!(
            "recorded Event kube-system/{name} ({})",
            event.reason.as_str()
        )),
        Err(line) => ui.note(&line),
    }
}
