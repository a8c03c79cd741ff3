//! Whether a certificate chain a server presented was issued by the cluster's CA: the only
//! proof that whatever answered at a server's address is that server, and not an
//! intercepting proxy or another cluster's apiserver. The handshake that captured the chain
//! trusted anything, so this is where trust is decided.
//!
//! Only the chain is judged, never the name: a server's own address is dialled by IP, and a
//! k3s serving certificate lists the addresses it was issued for, not necessarily every one a
//! Node reports. Nor the clock: the chain is verified at moments inside the end-entity
//! certificate's own validity, so an expired certificate of the cluster still chains and is
//! reported as expired by the expiry check, while a foreign one never chains at any moment.

use std::time::Duration;

use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, Error, RootCertStore};
use x509_parser::prelude::{FromDer, X509Certificate};

/// What the chain a server presented says about who answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChainTrust {
    /// Issued (directly or through the intermediates it sent) by the cluster's CA.
    Cluster,
    /// Not issued by the cluster's CA, with why: another server answered at that address.
    Foreign(String),
    /// No CA of the cluster to verify against, with why: judged as presented.
    Unverified(String),
}

/// `Ok` when `chain` (DER, end entity first, then the intermediates as the server sent them)
/// leads to one of `roots` (DER CA certificates); why not, in a few words.
pub(crate) fn chains_to(chain: &[Vec<u8>], roots: &[Vec<u8>]) -> Result<(), String> {
    let (end_entity, intermediates) = chain.split_first().ok_or("no certificate")?;
    let mut store = RootCertStore::empty();
    for root in roots {
        // A CA certificate webpki cannot read is left out; the others may still vouch.
        let _ = store.add(CertificateDer::from(root.as_slice()));
    }
    if store.is_empty() {
        return Err("no readable CA certificate to verify against".into());
    }
    let end_entity_der = CertificateDer::from(end_entity.as_slice());
    let parsed = ParsedCertificate::try_from(&end_entity_der).map_err(|e| describe(&e))?;
    let intermediates: Vec<CertificateDer<'_>> = intermediates
        .iter()
        .map(|c| CertificateDer::from(c.as_slice()))
        .collect();
    let algorithms = rustls::crypto::ring::default_provider().signature_verification_algorithms;
    let mut first_error = None;
    for at in moments_of_validity(end_entity) {
        match verify_server_cert_signed_by_trust_anchor(
            &parsed,
            &store,
            &intermediates,
            at,
            algorithms.all,
        ) {
            Ok(()) => return Ok(()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.map_or_else(|| "no moment of validity".into(), |e| describe(&e)))
}

/// The start, middle and end of the end entity's validity. A CA issues while it is valid, so
/// its chain holds at the start; the middle and end cover a CA renewed since. Trying several
/// moments never lets a chain through that does not lead to a root: only the time differs.
fn moments_of_validity(end_entity: &[u8]) -> Vec<UnixTime> {
    let Ok((_, cert)) = X509Certificate::from_der(end_entity) else {
        return Vec::new();
    };
    let start = cert.validity().not_before.timestamp().max(0);
    let end = cert.validity().not_after.timestamp().max(start);
    let mut seconds = vec![start, start + (end - start) / 2, end];
    seconds.dedup();
    seconds
        .into_iter()
        .map(|s| UnixTime::since_unix_epoch(Duration::from_secs(s.unsigned_abs())))
        .collect()
}

fn describe(error: &Error) -> String {
    match error {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "not issued by the cluster's CA".into()
        }
        Error::InvalidCertificate(CertificateError::BadSignature) => {
            "its signature does not match the cluster's CA".into()
        }
        Error::InvalidCertificate(CertificateError::BadEncoding) => {
            "not a certificate webpki can read".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

    struct Ca {
        der: Vec<u8>,
        issuer: Issuer<'static, KeyPair>,
    }

    impl Ca {
        fn roots(&self) -> Vec<Vec<u8>> {
            vec![self.der.clone()]
        }
    }

    fn ca(name: &str, from: (i32, u8, u8), until: (i32, u8, u8)) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
        params.not_after = rcgen::date_time_ymd(until.0, until.1, until.2);
        let key = KeyPair::generate().unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        Ca {
            der,
            issuer: Issuer::new(params, key),
        }
    }

    fn leaf(by: &Ca, from: (i32, u8, u8), until: (i32, u8, u8)) -> Vec<u8> {
        let mut params = CertificateParams::new(vec!["10.0.0.2".to_string()]).unwrap();
        params.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
        params.not_after = rcgen::date_time_ymd(until.0, until.1, until.2);
        let key = KeyPair::generate().unwrap();
        params.signed_by(&key, &by.issuer).unwrap().der().to_vec()
    }

    fn self_signed(cn: &str) -> Vec<u8> {
        let mut params = CertificateParams::new(vec!["example.com".to_string()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let key = KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    const START: (i32, u8, u8) = (2024, 1, 1);
    const END: (i32, u8, u8) = (2034, 1, 1);

    #[test]
    fn a_certificate_the_cluster_ca_issued_chains() {
        let server_ca = ca("k3s-server-ca", START, END);
        let cert = leaf(&server_ca, START, (2027, 1, 1));
        assert_eq!(chains_to(&[cert], &server_ca.roots()), Ok(()));
    }

    #[test]
    fn a_foreign_self_signed_certificate_does_not_chain() {
        let server_ca = ca("k3s-server-ca", START, END);
        let proxy = self_signed("sandboxing-tproxy-egress");
        assert_eq!(
            chains_to(&[proxy], &server_ca.roots()),
            Err("not issued by the cluster's CA".into())
        );
    }

    #[test]
    fn another_ca_of_the_same_name_does_not_vouch() {
        let ours = ca("k3s-server-ca", START, END);
        let theirs = ca("k3s-server-ca", START, END);
        let cert = leaf(&theirs, START, (2027, 1, 1));
        assert!(chains_to(&[cert], &ours.roots()).is_err());
    }

    #[test]
    fn an_expired_or_not_yet_valid_certificate_of_the_cluster_still_chains() {
        let server_ca = ca("k3s-server-ca", START, END);
        let expired = leaf(&server_ca, START, (2024, 6, 1));
        assert_eq!(chains_to(&[expired], &server_ca.roots()), Ok(()));
        let future = leaf(&server_ca, (2033, 1, 1), (2033, 6, 1));
        assert_eq!(chains_to(&[future], &server_ca.roots()), Ok(()));
    }

    #[test]
    fn a_certificate_issued_before_its_ca_expired_still_chains() {
        // The CA ended in 2025; the certificate it issued in 2024 runs to 2026.
        let old_ca = ca("k3s-server-ca", START, (2025, 1, 1));
        let cert = leaf(&old_ca, START, (2026, 1, 1));
        assert_eq!(chains_to(&[cert], &old_ca.roots()), Ok(()));
    }

    #[test]
    fn an_intermediate_counts_only_when_the_server_sends_it() {
        let root = ca("root-ca", START, END);
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "intermediate-ca");
        params.not_before = rcgen::date_time_ymd(START.0, START.1, START.2);
        params.not_after = rcgen::date_time_ymd(END.0, END.1, END.2);
        let key = KeyPair::generate().unwrap();
        let intermediate_der = params.signed_by(&key, &root.issuer).unwrap().der().to_vec();
        let intermediate = Ca {
            der: intermediate_der.clone(),
            issuer: Issuer::new(params, key),
        };
        let cert = leaf(&intermediate, START, (2027, 1, 1));
        assert_eq!(
            chains_to(&[cert.clone(), intermediate_der], &root.roots()),
            Ok(())
        );
        assert!(chains_to(&[cert], &root.roots()).is_err());
    }

    #[test]
    fn nothing_to_verify_against_is_said() {
        let cert = self_signed("anything");
        assert_eq!(
            chains_to(&[cert], &[]),
            Err("no readable CA certificate to verify against".into())
        );
        assert!(chains_to(&[], &[b"x".to_vec()]).is_err());
    }
}
