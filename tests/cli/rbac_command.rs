//! `k3sdoctor rbac [read-only|repair|serve|heal]`: the roles, printed from the one source in
//! deploy/ and equal to the README's blocks, ready for `kubectl apply -f -`; and the RBAC
//! errors name that command.

use serde::Deserialize;
use serde_json::Value;

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::manifests::yaml_documents;
use crate::support::readme::{readme_namespaced_role, readme_role, readme_role_in};

fn documents(yaml: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|doc| Value::deserialize(doc).unwrap())
        .collect()
}

fn printed(args: &[&str]) -> Vec<Value> {
    let out = k3sdoctor(["rbac"].iter().chain(args)).run();
    out.code(0);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    documents(&out.stdout)
}

#[test]
fn read_only_and_serve_print_the_readmes_read_only_roles() {
    let readme = [
        documents(&readme_role("k3sdoctor-read-only")),
        documents(&readme_namespaced_role("k3sdoctor-read-only")),
        documents(&readme_role_in("k3sdoctor-read-only", "kube-system")),
        documents(&readme_role_in("k3sdoctor-read-only", "kube-node-lease")),
    ]
    .concat();
    assert_eq!(printed(&[]), readme, "the default is read-only");
    assert_eq!(printed(&["read-only"]), readme);
    // serve adds the token reviews of --metrics-auth kubernetes, as deploy/ ships them.
    let serve = [
        readme.clone(),
        yaml_documents("deploy/base/serve-auth-clusterrole.yaml"),
    ]
    .concat();
    assert_eq!(printed(&["serve"]), serve);
    // The source the binary prints from is what deploy/ ships.
    assert_eq!(
        [
            yaml_documents("deploy/base/serve-clusterrole.yaml"),
            yaml_documents("deploy/base/serve-role.yaml"),
            yaml_documents("deploy/base/serve-role-kube-system.yaml"),
            yaml_documents("deploy/base/serve-role-kube-node-lease.yaml")
        ]
        .concat(),
        readme
    );
}

#[test]
fn rancher_prints_the_docs_management_cluster_roles() {
    let docs = [
        documents(&readme_role("k3sdoctor-rancher-read-only")),
        documents(&readme_namespaced_role("k3sdoctor-rancher-read-only")),
    ]
    .concat();
    let opt_in = documents(&readme_namespaced_role("k3sdoctor-rancher-machine-plans"));
    assert_eq!(
        printed(&["rancher"]),
        [docs.clone(), opt_in.clone()].concat()
    );
    assert_eq!(
        yaml_documents("deploy/rancher/rancher-read-only.yaml"),
        docs
    );
    assert_eq!(
        yaml_documents("deploy/rancher/rancher-machine-plans.yaml"),
        opt_in
    );
    let docs = [docs, opt_in].concat();
    // Read-only, as the promise says: no verb but get, list or watch.
    for rule in docs
        .iter()
        .flat_map(|d| d["rules"].as_array().unwrap().clone())
    {
        for verb in rule["verbs"].as_array().unwrap() {
            assert!(
                ["get", "list", "watch"].contains(&verb.as_str().unwrap()),
                "{rule}"
            );
        }
    }
}

#[test]
fn repair_prints_the_readmes_repair_role() {
    let readme = documents(&readme_namespaced_role("k3sdoctor-repair"));
    assert_eq!(printed(&["repair"]), readme);
    assert_eq!(yaml_documents("deploy/repair-role.yaml"), readme);
}

#[test]
fn heal_prints_the_docs_heal_role_and_other_words_are_usage_errors() {
    let docs = documents(&crate::support::readme::readme_namespaced_role(
        "k3sdoctor-heal",
    ));
    assert_eq!(printed(&["heal"]), docs);
    assert_eq!(yaml_documents("deploy/heal/heal-role.yaml"), docs);
    k3sdoctor(["rbac", "admin"]).run().code(2);
    k3sdoctor(["-o", "jsonl", "rbac"])
        .run()
        .code(2)
        .one_line_error();
}

#[test]
fn secrets_metadata_prints_the_docs_opt_in_role_and_its_binding() {
    let docs = documents(&readme_namespaced_role("k3sdoctor-secrets-metadata"));
    assert_eq!(printed(&["secrets-metadata"]), docs);
    assert_eq!(yaml_documents("deploy/secrets-metadata-role.yaml"), docs);
    assert_eq!(
        docs.iter()
            .map(|d| d["kind"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Role", "RoleBinding"]
    );
    assert_eq!(docs[0]["metadata"]["namespace"], "kube-system");
    // list secrets, nothing else: RBAC cannot narrow it to metadata, so it grants no more.
    assert_eq!(
        docs[0]["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}])
    );
    assert_eq!(docs[1]["roleRef"]["name"], "k3sdoctor-secrets-metadata");
    let out = k3sdoctor(["rbac", "secrets-metadata"]).run();
    assert!(
        out.stdout.contains("RBAC cannot narrow list to metadata"),
        "{}",
        out.stdout
    );
}

/// A 403 names the command that prints the role it lacks.
#[test]
fn a_forbidden_read_names_the_rbac_command() {
    let fake = FakeApi::with_objects(vec![]);
    k3sdoctor(["leases"])
        .cluster(&fake, Role::Nobody)
        .run()
        .code(3)
        .one_line_error()
        .stderr_has("`k3sdoctor rbac read-only` prints it");
}
