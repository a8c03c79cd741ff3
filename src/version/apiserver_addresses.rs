//! Which object k3s's apiaddresses controller (on the `<prog>-etcd` leader) copies into the
//! `<prog>/apiaddresses` etcd key that agents' load balancers follow.
//!
//! k3s PR #12420 ("Switch from endpoints to endpointslices", commit db5390511e97, June 2025)
//! moved `pkg/etcd/apiaddresses_controller.go` from the v1 `Endpoints default/kubernetes` to the
//! EndpointSlices labelled `kubernetes.io/service-name=kubernetes`, "1.33+ only"; release-1.32
//! still watches `&v1.Endpoints{}`. The 1.33 backport (#12421) shipped in a 1.33 patch whose tag
//! is not confirmed, so on 1.33 the answer is inferred.

use super::ProductVersion;
use super::shapes::EndpointsKind;

/// What the apiaddresses controller reads on `version`, and whether that is inferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AddressSource {
    pub kind: EndpointsKind,
    pub inferred: bool,
}

pub(crate) fn apiaddresses_source(version: &ProductVersion) -> AddressSource {
    match (version.major, version.minor) {
        (1, minor) if minor >= 34 => AddressSource {
            kind: EndpointsKind::EndpointSlice,
            inferred: false,
        },
        (1, 33) => AddressSource {
            kind: EndpointsKind::EndpointSlice,
            inferred: true,
        },
        (major, _) if major > 1 => AddressSource {
            kind: EndpointsKind::EndpointSlice,
            inferred: false,
        },
        _ => AddressSource {
            kind: EndpointsKind::Endpoints,
            inferred: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(v: &str) -> AddressSource {
        apiaddresses_source(&ProductVersion::parse(v).unwrap())
    }

    #[test]
    fn slices_from_1_33_endpoints_before() {
        assert_eq!(source("v1.32.13+k3s1").kind, EndpointsKind::Endpoints);
        assert!(!source("v1.32.13+k3s1").inferred);
        assert_eq!(source("v1.33.0+k3s1").kind, EndpointsKind::EndpointSlice);
        assert!(
            source("v1.33.0+k3s1").inferred,
            "the 1.33 tag is unconfirmed"
        );
        assert_eq!(source("v1.34.1+rke2r1").kind, EndpointsKind::EndpointSlice);
        assert!(!source("v1.34.1+rke2r1").inferred);
        assert_eq!(source("v1.30.2+k3s1").kind, EndpointsKind::Endpoints);
    }
}
