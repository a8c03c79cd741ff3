//! `apiserver-endpoint-stale`: the `kubernetes` Service's Endpoints or EndpointSlice in
//! `default` lists an address that is no current server's (k3s-io/k3s#14594).
//!
//! kube-apiserver's lease endpoint reconciler (k3s passes no `--endpoint-reconciler-type`, so
//! the default `lease` one runs) rewrites both objects from the `/registry/masterleases/<ip>`
//! keys; a key that never expires keeps an old address there. The `<prog>-etcd` leader's
//! apiaddresses controller copies the ready addresses into the `<prog>/apiaddresses` etcd key,
//! which agents' load balancers and etcd-only servers follow (k3s
//! `pkg/etcd/apiaddresses_controller.go`, `pkg/server/handlers/handlers.go`). Both objects are
//! judged; the message says which one k3s follows on the version at hand.

use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::diagnose::cluster_summary::oldest_server_version;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::diagnose::object_ref::ObjectRef;
use crate::distro::Distro;
use crate::model::apiserver_endpoints::{ApiserverEndpoints, EndpointsKind};
use crate::model::cluster_state::ClusterState;
use crate::model::collected::Collected;
use crate::model::kinds::{Kind, SERVICE_NAMESPACE};
use crate::model::lease::LeaseFacts;
use crate::model::node::{NodeFacts, node_for_identity};
use crate::version::ProductVersion;
use crate::version::apiserver_addresses::apiaddresses_source;

/// Why the check cannot run on `state`, or `None` when it can.
pub(crate) fn not_checked(state: &ClusterState) -> Option<String> {
    match &state.apiserver_addresses {
        Collected::Read(_) => {}
        Collected::NotAsked => return Some("not read".into()),
        // `check` prints it as "not checked: apiserver-endpoints (<reason>)".
        lacking => return lacking.why_not().map(str::to_string),
    }
    if !state.nodes().iter().any(NodeFacts::is_server) {
        return Some("no server Nodes to compare the addresses with".into());
    }
    None
}

pub(crate) fn analyse_apiserver_endpoints(
    state: &ClusterState,
    distro: Distro,
    now: Timestamp,
) -> Vec<Finding> {
    if not_checked(state).is_some() {
        return Vec::new();
    }
    let servers: Vec<&NodeFacts> = state.nodes().iter().filter(|n| n.is_server()).collect();
    let known: BTreeSet<String> = servers
        .iter()
        .flat_map(|n| server_addresses(n, distro))
        .map(canonical)
        .collect();
    // A server run with --disable-agent has no Node, so no address to compare with: its
    // kube-apiserver's identity Lease is all that shows it.
    let leases = state.leases.as_deref().unwrap_or_default();
    let live_apiservers: Vec<&LeaseFacts> = leases
        .iter()
        .filter(|l| l.apiserver_hostname().is_some())
        // The same 10 s clock-skew allowance as lock freshness.
        .filter(|l| {
            l.record
                .expires_at()
                .is_some_and(|t| t > now - jiff::SignedDuration::from_secs(10))
        })
        .collect();
    let agentless: Vec<&str> = live_apiservers
        .iter()
        .filter_map(|l| l.apiserver_hostname())
        .filter(|h| node_for_identity(state.nodes(), distro, h).is_none())
        .collect();
    let without_address: Vec<&str> = servers
        .iter()
        .filter(|n| server_addresses(n, distro).next().is_none())
        .map(|n| n.name.as_str())
        .collect();
    let judged_on = judging_version(state, distro);
    let published = state.apiserver_addresses.as_read();
    let objects = published
        .and_then(|p| p.endpoints.as_ref())
        .into_iter()
        .flatten()
        .chain(
            published
                .and_then(|p| p.slices.as_ref())
                .into_iter()
                .flatten(),
        );
    let mut findings = Vec::new();
    for object in objects {
        let stale: Vec<&str> = object
            .ready_ips()
            .filter(|ip| !known.contains(&canonical(ip)))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if stale.is_empty() {
            continue;
        }
        let context = Context {
            known: &known,
            live_apiservers: live_apiservers.len(),
            agentless: &agentless,
            without_address: &without_address,
            judged_on: judged_on.as_ref(),
            distro,
        };
        findings.push(stale_finding(object, &stale, &context));
    }
    findings
}

struct Context<'a> {
    known: &'a BTreeSet<String>,
    live_apiservers: usize,
    agentless: &'a [&'a str],
    without_address: &'a [&'a str],
    judged_on: Option<&'a ProductVersion>,
    distro: Distro,
}

fn stale_finding(object: &ApiserverEndpoints, stale: &[&str], c: &Context<'_>) -> Finding {
    let prog = c.distro.prog();
    let shown = object.shown();
    let listed = object.ready_ips().collect::<BTreeSet<_>>().len();
    let mut message = format!(
        "{shown} lists {} that no server Node has (server addresses: {})",
        stale.join(", "),
        c.known.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    if c.live_apiservers > 0 && listed > c.live_apiservers {
        message.push_str(&format!(
            "; it lists {listed} addresses but only {} kube-apiserver(s) renew an identity Lease",
            c.live_apiservers
        ));
    }
    message.push_str(&format!(". {}.", follows(object.kind, c.judged_on, prog)));
    message.push_str(
        " A /registry/masterleases/<ip> key that never expires is the likely cause (inferred: the \
         maintainers' analysis of k3s-io/k3s#14594 is not public); it cannot be seen through the API.",
    );
    let mut severity = Severity::Warning;
    if !c.agentless.is_empty() {
        severity = Severity::Info;
        message.push_str(&format!(
            " It may belong to {}, a server without an agent (no Node, but a live kube-apiserver identity \
             Lease); compare with that server's address.",
            c.agentless.join(", ")
        ));
    } else if !c.without_address.is_empty() {
        severity = Severity::Info;
        message.push_str(&format!(
            " Server Node(s) {} report no address, so it may be theirs.",
            c.without_address.join(", ")
        ));
    }
    let first = stale[0];
    let etcdctl = format!(
        "{} del /registry/masterleases/{first}",
        crate::diagnose::datastore::etcdctl(c.distro, None)
    );
    Finding::new(severity, FindingCode::ApiserverEndpointStale, &shown, message)
        .listing(&stale.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .about(ObjectRef::new(Kind::from(object.kind).name(), Some(SERVICE_NAMESPACE), &object.name).into_iter().collect::<Vec<_>>())
        .fix(format!(
            "check that no {prog} server still advertises {} (--advertise-address, --node-ip, --node-external-ip); \
             then on a server run `{etcdctl}` for each stale address, and kube-apiserver rewrites {shown} within \
             about 10 s",
            stale.join(", ")
        ))
}

/// Which object k3s's apiaddresses controller follows on the version judged, said in words.
fn follows(kind: EndpointsKind, version: Option<&ProductVersion>, prog: &str) -> String {
    let Some(version) = version else {
        return format!(
            "{prog} 1.33 and later copy the EndpointSlice, 1.32 and earlier the Endpoints, into the {prog}/apiaddresses \
             etcd key that agents' load balancers follow (no server reports a version)"
        );
    };
    let source = apiaddresses_source(version);
    let inferred = if source.inferred { " (inferred)" } else { "" };
    if source.kind == kind {
        format!(
            "{version} copies this {} into the {prog}/apiaddresses etcd key{inferred}, so agents' load balancers \
             and etcd-only servers are sent to the stale address",
            Kind::from(kind).name()
        )
    } else {
        format!(
            "{version} follows the {} instead{inferred}, not this {}; kube-apiserver writes both from the same \
             masterleases, so the other is stale too unless it was just fixed",
            Kind::from(source.kind).name(),
            Kind::from(kind).name()
        )
    }
}

/// Every address a server is known by: its Node's `status.addresses`, the
/// `<prog>.io/internal-ip` / `external-ip` annotations (comma-separated when dual-stack, k3s
/// `pkg/agent/run.go` `updateAddressAnnotations`) and `etcd.<prog>.cattle.io/node-address`.
fn server_addresses<'a>(node: &'a NodeFacts, distro: Distro) -> impl Iterator<Item = &'a str> {
    let prog = distro.prog();
    let annotations = [
        format!("{prog}.io/internal-ip"),
        format!("{prog}.io/external-ip"),
        distro.etcd_annotation("node-address"),
    ];
    let from_annotations: Vec<&'a str> = annotations
        .iter()
        .filter_map(|key| node.annotations.get(key))
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    node.addresses
        .iter()
        .map(String::as_str)
        .chain(from_annotations)
}

/// One spelling per address: `fd00:0::5` and `fd00::5` are the same server.
fn canonical(address: &str) -> String {
    address
        .parse::<std::net::IpAddr>()
        .map_or_else(|_| address.to_string(), |ip| ip.to_string())
}

/// The version that decides which object k3s follows: the `<prog>-etcd` holder's (the
/// apiaddresses controller runs there), else the oldest server's.
fn judging_version(state: &ClusterState, distro: Distro) -> Option<ProductVersion> {
    let holder = state
        .lease(&distro.etcd_lock())
        .map(|l| l.record.holder_identity.clone())
        .filter(|h| !h.is_empty());
    holder
        .and_then(|h| {
            node_for_identity(state.nodes(), distro, &h).and_then(|(n, _)| n.version.clone())
        })
        .or_else(|| oldest_server_version(state))
}

#[cfg(test)]
mod tests;
