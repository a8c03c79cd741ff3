//! `etcd-db-fragmented`: a member whose file is mostly free pages. Deletes and compaction
//! free pages inside the bbolt file but never shrink it, and the quota counts the file, so a
//! fragmented member reaches NOSPACE with room to spare. The rule is etcd's own
//! (HighFragmentationRatio in etcd's alerts mixin): in use under half the file, and in use
//! over 100 MiB, below which a defrag gives back too little to matter.

use super::etcdctl::compact_and_defrag;
use super::members::Member;
use crate::byte_size::human;
use crate::diagnose::finding::{Finding, FindingCode, Severity};
use crate::distro::Distro;

const SMALLEST_IN_USE: f64 = 104_857_600.0;

pub(super) fn fragmentation_findings(members: &[Member], distro: Distro) -> Vec<Finding> {
    members
        .iter()
        .filter_map(|member| {
            let (total, _) = member.size?;
            let in_use = member.in_use?;
            if !(in_use < total / 2.0 && in_use > SMALLEST_IN_USE) {
                return None;
            }
            let node = member.node.as_deref();
            Some(
                Finding::new(
                    Severity::Warning,
                    FindingCode::EtcdDbFragmented,
                    member.name.clone(),
                    format!(
                        "{} holds {} in a {} file ({:.0} % in use): a defrag gives {} back, which the quota counts \
                         against it until then",
                        member.name,
                        human(in_use),
                        human(total),
                        in_use / total * 100.0,
                        human(total - in_use)
                    ),
                )
                .fix(format!(
                    "{}; defragment one member at a time, as a defrag blocks that member while it runs",
                    compact_and_defrag(distro, node)
                )),
            )
        })
        .collect()
}
