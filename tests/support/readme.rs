//! What the README promises, read from the README itself so tests apply it unchanged.

use super::harness::repo_path;

/// The YAML block of the README that defines ClusterRole `name`.
pub fn readme_role(name: &str) -> String {
    let readme = std::fs::read_to_string(repo_path("README.md")).unwrap();
    readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|yaml| {
            yaml.contains("kind: ClusterRole\n") && yaml.contains(&format!("name: {name}\n"))
        })
        .unwrap_or_else(|| panic!("README has no ClusterRole {name}"))
        .to_string()
}
