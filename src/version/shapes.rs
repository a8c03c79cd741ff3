//! What a version's k3s writes and reads, as values the model's encoders and readers take:
//! its Go's JSON escaping, its `s3Config` shape, and the object its apiaddresses controller
//! follows. `ProductVersion` decides each (`version.rs`, `apiserver_addresses.rs`).

use serde::Serialize;

/// How the Go release that built the writer escapes backspace and form feed: Go 1.22 changed
/// `encoding/json` to write them as `\b` and `\f` ("Marshal now escapes '\b' and '\f'", Go 1.22
/// release notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum GoEscaping {
    /// Go before 1.22: `\u0008`, `\u000c`.
    BeforeGo122,
    /// Go 1.22 and later: `\b`, `\f`.
    Go122,
}

/// The two shapes k3s has written for `s3Config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum S3Shape {
    /// Up to v1.29.6/v1.30.2: k3s's own `s3Config` struct.
    Legacy,
    /// From the "etcd s3 config secret" change (v1.29.7): the server's S3 config embedded with
    /// secrets masked, which always emits `"timeout":"0s"`.
    Embedded,
}

/// Which of the two objects an address list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EndpointsKind {
    Endpoints,
    EndpointSlice,
}
