//! `leases --watch` after the first table: one line (or one JSON/YAML document) per change,
//! as `kubectl get -w` prints one row per event.

use super::control_chars::escape_controls;
use std::io::Write;

use serde::Serialize;

use super::OutputFormat;
use super::leases::state_label;
use crate::diagnose::leases::lease_changes::{LockChange, LockSide};
use crate::report::API_VERSION;

/// A change as `-o json|yaml` streams it: `apiVersion`, `kind: LeaseChange`, then the change.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeaseChangeDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    #[serde(flatten)]
    pub change: &'a LockChange,
}

impl<'a> LeaseChangeDocument<'a> {
    pub(crate) fn new(change: &'a LockChange) -> Self {
        LeaseChangeDocument {
            api_version: API_VERSION,
            kind: "LeaseChange",
            change,
        }
    }
}

/// One document of a stream: JSON on one line, YAML after a `---` separator.
pub(crate) fn write_document<T: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    document: &T,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Yaml => {
            out.write_all(b"---\n")?;
            out.write_all(
                super::yaml_timestamps::quote_timestamps(&serde_yaml_ng::to_string(document)?)
                    .as_bytes(),
            )?;
        }
        _ => {
            super::json_escape::to_writer(&mut *out, document)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `TIME  LOCK  OLD → NEW  node NODE  transitions N  STATE[  split]`; what did not change is
/// shown once, what did as `old → new`.
pub(crate) fn write_line(out: &mut dyn Write, change: &LockChange) -> std::io::Result<()> {
    // Holders and node names come from the cluster: escaped, so one change stays one line.
    let holder = |side: &LockSide| {
        side.holder
            .as_deref()
            .map_or("-".into(), |h| escape_controls(h).into_owned())
    };
    let node = escape_controls(change.to.node.as_deref().unwrap_or("-"));
    let transitions = |side: &LockSide| side.transitions.map_or("-".into(), |t| t.to_string());
    let both = |old: String, new: String| {
        if old == new {
            new
        } else {
            format!("{old} → {new}")
        }
    };
    writeln!(
        out,
        "{}  {}  {} → {}  node {node}  transitions {}  {}{}",
        change.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        change.lock,
        holder(&change.from),
        holder(&change.to),
        both(transitions(&change.from), transitions(&change.to)),
        both(
            state_label(change.from.state).into(),
            state_label(change.to.state).into()
        ),
        if change.split { "  split" } else { "" },
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::leases::lock_status::{LockPurpose, LockState};

    fn change() -> LockChange {
        LockChange {
            time: "2024-05-31T12:10:40Z".parse().unwrap(),
            lock: "k3s".into(),
            purpose: LockPurpose::Core,
            from: LockSide {
                holder: Some("prod-k3s-1".into()),
                node: Some("prod-k3s-1".into()),
                state: LockState::Held,
                transitions: Some(3),
            },
            to: LockSide {
                holder: Some("prod-k3s-2".into()),
                node: Some("node-2".into()),
                state: LockState::Held,
                transitions: Some(4),
            },
            split: false,
        }
    }

    #[test]
    fn a_line_names_the_holders_the_new_node_and_what_changed() {
        let mut out = Vec::new();
        write_line(&mut out, &change()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2024-05-31T12:10:40Z  k3s  prod-k3s-1 → prod-k3s-2  node node-2  transitions 3 → 4  held\n"
        );
        let mut released = change();
        released.to = LockSide {
            holder: None,
            node: None,
            state: LockState::Released,
            transitions: Some(3),
        };
        released.split = true;
        let mut out = Vec::new();
        write_line(&mut out, &released).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2024-05-31T12:10:40Z  k3s  prod-k3s-1 → -  node -  transitions 3  held → released  split\n"
        );
    }

    #[test]
    fn json_streams_one_line_per_change_with_api_version_and_kind() {
        let change = change();
        let mut out = Vec::new();
        write_document(
            &mut out,
            OutputFormat::Json,
            &LeaseChangeDocument::new(&change),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["apiVersion"], "k3sdoctor.io/v1");
        assert_eq!(value["kind"], "LeaseChange");
        assert_eq!(value["lock"], "k3s");
        assert_eq!(value["purpose"], "core");
        assert_eq!(value["from"]["holder"], "prod-k3s-1");
        assert_eq!(value["to"]["node"], "node-2");
        assert_eq!(value["to"]["state"], "held");
        assert_eq!(value["to"]["transitions"], 4);
        assert_eq!(value["split"], false);
        assert_eq!(value["time"], "2024-05-31T12:10:40Z");
    }

    #[test]
    fn yaml_streams_separated_documents() {
        let change = change();
        let mut out = Vec::new();
        for _ in 0..2 {
            write_document(
                &mut out,
                OutputFormat::Yaml,
                &LeaseChangeDocument::new(&change),
            )
            .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("---\napiVersion: k3sdoctor.io/v1\nkind: LeaseChange\n"),
            "{text}"
        );
        assert_eq!(text.matches("---\n").count(), 2);
    }
}
