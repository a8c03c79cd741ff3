//! When the certificates of the connection expire: the client certificate the kubeconfig
//! authenticates with (a node's admin kubeconfig expires too) and the serving certificate the
//! API server presents (issue 33, item 1). k3s renews both when the service restarts within 90
//! days of expiry, so inside that window a restart is due; within 14 days it is urgent.

use jiff::{SignedDuration, Timestamp};

use crate::age::short;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::input::ClusterState;
use crate::model::certificate::CertificateFacts;

/// k3s's own renewal window (`pkg/certmonitor`, `certificate rotate`).
const WINDOW: SignedDuration = SignedDuration::from_hours(90 * 24);
const URGENT: SignedDuration = SignedDuration::from_hours(14 * 24);

/// The findings, and notes on what could not be read; `Err` when nothing was (a dump).
pub fn analyse_connection_certificates(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Result<(Vec<Finding>, Vec<String>), String> {
    let Some(certs) = &state.certificates else {
        return Err(
            "read live only: the kubeconfig's client certificate and the API server's \
                    handshake"
                .into(),
        );
    };
    let prog = distro.prog();
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    match &certs.client {
        Some(Ok(cert)) => findings.extend(judge(cert, now).map(|(severity, when)| {
            Finding::new(
                severity,
                FindingCode::KubeconfigCertExpiring,
                "kubeconfig",
                format!(
                    "the client certificate this kubeconfig authenticates with ({}) {when}; \
                     then this kubeconfig no longer works",
                    cert.subject
                ),
            )
            .fix(format!(
                "restart {prog} on a server (it renews the admin kubeconfig's certificate within \
                 90 days of expiry) and use the new /etc/rancher/{prog}/{prog}.yaml, or issue \
                 this user a new certificate"
            ))
        })),
        Some(Err(why)) => notes.push(format!("the client certificate was not read: {why}")),
        None => {}
    }
    match &certs.serving {
        Ok(cert) => findings.extend(judge(cert, now).map(|(severity, when)| {
            let names = if cert.names.is_empty() {
                "no subjectAltName".to_string()
            } else {
                format!("names {}", cert.names.join(", "))
            };
            let (whose, fix) = match &certs.presented_by {
                Some(who) => (
                    format!("{who} presents"),
                    format!("renew the certificate of {who} (its ingress or load balancer)"),
                ),
                None => (
                    format!("the API server at {} presents", certs.server),
                    format!(
                        "restart {prog} on each server, one at a time (it renews its serving \
                         certificate within 90 days of expiry); if it stays, check for \
                         listener.cattle.io/static on kube-system/{prog}-serving, which stops \
                         renewal"
                    ),
                ),
            };
            Finding::new(
                severity,
                FindingCode::ServingCertExpiring,
                certs.server.clone(),
                format!(
                    "{whose} a certificate ({}; {names}) that {when}",
                    cert.subject
                ),
            )
            .fix(fix)
        })),
        Err(why) => notes.push(format!("the serving certificate was not read: {why}")),
    }
    Ok((findings, notes))
}

/// Severity and "expires in 12d (…)" when `cert` needs attention at `now`.
fn judge(cert: &CertificateFacts, now: Timestamp) -> Option<(Severity, String)> {
    if let Some(start) = cert.not_before.filter(|t| *t > now) {
        return Some((Severity::Error, format!("is not valid before {start}")));
    }
    let end = cert.not_after?;
    let left = end.duration_since(now);
    if left <= SignedDuration::ZERO {
        Some((
            Severity::Error,
            format!("expired {} ago ({end})", short(-left)),
        ))
    } else if left <= URGENT {
        Some((
            Severity::Error,
            format!("expires in {} ({end})", short(left)),
        ))
    } else if left <= WINDOW {
        Some((
            Severity::Warning,
            format!("expires in {} ({end})", short(left)),
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::live::connection_certificates::ConnectionCertificates;

    fn cert(days_left: i64) -> CertificateFacts {
        let now: Timestamp = "2026-12-02T12:00:00Z".parse().unwrap();
        CertificateFacts {
            subject: "CN=system:admin, O=system:masters".into(),
            issuer: "CN=k3s-client-ca".into(),
            not_before: Some(now - SignedDuration::from_hours(24 * 300)),
            not_after: Some(now + SignedDuration::from_hours(24 * days_left)),
            names: vec!["kubernetes".into(), "10.43.0.1".into()],
        }
    }

    fn state(client: i64, serving: i64, by: Option<&str>) -> ClusterState {
        ClusterState {
            certificates: Some(ConnectionCertificates {
                server: "https://10.0.0.1:6443".into(),
                client: Some(Ok(cert(client))),
                serving: Ok(cert(serving)),
                presented_by: by.map(str::to_string),
            }),
            ..ClusterState::default()
        }
    }

    fn now() -> Timestamp {
        "2026-12-02T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn inside_the_window_warns_and_within_two_weeks_errs() {
        let (findings, notes) =
            analyse_connection_certificates(&state(40, 10, None), Distro::K3s, now()).unwrap();
        assert!(notes.is_empty());
        let got: Vec<(FindingCode, Severity)> =
            findings.iter().map(|f| (f.code, f.severity)).collect();
        assert_eq!(
            got,
            [
                (FindingCode::KubeconfigCertExpiring, Severity::Warning),
                (FindingCode::ServingCertExpiring, Severity::Error)
            ]
        );
        assert!(findings[1].message.contains("names kubernetes, 10.43.0.1"));
        assert!(
            findings[0]
                .remediation
                .contains("/etc/rancher/k3s/k3s.yaml")
        );
    }

    #[test]
    fn far_from_expiry_is_quiet_and_expired_says_since_when() {
        let (quiet, _) =
            analyse_connection_certificates(&state(200, 365, None), Distro::K3s, now()).unwrap();
        assert!(quiet.is_empty());
        let (expired, _) =
            analyse_connection_certificates(&state(-3, 365, None), Distro::K3s, now()).unwrap();
        assert!(
            expired[0].message.contains("expired 3d ago"),
            "{}",
            expired[0].message
        );
    }

    #[test]
    fn rancher_presents_its_own_certificate() {
        let (findings, _) = analyse_connection_certificates(
            &state(200, 5, Some("Rancher at https://rancher.example.com")),
            Distro::Rke2,
            now(),
        )
        .unwrap();
        assert!(
            findings[0]
                .message
                .starts_with("Rancher at https://rancher.example.com presents")
        );
        assert!(
            findings[0]
                .remediation
                .contains("renew the certificate of Rancher")
        );
    }

    #[test]
    fn a_dump_is_not_judged() {
        assert!(
            analyse_connection_certificates(&ClusterState::default(), Distro::K3s, now()).is_err()
        );
    }
}
