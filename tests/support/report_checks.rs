//! Reading a report's `checks` list (check, `/report`, a fleet entry's report) by name.

use serde_json::Value;

/// The entry of `report.checks` named `name`; panics with the whole list when there is none,
/// so a renamed check fails with what the report did list.
pub(crate) fn check_run<'a>(report: &'a Value, name: &str) -> &'a Value {
    let checks = report["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks list in {report}"));
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check named {name} in {checks:?}"))
}

/// Every finding of a `CheckReport`, primaries and the children linked under them, in order.
pub(crate) fn every_finding(report: &Value) -> Vec<&Value> {
    report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings list in {report}"))
        .iter()
        .flat_map(|f| std::iter::once(f).chain(f["children"].as_array().into_iter().flatten()))
        .collect()
}

/// `severity/code` of each finding in `findings` (a report's `findings` list), in order.
pub(crate) fn severity_codes(findings: &Value) -> Vec<String> {
    findings
        .as_array()
        .unwrap_or_else(|| panic!("no findings list: {findings}"))
        .iter()
        .map(|f| {
            format!(
                "{}/{}",
                f["severity"].as_str().unwrap_or_default(),
                f["code"].as_str().unwrap_or_default()
            )
        })
        .collect()
}
