//! `cert-expiring` and `ca-cert-expiring`: the cert monitor's Events on each server's Node.
//! The monitor warns inside its own windows (90
//! days for leaf certificates, 365 for CAs); each date is judged again against `now`, so a
//! certificate within 14 days, or past its date, is an error.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::cert_warning::{CA_WARNING, CertLine, CertState, LEAF_WARNING, OK, cert_lines};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::node_event::NodeEvent;
use crate::version::CERT_MONITOR;

const URGENT: SignedDuration = SignedDuration::from_hours(14 * 24);

/// Why the Event checks cannot run on `state`, or `None` when they can.
pub(crate) fn events_not_checked(state: &ClusterState) -> Option<String> {
    match &state.node_events {
        Collected::Read(_) => None,
        // serve reads them every minute; until its first read, nothing is known.
        Collected::NotAsked => Some("Events not read yet (serve reads them every minute)".into()),
        lacking => lacking.why_not().map(str::to_string),
    }
}

/// The servers whose version records no certificate Events, as a note for the check's line
/// (their silence is not "fine"), and whether that is every server: then nothing could be
/// judged and the check is listed as not run.
pub(crate) fn unmonitored_servers(state: &ClusterState, distro: Distro) -> Option<(String, bool)> {
    let servers: Vec<_> = state.nodes().iter().filter(|n| n.is_server()).collect();
    let old: Vec<String> = servers
        .iter()
        .filter_map(|n| {
            let v = n.version.as_ref()?;
            (v.has_cert_monitor() == Some(false)).then(|| format!("{} ({v})", n.name))
        })
        .collect();
    (!old.is_empty()).then(|| {
        let note = format!(
            "certificate expiry not published by this version on {}: the cert monitor came in \
             {} (run `{} certificate check` there)",
            old.join(", "),
            CERT_MONITOR.listed(),
            distro.prog()
        );
        (note, old.len() == servers.len())
    })
}

pub(crate) fn analyse_cert_expiry(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    let Some(events) = state.node_events.as_read() else {
        return Vec::new();
    };
    let mut newest: BTreeMap<(&str, &str), &NodeEvent> = BTreeMap::new();
    for e in events {
        if [LEAF_WARNING, CA_WARNING, OK].contains(&e.reason.as_str()) {
            let slot = newest
                .entry((e.node.as_str(), e.reason.as_str()))
                .or_insert(e);
            if e.last_seen > slot.last_seen {
                *slot = e;
            }
        }
    }
    let mut findings = Vec::new();
    for ((node, reason), event) in &newest {
        let code = match *reason {
            LEAF_WARNING => FindingCode::CertExpiring,
            CA_WARNING => FindingCode::CaCertExpiring,
            _ => continue,
        };
        // The OK Event comes once, after a restart; a warning seen before it is over.
        let ok = newest.get(&(*node, OK));
        if ok.is_some_and(|ok| ok.last_seen >= event.last_seen) {
            continue;
        }
        findings.push(finding(node, code, event, distro, now));
    }
    findings
}

fn finding(
    node: &str,
    code: FindingCode,
    event: &NodeEvent,
    distro: Distro,
    now: Timestamp,
) -> Finding {
    let lines = cert_lines(&event.message);
    let urgent = lines.iter().any(|l| match l.state {
        Some(CertState::Expiring(at)) | Some(CertState::Expired(at)) => {
            at.duration_since(now) <= URGENT
        }
        Some(CertState::NotYetValid(from)) => from > now,
        None => false,
    });
    let shown: Vec<String> = lines.iter().map(|l| describe(l, now)).collect();
    let prog = distro.prog();
    let seen = event
        .last_seen
        .map(|t| {
            format!(
                " (last recorded {})",
                crate::age::relative(now.duration_since(t))
            )
        })
        .unwrap_or_default();
    let (what, window, fix) = match code {
        FindingCode::CaCertExpiring => (
            "CA certificates",
            365,
            format!(
                "plan a CA rotation: `{prog} certificate rotate-ca` with new CA files, then \
                 restart every server and agent ({})",
                match distro {
                    Distro::K3s => "https://docs.k3s.io/cli/certificate",
                    Distro::Rke2 => "https://docs.rke2.io/security/certificates",
                }
            ),
        ),
        _ => (
            "certificates",
            90,
            format!(
                "restart {prog} on {node} ({prog} renews its leaf certificates on restart \
                 within 90 days of expiry), then `{prog} certificate check` there"
            ),
        ),
    };
    let message = format!(
        "{prog}'s cert monitor on {node} reports {} {what} inside its {window}-day window{seen}: {}",
        lines.len(),
        if shown.is_empty() {
            event.message.clone()
        } else {
            shown.join("; ")
        }
    );
    let severity = if urgent {
        Severity::Error
    } else {
        Severity::Warning
    };
    Finding::new(severity, code, format!("Node {node}"), message).fix(fix)
}

fn describe(line: &CertLine, now: Timestamp) -> String {
    let subject = if line.subject.is_empty() {
        String::new()
    } else {
        format!(" ({})", line.subject)
    };
    let when = match &line.state {
        Some(CertState::Expiring(at)) => format!(
            "expires {at} ({})",
            crate::age::relative(now.duration_since(*at))
        ),
        Some(CertState::Expired(at)) => format!(
            "expired {at} ({})",
            crate::age::relative(now.duration_since(*at))
        ),
        Some(CertState::NotYetValid(from)) => format!("not valid before {from}"),
        None => "date not read".into(),
    };
    format!("{}{subject} {when}", line.file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::test_cluster::{TestCluster, now};

    const LEAF: &str = "Node certificates require attention - restart k3s on this node to trigger automatic rotation: ";

    fn leaf_at(at: &str) -> String {
        format!(
            "{LEAF}api-server/client-kube-apiserver.crt: certificate CN=system:apiserver will expire within 90 days at {at}"
        )
    }

    fn cluster() -> TestCluster {
        TestCluster::k3s().server("s1", "v1.29.4+k3s1")
    }

    #[test]
    fn a_certificate_inside_the_window_is_a_warning_and_names_node_file_and_date() {
        let state = cluster()
            .node_event("s1", LEAF_WARNING, &leaf_at("2024-07-20T00:00:00Z"), 600)
            .build();
        let f = analyse_cert_expiry(&state, Distro::K3s, now());
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code, f[0].severity),
            (FindingCode::CertExpiring, Severity::Warning)
        );
        assert_eq!(f[0].object, "Node s1");
        assert!(
            f[0].message
                .contains("api-server/client-kube-apiserver.crt"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("2024-07-20T00:00:00Z"),
            "{}",
            f[0].message
        );
        assert!(f[0].remediation.starts_with("restart k3s on s1"));
    }

    #[test]
    fn within_fourteen_days_or_expired_is_an_error() {
        let soon = cluster()
            .node_event("s1", LEAF_WARNING, &leaf_at("2024-06-10T00:00:00Z"), 600)
            .build();
        assert_eq!(
            analyse_cert_expiry(&soon, Distro::K3s, now())[0].severity,
            Severity::Error
        );
        let past = format!(
            "{LEAF}admin/client-admin.crt: certificate CN=system:admin expired at 2024-05-01T00:00:00Z"
        );
        let expired = cluster().node_event("s1", LEAF_WARNING, &past, 600).build();
        assert_eq!(
            analyse_cert_expiry(&expired, Distro::K3s, now())[0].severity,
            Severity::Error
        );
    }

    #[test]
    fn a_later_ok_supersedes_and_an_earlier_one_does_not() {
        let warning = leaf_at("2024-07-20T00:00:00Z");
        let healed = cluster()
            .node_event("s1", LEAF_WARNING, &warning, 3000)
            .node_event(
                "s1",
                OK,
                "Node and Certificate Authority certificates managed by k3s are OK",
                60,
            )
            .build();
        assert!(analyse_cert_expiry(&healed, Distro::K3s, now()).is_empty());
        let still = cluster()
            .node_event("s1", OK, "ok", 3000)
            .node_event("s1", LEAF_WARNING, &warning, 60)
            .build();
        assert_eq!(analyse_cert_expiry(&still, Distro::K3s, now()).len(), 1);
    }

    #[test]
    fn the_ca_variant_has_its_own_code_and_fix() {
        let msg = "Certificate Authority certificates require attention - check k3s documentation and begin planning rotation: \
                   server/client-ca.crt: certificate CN=k3s-client-ca@1 will expire within 365 days at 2025-01-01T00:00:00Z";
        let state = cluster().node_event("s1", CA_WARNING, msg, 60).build();
        let f = analyse_cert_expiry(&state, Distro::K3s, now());
        assert_eq!(
            (f[0].code, f[0].severity),
            (FindingCode::CaCertExpiring, Severity::Warning)
        );
        assert!(f[0].remediation.contains("k3s certificate rotate-ca"));
    }

    #[test]
    fn old_servers_get_a_note_and_unread_events_are_not_checked() {
        let state = TestCluster::k3s().server("s1", "v1.28.8+k3s1").build();
        let (note, every) = unmonitored_servers(&state, Distro::K3s).unwrap();
        assert!(note.contains("s1 (v1.28.8+k3s1)") && every, "{note}");
        let mixed = TestCluster::k3s()
            .server("s1", "v1.28.8+k3s1")
            .server("s2", "v1.29.4+k3s1")
            .build();
        assert!(!unmonitored_servers(&mixed, Distro::K3s).unwrap().1);
        assert!(unmonitored_servers(&cluster().build(), Distro::K3s).is_none());
        let unread = TestCluster::k3s()
            .server("s1", "v1.29.4+k3s1")
            .without_events()
            .build();
        assert_eq!(
            events_not_checked(&unread).as_deref(),
            Some("Events not read yet (serve reads them every minute)")
        );
    }
}
