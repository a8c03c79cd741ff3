//! When the certificates of the connection expire: the client certificate the kubeconfig
//! authenticates with (a node's admin kubeconfig expires too) and the serving certificate the
//! API server presents. k3s renews both when the service restarts within 90
//! days of expiry, so inside that window a restart is due; within 14 days it is urgent. Only a
//! certificate that chains to the cluster's CA is the server's: another one (an intercepting
//! proxy, another cluster) is a note and never judged.

use jiff::{SignedDuration, Timestamp};

use crate::age::short;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::certificate::CertificateFacts;
use crate::model::certificate_chain::ChainTrust;
use crate::model::cluster_state::ClusterState;
use crate::model::served_certificates::ConnectionCertificates;

/// k3s's own renewal window (`pkg/certmonitor`, `certificate rotate`).
const WINDOW: SignedDuration = SignedDuration::from_hours(90 * 24);
const URGENT: SignedDuration = SignedDuration::from_hours(14 * 24);

/// The findings, and notes on what could not be read; `Err` when nothing was (a dump).
pub(crate) fn analyse_connection_certificates(
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
    judge_client(certs, now, prog, &mut findings, &mut notes);
    let presented = presented_by_the_servers(certs, now, &mut findings, &mut notes);
    judge_presented(presented, now, prog, &mut findings, &mut notes);
    Ok((findings, notes))
}

/// The kubeconfig's client certificate: it expires like any other, and then the kubeconfig
/// stops working.
fn judge_client(
    certs: &ConnectionCertificates,
    now: Timestamp,
    prog: &str,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) {
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
}

/// Each certificate the servers presented with the addresses presenting it, in the order seen;
/// a proxy's own certificate is judged here, and one that is not this cluster's is a note.
fn presented_by_the_servers<'a>(
    certs: &'a ConnectionCertificates,
    now: Timestamp,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> Vec<(&'a CertificateFacts, Vec<String>)> {
    // k3s's servers share one serving certificate (kube-system/<prog>-serving), so the same
    // certificate seen at several addresses is one finding naming them all; a server still
    // presenting an older one stands apart.
    let mut presented: Vec<(&CertificateFacts, Vec<String>)> = Vec::new();
    // Chains nothing could verify are judged as presented, and the note says so: whoever
    // answered may not be the server.
    let mut unverified: Vec<(String, &str)> = Vec::new();
    let mut seen_at = |cert, at: String| match presented.iter_mut().find(|(c, _)| *c == cert) {
        Some((_, at_all)) => at_all.push(at),
        None => presented.push((cert, vec![at])),
    };
    match (&certs.serving, &certs.presented_by) {
        (Ok(cert), Some(who)) => findings.extend(judge(cert, now).map(|(severity, when)| {
            Finding::new(
                severity,
                FindingCode::ServingCertExpiring,
                certs.server.clone(),
                format!(
                    "{who} presents a certificate ({}; {}) that {when}",
                    cert.subject,
                    names(cert)
                ),
            )
            .fix(format!(
                "renew the certificate of {who} (its ingress or load balancer)"
            ))
        })),
        (Ok(cert), None) => match &certs.serving_trust {
            ChainTrust::Foreign(why) => notes.push(not_this_clusters(&certs.server, cert, why)),
            trust => {
                unverified.extend(unverified_at(trust, &certs.server));
                seen_at(cert, certs.server.clone());
            }
        },
        (Err(why), _) => notes.push(format!("the serving certificate was not read: {why}")),
    }
    match &certs.servers {
        Ok(servers) => {
            for server in servers {
                match (&server.serving, &server.trust) {
                    (Ok(cert), ChainTrust::Foreign(why)) => {
                        notes.push(not_this_clusters(&server.shown(), cert, why))
                    }
                    (Ok(cert), trust) => {
                        unverified.extend(unverified_at(trust, &server.shown()));
                        seen_at(cert, server.shown());
                    }
                    (Err(why), _) => notes.push(format!(
                        "the serving certificate of {} was not read: {why}",
                        server.shown()
                    )),
                }
            }
        }
        Err(why) => notes.push(format!("the servers' own addresses were not read: {why}")),
    }
    if let Some((_, why)) = unverified.first() {
        let at: Vec<&str> = unverified.iter().map(|(at, _)| at.as_str()).collect();
        notes.push(format!(
            "cannot verify the chain of {} against the cluster's CA: {why}; judged as presented",
            at.join(", ")
        ));
    }
    presented
}

/// One finding per certificate about to expire, naming every server that presents it.
fn judge_presented(
    presented: Vec<(&CertificateFacts, Vec<String>)>,
    now: Timestamp,
    prog: &str,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) {
    for (cert, at) in presented {
        notes.push(format!(
            "{} {} {} (valid until {}; {})",
            at.join(", "),
            if at.len() == 1 { "presents" } else { "present" },
            cert.subject,
            cert.not_after
                .map_or_else(|| "unknown".to_string(), |t| t.to_string()),
            names(cert)
        ));
        findings.extend(judge(cert, now).map(|(severity, when)| {
            let whose = match at.as_slice() {
                [one] => format!("the API server at {one} presents"),
                all => format!("the API servers at {} present", all.join(", ")),
            };
            Finding::new(
                severity,
                FindingCode::ServingCertExpiring,
                at[0].clone(),
                format!(
                    "{whose} a certificate ({}; {}) that {when}",
                    cert.subject,
                    names(cert)
                ),
            )
            .fix(format!(
                "restart {prog} on each server, one at a time (it renews its serving \
                 certificate within 90 days of expiry); if it stays, check for \
                 listener.cattle.io/static on kube-system/{prog}-serving, which stops \
                 renewal"
            ))
        }));
    }
}

/// `not this cluster's server: 10.0.0.2:6443 (Node b) presented CN=… (issued by …; why)`:
/// whoever answered there is not the server, so its certificate says nothing about it.
fn not_this_clusters(at: &str, cert: &CertificateFacts, why: &str) -> String {
    format!(
        "not this cluster's server: {at} presented {} (issued by {}; {}; {why})",
        cert.subject,
        cert.issuer,
        names(cert)
    )
}

fn unverified_at<'a>(trust: &'a ChainTrust, at: &str) -> Option<(String, &'a str)> {
    match trust {
        ChainTrust::Unverified(why) => Some((at.to_string(), why.as_str())),
        _ => None,
    }
}

/// "names a, b" from the subjectAltName, which clients check the address against.
fn names(cert: &CertificateFacts) -> String {
    if cert.names.is_empty() {
        "no subjectAltName".to_string()
    } else {
        format!("names {}", cert.names.join(", "))
    }
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
    use crate::model::served_certificates::ConnectionCertificates;
    use crate::model::served_certificates::ServerCertificate;

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
                serving_chain: Vec::new(),
                serving_trust: ChainTrust::Cluster,
                presented_by: by.map(str::to_string),
                servers: Ok(Vec::new()),
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
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("https://10.0.0.1:6443 presents CN=system:admin"));
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

    fn at(address: &str, node: &str, days_left: i64) -> ServerCertificate {
        ServerCertificate {
            address: address.into(),
            node: Some(node.into()),
            serving: Ok(cert(days_left)),
            chain: Vec::new(),
            trust: ChainTrust::Cluster,
        }
    }

    #[test]
    fn one_certificate_at_every_server_is_one_finding_naming_them_all() {
        let mut state = state(200, 10, None);
        let certs = state.certificates.as_mut().unwrap();
        certs.servers = Ok(vec![
            at("10.0.0.2:6443", "b", 10),
            at("10.0.0.3:6443", "c", 10),
            ServerCertificate {
                address: "10.0.0.4:6443".into(),
                node: Some("d".into()),
                serving: Err("no TLS handshake with 10.0.0.4:6443 within 2 s".into()),
                chain: Vec::new(),
                trust: ChainTrust::Unverified("not read".into()),
            },
        ]);
        let (findings, notes) =
            analyse_connection_certificates(&state, Distro::K3s, now()).unwrap();
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].object, "https://10.0.0.1:6443");
        assert!(
            findings[0].message.starts_with(
                "the API servers at https://10.0.0.1:6443, 10.0.0.2:6443 (Node b), \
                 10.0.0.3:6443 (Node c) present"
            ),
            "{}",
            findings[0].message
        );
        assert!(notes.iter().any(|n| n.starts_with(
            "the serving certificate of 10.0.0.4:6443 (Node d) was not read: no TLS handshake"
        )));
        assert!(
            notes
                .iter()
                .any(|n| n.contains("names kubernetes, 10.43.0.1"))
        );
    }

    #[test]
    fn a_server_still_presenting_an_older_certificate_stands_apart() {
        let mut state = state(200, 300, None);
        state.certificates.as_mut().unwrap().servers = Ok(vec![
            at("10.0.0.2:6443", "b", 300),
            at("10.0.0.3:6443", "c", -1),
        ]);
        let (findings, _) = analyse_connection_certificates(&state, Distro::K3s, now()).unwrap();
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].object, "10.0.0.3:6443 (Node c)");
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(
            findings[0].message.contains("that expired "),
            "{}",
            findings[0].message
        );
    }

    fn proxy_certificate(days_left: i64) -> CertificateFacts {
        CertificateFacts {
            subject: "CN=sandboxing-tproxy-egress".into(),
            issuer: "CN=sandboxing-tproxy-egress".into(),
            names: vec!["example.com".into()],
            ..cert(days_left)
        }
    }

    #[test]
    fn a_certificate_that_is_not_the_clusters_is_a_note_and_never_judged() {
        let mut state = state(200, 300, None);
        let certs = state.certificates.as_mut().unwrap();
        certs.serving = Ok(proxy_certificate(3));
        certs.serving_trust = ChainTrust::Foreign("not issued by the cluster's CA".into());
        certs.servers = Ok(vec![
            ServerCertificate {
                serving: Ok(proxy_certificate(-2)),
                trust: ChainTrust::Foreign("not issued by the cluster's CA".into()),
                ..at("10.0.0.2:6443", "b", 0)
            },
            at("10.0.0.3:6443", "c", 300),
        ]);
        let (findings, notes) =
            analyse_connection_certificates(&state, Distro::K3s, now()).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        assert!(
            notes.contains(
                &"not this cluster's server: 10.0.0.2:6443 (Node b) presented \
              CN=sandboxing-tproxy-egress (issued by CN=sandboxing-tproxy-egress; names \
              example.com; not issued by the cluster's CA)"
                    .to_string()
            )
        );
        assert!(notes.iter().any(|n| n.starts_with(
            "not this cluster's server: https://10.0.0.1:6443 presented CN=sandboxing-tproxy-egress"
        )));
        // Neither is listed as what that address presents; the real server is.
        assert!(
            !notes.iter().any(
                |n| n.contains("presents CN=sandboxing") || n.contains("present CN=sandboxing")
            ),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("10.0.0.3:6443 (Node c) presents"))
        );
    }

    #[test]
    fn a_chain_nothing_could_verify_is_judged_and_says_so() {
        let mut state = state(200, 10, None);
        let certs = state.certificates.as_mut().unwrap();
        let why = "the kubeconfig names no CA of its own, and get configmap \
                   kube-system/kube-root-ca.crt: forbidden";
        certs.serving_trust = ChainTrust::Unverified(why.into());
        certs.servers = Ok(vec![ServerCertificate {
            trust: ChainTrust::Unverified(why.into()),
            ..at("10.0.0.2:6443", "b", 10)
        }]);
        let (findings, notes) =
            analyse_connection_certificates(&state, Distro::K3s, now()).unwrap();
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].code, FindingCode::ServingCertExpiring);
        assert!(notes.contains(&format!(
            "cannot verify the chain of https://10.0.0.1:6443, 10.0.0.2:6443 (Node b) against \
             the cluster's CA: {why}; judged as presented"
        )));
    }

    #[test]
    fn a_dump_is_not_judged() {
        assert!(
            analyse_connection_certificates(&ClusterState::default(), Distro::K3s, now()).is_err()
        );
    }
}
