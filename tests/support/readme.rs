//! What the README promises, read from where it now lives (the roles: docs/rbac.md, linked from
//! the README's RBAC section) so tests apply it unchanged.

use super::harness::repo_path;

/// The YAML block of the README that defines ClusterRole `name`.
pub(crate) fn readme_role(name: &str) -> String {
    let readme = std::fs::read_to_string(repo_path("docs/rbac.md")).unwrap();
    readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|yaml| {
            yaml.contains("kind: ClusterRole\n") && yaml.contains(&format!("name: {name}\n"))
        })
        .unwrap_or_else(|| panic!("docs/rbac.md has no ClusterRole {name}"))
        .to_string()
}

/// The YAML block of the README that defines the Role `name` (namespaced).
pub(crate) fn readme_namespaced_role(name: &str) -> String {
    let readme = std::fs::read_to_string(repo_path("docs/rbac.md")).unwrap();
    readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|yaml| yaml.contains("kind: Role\n") && yaml.contains(&format!("name: {name}\n")))
        .unwrap_or_else(|| panic!("docs/rbac.md has no Role {name}"))
        .to_string()
}

/// The read-only rights every command needs: the ClusterRole and the Role in kube-system (the
/// locks' Leases live there), as two YAML documents.
pub(crate) fn readme_read_only_roles() -> String {
    format!(
        "{}---\n{}",
        readme_role("k3sdoctor-read-only"),
        readme_role_in("k3sdoctor-read-only", "kube-system")
    )
}

/// [`readme_read_only_roles`] as they were before admission-webhooks: without its rules, whose
/// cluster-wide `get endpoints` and `list endpointslices` also reach the `kubernetes` Service's.
pub(crate) fn read_only_roles_before_webhooks() -> String {
    let roles = readme_read_only_roles();
    let start = roles
        .find("  # webhook-fail-closed-down and webhook-blocks-control-plane")
        .expect("the webhook rules");
    let end = roles[start..]
        .find("  # Each server's datastore size")
        .expect("the rule after them")
        + start;
    format!("{}{}", &roles[..start], &roles[end..])
}

/// [`readme_read_only_roles`] as they were before they allowed watches: every `watch` verb
/// gone.
pub(crate) fn read_only_role_without_watch() -> String {
    let role = readme_read_only_roles()
        .replace("verbs: [list, watch]", "verbs: [list]")
        .replace("verbs: [get, list, watch]", "verbs: [get]");
    assert!(!role.contains("watch]"), "a watch verb is left: {role}");
    role
}

/// The YAML block of docs/rbac.md that defines the Role `name` in `namespace` (the read-only
/// Roles share one name: one in default, one in kube-system).
pub(crate) fn readme_role_in(name: &str, namespace: &str) -> String {
    let readme = std::fs::read_to_string(repo_path("docs/rbac.md")).unwrap();
    readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|yaml| {
            yaml.contains("kind: Role\n")
                && yaml.contains(&format!("name: {name}\n  namespace: {namespace}\n"))
        })
        .unwrap_or_else(|| panic!("docs/rbac.md has no Role {name} in {namespace}"))
        .to_string()
}
