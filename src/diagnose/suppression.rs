//! Suppressions (`--ignore CODE[=OBJECT]` and the config file's `ignore:` list): findings an
//! operator has accepted, such as `version-affected` until the upgrade is scheduled. A
//! suppressed finding is still reported (JSON `ignored: true`), but it never counts toward the
//! exit code, the summary counts or the alerting metric.

use super::check::CheckAnalysis;
use super::finding::{Finding, FindingCode};

/// One `CODE[=OBJECT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    pub code: FindingCode,
    /// `None`: every finding with this code.
    pub object: Option<String>,
}

impl Suppression {
    /// Reads `CODE` or `CODE=OBJECT`; the error names what is wrong and what is accepted.
    pub fn parse(text: &str) -> Result<Suppression, String> {
        let (code_text, object) = match text.split_once('=') {
            Some((code, object)) => (code.trim(), Some(object.trim())),
            None => (text.trim(), None),
        };
        let code = FindingCode::ALL
            .into_iter()
            .find(|c| c.as_str() == code_text)
            .ok_or_else(|| {
                format!(
                    "'{code_text}' is not a finding code (see `k3sdoctor man` or docs/findings.md; \
                     e.g. version-affected, lease-holder-agentless)"
                )
            })?;
        let object = match object {
            Some("") => {
                return Err(format!(
                    "'{text}' names no object after '=': write {code_text} alone for every object, or {code_text}=KIND/NAME"
                ));
            }
            other => other.map(str::to_string),
        };
        Ok(Suppression { code, object })
    }

    /// Whether this suppression covers `finding`. OBJECT is compared with the finding's main
    /// object as `check` prints it (`Node server-1`, `Lease kube-system/k3s`) or as kubectl
    /// names it (`node/server-1`, `lease/k3s`, `kube-system/k3s`, or the bare name); a finding
    /// that names several objects is matched only by its own `object` text, so one name never
    /// hides findings about others.
    pub fn matches(&self, finding: &Finding) -> bool {
        if finding.code != self.code {
            return false;
        }
        let Some(object) = &self.object else {
            return true;
        };
        if finding.object == *object {
            return true;
        }
        let Some(main) = &finding.object_ref else {
            return false;
        };
        let wanted = object.to_ascii_lowercase();
        let kind = main.kind.to_ascii_lowercase();
        let mut names = vec![main.name.clone(), format!("{kind}/{}", main.name)];
        if let Some(ns) = &main.namespace {
            names.push(format!("{ns}/{}", main.name));
            names.push(format!("{kind}/{ns}/{}", main.name));
        }
        names.iter().any(|n| n.to_ascii_lowercase() == wanted)
    }
}

/// Every suppression in force: the flags' and the config file's together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Suppressions(pub Vec<Suppression>);

impl Suppressions {
    fn mark(&self, finding: &mut Finding) {
        finding.ignored = self.0.iter().any(|s| s.matches(finding));
    }

    /// Marks the findings (linked consequences too) that a suppression covers.
    pub(crate) fn apply(&self, mut analysis: CheckAnalysis) -> CheckAnalysis {
        for linked in &mut analysis.findings {
            self.mark(&mut linked.finding);
            for child in &mut linked.children {
                self.mark(child);
            }
        }
        analysis
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::finding::{FailOn, Severity};

    fn node_finding() -> Finding {
        Finding::new(
            Severity::Error,
            FindingCode::LeaseHolderNotReady,
            "Node server-2",
            "NotReady",
        )
    }

    #[test]
    fn parses_code_and_code_with_object() {
        assert_eq!(
            Suppression::parse("version-affected"),
            Ok(Suppression {
                code: FindingCode::VersionAffected,
                object: None
            })
        );
        assert_eq!(
            Suppression::parse("lease-holder-not-ready=node/server-2")
                .unwrap()
                .object
                .as_deref(),
            Some("node/server-2")
        );
    }

    #[test]
    fn refuses_unknown_codes_and_empty_objects() {
        let err = Suppression::parse("version-afected").unwrap_err();
        assert!(
            err.contains("'version-afected' is not a finding code"),
            "{err}"
        );
        let err = Suppression::parse("version-affected=").unwrap_err();
        assert!(err.contains("names no object"), "{err}");
    }

    #[test]
    fn a_code_alone_matches_every_object_with_that_code_only() {
        let s = Suppression::parse("lease-holder-not-ready").unwrap();
        assert!(s.matches(&node_finding()));
        let other = Finding::new(
            Severity::Error,
            FindingCode::LeaseExpired,
            "Node server-2",
            "",
        );
        assert!(!s.matches(&other));
    }

    #[test]
    fn an_object_matches_as_check_prints_it_or_as_kubectl_names_it() {
        for spelling in [
            "Node server-2",
            "node/server-2",
            "Node/server-2",
            "server-2",
        ] {
            let s = Suppression::parse(&format!("lease-holder-not-ready={spelling}")).unwrap();
            assert!(s.matches(&node_finding()), "{spelling}");
        }
        for other in ["server-3", "node/server-3", "lease/server-2", "server"] {
            let s = Suppression::parse(&format!("lease-holder-not-ready={other}")).unwrap();
            assert!(!s.matches(&node_finding()), "{other}");
        }
        let lease = Finding::new(
            Severity::Error,
            FindingCode::LeaseExpired,
            "Lease kube-system/k3s",
            "",
        );
        for spelling in [
            "lease/k3s",
            "kube-system/k3s",
            "k3s",
            "lease/kube-system/k3s",
        ] {
            let s = Suppression::parse(&format!("lease-expired={spelling}")).unwrap();
            assert!(s.matches(&lease), "{spelling}");
        }
    }

    #[test]
    fn an_ignored_finding_never_fails_the_run() {
        let mut f = node_finding();
        assert!(FailOn::Error.is_failure(std::slice::from_ref(&f)));
        Suppressions(vec![Suppression::parse("lease-holder-not-ready").unwrap()]).mark(&mut f);
        assert!(f.ignored);
        assert!(!FailOn::Warning.is_failure(std::slice::from_ref(&f)));
        Suppressions(vec![
            Suppression::parse("lease-holder-not-ready=server-9").unwrap(),
        ])
        .mark(&mut f);
        assert!(!f.ignored);
    }
}
