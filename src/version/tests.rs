use super::affected_lines::UpgradeAdvice;
use super::*;

fn v(s: &str) -> ProductVersion {
    ProductVersion::parse(s).unwrap()
}

fn impact(s: &str) -> SplitImpact {
    v(s).split_impact()
}

fn same_line(s: &str) -> SplitImpact {
    SplitImpact::Affected {
        advice: UpgradeAdvice::SameLine(s.to_string()),
    }
}

#[test]
fn parses_every_observed_build_form() {
    assert_eq!(v("v1.29.4+k3s1").build, Build::K3sRelease(1));
    let rc = v("v1.31.2-rc2+k3s1");
    assert_eq!((rc.minor, rc.patch, rc.pre.as_str()), (31, 2, "rc2"));
    assert_eq!(
        v("v1.29.5+k3s-da2625d1").build,
        Build::K3sCommit("da2625d1".into())
    );
    assert_eq!(v("v1.29.6+rke2r1").build, Build::Rke2Release(1));
    assert_eq!(v("v1.25.16-rc1+rke2r1").distro(), Some(Distro::Rke2));
    assert_eq!(v("v1.30.1").build, Build::Other(String::new()));
    assert_eq!(v("v1.29.4+k3s1").to_string(), "v1.29.4+k3s1");
}

#[test]
fn rejects_what_is_not_a_version() {
    for bad in ["", "v", "1.29", "v1.29.x+k3s1", "latest", "v1.29.4+"] {
        assert!(
            ProductVersion::parse(bad).is_err(),
            "{bad} should not parse"
        );
    }
}

#[test]
fn every_row_of_the_affected_table() {
    // 1.25 and 1.26 never got the fix: nearest fixed line is 1.27.
    let later = |v: &str| SplitImpact::Affected {
        advice: UpgradeAdvice::LaterLine(v.into()),
    };
    assert_eq!(impact("v1.25.14+k3s1"), SplitImpact::PredatesSnapshotCrs);
    assert_eq!(impact("v1.25.15+k3s1"), later("v1.27.15+k3s1"));
    assert_eq!(impact("v1.25.16+rke2r1"), later("v1.27.15+rke2r1"));
    assert_eq!(impact("v1.26.9+k3s1"), SplitImpact::PredatesSnapshotCrs);
    assert_eq!(impact("v1.26.10+k3s1"), later("v1.27.15+k3s1"));
    assert_eq!(impact("v1.26.15+k3s1"), later("v1.27.15+k3s1"));
    assert_eq!(impact("v1.27.6+k3s1"), SplitImpact::PredatesSnapshotCrs);
    assert_eq!(impact("v1.27.7+k3s1"), same_line("v1.27.15+k3s1"));
    assert_eq!(
        impact("v1.27.14+rke2r1"),
        SplitImpact::Affected {
            advice: UpgradeAdvice::SameLine("v1.27.15+rke2r1".into())
        }
    );
    assert_eq!(impact("v1.27.15+k3s1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.28.2+k3s1"), SplitImpact::PredatesSnapshotCrs);
    assert_eq!(impact("v1.28.3+k3s1"), same_line("v1.28.11+k3s1"));
    assert_eq!(impact("v1.28.10+k3s1"), same_line("v1.28.11+k3s1"));
    assert_eq!(impact("v1.28.11+k3s1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.29.0+k3s1"), same_line("v1.29.6+k3s1"));
    assert_eq!(impact("v1.29.4+k3s1"), same_line("v1.29.6+k3s1"));
    assert_eq!(impact("v1.29.5+k3s1"), same_line("v1.29.6+k3s1"));
    assert_eq!(impact("v1.29.6+k3s1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.29.6+rke2r1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.30.0+k3s1"), same_line("v1.30.2+k3s1"));
    assert_eq!(
        impact("v1.30.1+rke2r1"),
        SplitImpact::Affected {
            advice: UpgradeAdvice::SameLine("v1.30.2+rke2r1".into())
        }
    );
    assert_eq!(impact("v1.30.2+k3s1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.31.0+k3s1"), SplitImpact::Unaffected);
    assert_eq!(impact("v1.33.1+rke2r1"), SplitImpact::Unaffected);
    assert_eq!(impact("v1.24.17+k3s1"), SplitImpact::PredatesSnapshotCrs);
}

#[test]
fn release_candidates_are_judged_as_the_release_they_precede() {
    assert_eq!(impact("v1.31.2-rc2+k3s1"), SplitImpact::Unaffected);
    assert_eq!(impact("v1.29.6-rc1+k3s1"), SplitImpact::Fixed);
    assert_eq!(impact("v1.28.3-rc1+k3s1"), same_line("v1.28.11+k3s1"));
    assert_eq!(
        impact("v1.25.16-rc1+rke2r1"),
        SplitImpact::Affected {
            advice: UpgradeAdvice::LaterLine("v1.27.15+rke2r1".into())
        }
    );
}

#[test]
fn commit_builds_near_a_boundary_are_undetermined() {
    // The build QA used to validate the 1.29 backport (k3s-io/k3s#10230) had the fix, but
    // its version alone cannot say so.
    assert_eq!(
        impact("v1.29.5+k3s-da2625d1"),
        SplitImpact::Undetermined {
            advice: UpgradeAdvice::SameLine("v1.29.6+k3s1".into())
        }
    );
    assert_eq!(impact("v1.29.3+k3s-0123abcd"), same_line("v1.29.6+k3s1"));
    assert_eq!(impact("v1.29.6+k3s-0123abcd"), SplitImpact::Fixed);
    assert!(matches!(
        impact("v1.28.2+k3s-0123abcd"),
        SplitImpact::Undetermined { .. }
    ));
    assert_eq!(
        impact("v1.28.1+k3s-0123abcd"),
        SplitImpact::PredatesSnapshotCrs
    );
}

#[test]
fn lock_style_per_minor() {
    assert_eq!(v("v1.23.17+k3s1").lock_style(), LockStyle::ConfigMap);
    assert_eq!(v("v1.24.0+k3s1").lock_style(), LockStyle::ConfigMapAndLease);
    assert_eq!(
        v("v1.27.16+rke2r1").lock_style(),
        LockStyle::ConfigMapAndLease
    );
    assert_eq!(v("v1.28.0+k3s1").lock_style(), LockStyle::Lease);
    assert_eq!(v("v1.33.0+k3s1").lock_style(), LockStyle::Lease);
}

#[test]
fn etcd_lock_from_the_first_release_of_each_line_with_the_backport() {
    for (version, expected) in [
        ("v1.26.1+k3s1", Some(false)),
        ("v1.26.2+k3s1", Some(true)),
        ("v1.26.2-rc1+k3s1", Some(true)),
        ("v1.25.6+k3s1", Some(false)),
        ("v1.25.7+k3s1", Some(true)),
        ("v1.24.10+k3s1", Some(false)),
        ("v1.24.11+k3s1", Some(true)),
        ("v1.24.17+k3s1", Some(true)),
        ("v1.23.16+k3s1", Some(false)),
        ("v1.23.17+k3s1", Some(true)),
        ("v1.23.17+rke2r1", Some(true)),
        ("v1.22.17+k3s1", Some(false)),
        ("v1.29.4+k3s1", Some(true)),
        // A branch build validated with the backport reports the previous patch.
        ("v1.24.10+k3s-74ed4bef", None),
        ("v1.24.9+k3s-0123abcd", Some(false)),
        ("v1.24.12+k3s-0123abcd", Some(true)),
    ] {
        assert_eq!(v(version).has_etcd_lock(), expected, "{version}");
    }
}

#[test]
fn snapshot_rules_per_version() {
    assert!(!v("v1.28.2+k3s1").has_snapshot_crds());
    assert!(v("v1.28.3+k3s1").has_snapshot_crds());
    assert!(v("v1.31.1+k3s1").has_snapshot_crds());
    for (version, expected) in [
        // Every build of the first patch has the rule, k3s1 and release candidates included.
        ("v1.28.3+k3s1", Some(false)),
        ("v1.28.4-rc1+k3s1", Some(true)),
        ("v1.28.4+k3s1", Some(true)),
        ("v1.28.4+k3s2", Some(true)),
        ("v1.27.7+k3s1", Some(false)),
        ("v1.27.8+k3s1", Some(true)),
        ("v1.26.10+k3s1", Some(false)),
        ("v1.26.11+k3s1", Some(true)),
        ("v1.26.11+k3s2", Some(true)),
        ("v1.25.15+k3s1", Some(false)),
        ("v1.25.16+k3s1", None),
        ("v1.29.4+k3s1", Some(true)),
        ("v1.28.4+rke2r1", Some(true)),
        ("v1.27.7+rke2r1", Some(false)),
        ("v1.28.3+k3s-0123abcd", None),
        ("v1.28.5+k3s-0123abcd", Some(true)),
    ] {
        assert_eq!(v(version).entries_need_metadata(), expected, "{version}");
    }
    use crate::model::snapshot_entry::S3Shape;
    assert_eq!(v("v1.29.6+k3s1").s3_config_shape(), S3Shape::Legacy);
    assert_eq!(v("v1.29.7+k3s1").s3_config_shape(), S3Shape::Embedded);
    assert_eq!(v("v1.32.0+rke2r1").s3_config_shape(), S3Shape::Embedded);
}

#[test]
fn ordering_puts_candidates_before_releases() {
    let mut vs = [
        v("v1.29.6+k3s1"),
        v("v1.29.6-rc1+k3s1"),
        v("v1.29.4+k3s2"),
        v("v1.29.4+k3s1"),
    ];
    vs.sort();
    let names: Vec<_> = vs.iter().map(|v| v.as_str()).collect();
    assert_eq!(
        names,
        [
            "v1.29.4+k3s1",
            "v1.29.4+k3s2",
            "v1.29.6-rc1+k3s1",
            "v1.29.6+k3s1"
        ]
    );
}

#[test]
fn go_escaping_follows_the_go_release_of_each_build() {
    use crate::model::go_json::GoEscaping::{BeforeGo122, Go122};
    for (version, expected) in [
        ("v1.29.4+k3s1", Some(BeforeGo122)),
        ("v1.29.6+k3s1", Some(BeforeGo122)),
        ("v1.29.7+k3s1", Some(Go122)),
        ("v1.30.0+k3s1", Some(Go122)),
        ("v1.28.11+k3s1", Some(BeforeGo122)),
        ("v1.28.12+rke2r1", Some(Go122)),
        ("v1.27.16+k3s1", Some(Go122)),
        ("v1.26.15+k3s1", Some(BeforeGo122)),
        ("v1.33.1+k3s1", Some(Go122)),
        ("v1.29.6+k3s-0123abcd", None),
        ("v1.29.4", None),
    ] {
        assert_eq!(v(version).go_escaping(), expected, "{version}");
    }
}
