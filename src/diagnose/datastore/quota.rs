//! `etcd-db-near-quota`, `etcd-db-over-quota`, `etcd-quota-differs`: each member's physical
//! size against its quota. etcd checks the bbolt file's size, not what is in use, and refuses
//! every Put, Txn and LeaseGrant once size + cost reaches the quota; the member raises NOSPACE
//! through raft and every member then refuses writes, so the smallest quota bounds the
//! cluster. The alarm stays until disarmed, even after a defrag shrinks the file. Because the
//! write counts, a member stops short of its quota by up to the write it refused: within
//! etcd's largest write of the quota it is at the quota.

use super::etcdctl::{compact_and_defrag, etcdctl};
use super::members::{Member, QuotaFrom};
use crate::byte_size::human;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;
use crate::model::server_metrics::SizeGrowth;

/// etcd's own QuotaLowSpace rule pages at 95 %; 80 % leaves time to act.
const WARN_AT: f64 = 0.80;
const ERROR_AT: f64 = 0.95;
/// etcd's largest write, its default `--max-request-bytes` (k3s and RKE2 keep it): a member
/// this close to its quota refuses a write that size, and the first refusal raises NOSPACE.
/// Growth comes in whole pages, so such a member can sit a few pages under its quota, taking
/// small writes and refusing every large one.
const LARGEST_WRITE: f64 = 1.5 * 1024.0 * 1024.0;

/// What the lock analysis adds: every held lock frozen at once (names and since when).
pub(super) struct FrozenLocks {
    pub locks: Vec<String>,
}

pub(super) fn quota_findings(
    members: &[Member],
    distro: Distro,
    frozen: Option<&FrozenLocks>,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> = members
        .iter()
        .filter_map(|m| over_or_near(m, distro, frozen))
        .collect();
    findings.extend(quotas_differ(members, distro));
    findings
}

fn over_or_near(member: &Member, distro: Distro, frozen: Option<&FrozenLocks>) -> Option<Finding> {
    let (size, quota, from) = member.used()?;
    let share = size / quota;
    if share < WARN_AT {
        return None;
    }
    let (_, metric) = member.size?;
    let node = member.node.as_deref();
    let measured = format!(
        "{} uses {} of its {} quota ({:.0} %; the quota is {}, the size from {metric})",
        etcd_member(member),
        human(size),
        human(quota),
        share * 100.0,
        from.says()
    );
    let recover = format!(
        "{}; then, once every member is under its quota, `{} alarm disarm`; to give etcd more room, set \
         --etcd-arg=quota-backend-bytes=<bytes> (etcd warns past 8 GiB) on every server and restart them one at a time",
        compact_and_defrag(distro, node),
        etcdctl(distro, node)
    );
    let read_only = "every member refuses writes: the whole cluster is read-only (reads, deletes, compaction \
                     and `alarm disarm` still work)";
    let why = if share >= 1.0 {
        Some(format!("etcd raises the NOSPACE alarm and {read_only}"))
    } else if size + LARGEST_WRITE >= quota {
        Some(format!(
            "that is within etcd's largest write ({}, its default --max-request-bytes) of the quota, and etcd \
             refuses any write that would reach the quota: the first it refuses raises the NOSPACE alarm, and then \
             {read_only}",
            human(LARGEST_WRITE)
        ))
    } else {
        frozen.map(|f| {
            format!(
                "every lock is frozen at once ({} not renewed), which is what a NOSPACE alarm does: the alarm \
                 outlives the size, so a member that was over its quota keeps the cluster read-only until it is \
                 disarmed",
                f.locks.join(", ")
            )
        })
    };
    if let Some(why) = why {
        return Some(
            Finding::new(
                Severity::Error,
                FindingCode::EtcdDbOverQuota,
                member.name.clone(),
                format!("{measured}: {why}"),
            )
            .fix(recover),
        );
    }
    let severity = if share >= ERROR_AT {
        Severity::Error
    } else {
        Severity::Warning
    };
    Some(
        Finding::new(
            severity,
            FindingCode::EtcdDbNearQuota,
            member.name.clone(),
            format!(
                "{measured}{}. At the quota etcd refuses every write in the cluster (NOSPACE)",
                member
                    .growth
                    .map(|g| pace(g, quota - size))
                    .unwrap_or_default()
            ),
        )
        .fix(recover),
    )
}

/// The growth between serve's reads, and when the quota is reached at that pace.
fn pace(growth: SizeGrowth, room: f64) -> String {
    let over = crate::age::short(growth.over);
    if growth.bytes <= 0.0 {
        return format!("; it has not grown in the last {over}");
    }
    let per_hour = growth.bytes * 3600.0 / growth.over.as_secs_f64().max(1.0);
    let hours = room.max(0.0) / per_hour;
    let reached = crate::age::short(jiff::SignedDuration::from_secs_f64(
        (hours * 3600.0).min(1.0e9),
    ));
    format!(
        "; it grew {} in the last {over} ({} an hour): at that pace it reaches the quota in about {reached}",
        human(growth.bytes),
        human(per_hour)
    )
}

fn etcd_member(member: &Member) -> String {
    match &member.node {
        Some(node) => format!("The etcd member on {node}"),
        None => format!("The etcd member of {}", member.name),
    }
}

/// Members with different quotas: the smallest stops the cluster's writes first.
fn quotas_differ(members: &[Member], distro: Distro) -> Option<Finding> {
    let known: Vec<(&Member, f64, QuotaFrom)> = members
        .iter()
        .filter(|m| m.node.is_some())
        .filter_map(|m| m.quota.map(|(q, from)| (m, q, from)))
        .collect();
    let (smallest, low, _) = known.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied()?;
    let high = known.iter().map(|k| k.1).fold(low, f64::max);
    if high == low {
        return None;
    }
    let each: Vec<String> = known
        .iter()
        .map(|(m, q, from)| {
            format!(
                "{} {} ({})",
                m.node.as_deref().unwrap_or_default(),
                human(*q),
                from.says()
            )
        })
        .collect();
    Some(
        Finding::new(
            Severity::Warning,
            FindingCode::EtcdQuotaDiffers,
            "etcd",
            format!(
                "etcd members run different quotas: {}. The smallest ({} on {}) bounds the cluster: a NOSPACE \
                 alarm on any member stops writes on all",
                each.join(", "),
                human(low),
                smallest.node.as_deref().unwrap_or_default()
            ),
        )
        .fix(format!(
            "set the same --etcd-arg=quota-backend-bytes=<bytes> in every {} server's config and restart them one \
             at a time",
            distro.prog()
        )),
    )
}
