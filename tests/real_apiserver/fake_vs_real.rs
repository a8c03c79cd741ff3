//! The fake API server answers like the real one: the same objects, read through each, give
//! k3sdoctor byte-identical reports and the same errors. Where they differ, the real server is
//! right and the fake is fixed.

use serde_json::Value;

use crate::common::{run_as, until_exit};
use crate::support::envtest::admin::{AdminApi, configmap_path, lease_path};
use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::wait::wait_for;

/// Every object k3sdoctor reads, copied from the real server with its kind restored (list
/// items carry none).
fn copy_objects(env: &EnvTest) -> Vec<Value> {
    let lists = [
        (
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            "coordination.k8s.io/v1",
            "Lease",
        ),
        (
            "/api/v1/namespaces/kube-system/configmaps",
            "v1",
            "ConfigMap",
        ),
        ("/api/v1/nodes", "v1", "Node"),
        (
            "/apis/k3s.cattle.io/v1/etcdsnapshotfiles",
            "k3s.cattle.io/v1",
            "ETCDSnapshotFile",
        ),
    ];
    let mut objects = Vec::new();
    for (path, api_version, kind) in lists {
        let list = env.admin().get(path).expect("list");
        for mut item in list["items"].as_array().cloned().unwrap_or_default() {
            item["apiVersion"] = api_version.into();
            item["kind"] = kind.into();
            objects.push(item);
        }
    }
    objects
}

/// The report with what legitimately differs between two servers removed: their URLs, the
/// kubeconfig files pasteable commands name, resourceVersions (the fake numbers the copied
/// objects afresh), and what each presents in the TLS handshake (the fake speaks plain HTTP)
/// and so why each server's own address could not be read, and each datastore's size.
fn comparable(out: &Output, server: &str) -> String {
    // Wrapped at 80 columns, a different path length moves line breaks: compare words.
    let words = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = without_kubeconfig_paths(&words.replace(server, "<server>"));
    match serde_json::from_str::<Value>(&text) {
        Ok(mut report) => {
            drop_resource_versions(&mut report);
            // Each server reports its own datastore's size in its own era's metric.
            if let Some(report) = report.as_object_mut() {
                report.remove("datastore");
            }
            if let Some(checks) = report["checks"].as_array_mut() {
                checks.retain(|c| c["name"] != "connection-certificates");
                // Each server's own address is dialled with the kubeconfig's trust, which
                // differs: why the servers' metrics could not be read differs with it.
                for check in checks.iter_mut().filter(|c| c["name"] == "datastore") {
                    check.as_object_mut().map(|c| c.remove("note"));
                }
            }
            serde_json::to_string_pretty(&report).expect("JSON")
        }
        Err(_) => text,
    }
}

fn without_kubeconfig_paths(text: &str) -> String {
    let mut parts = text.split("--kubeconfig ");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let rest = part.split_once(' ').map_or("", |(_, rest)| rest);
        out.push_str("--kubeconfig <kubeconfig> ");
        out.push_str(rest);
    }
    out
}

fn drop_resource_versions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !k.to_lowercase().ends_with("resourceversion"));
            map.values_mut().for_each(drop_resource_versions);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_resource_versions),
        _ => {}
    }
}

#[test]
fn real_and_fake_servers_give_the_same_reports_on_the_same_objects() {
    let Some(env) =
        EnvTest::start("real_and_fake_servers_give_the_same_reports_on_the_same_objects")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    // A first snapshot round reaches the ConfigMap before the split, so both servers get one.
    assert!(wait_for(TRANSITION, || env
        .admin()
        .configmap("k3s-etcd-snapshots")
        .is_some()));
    cluster.split_etcd_onto("server-2");
    until_exit(&env, &["snapshots", "diff"], 1);
    // Freeze the cluster: crashed servers release nothing and write nothing more.
    for server in &cluster.servers {
        env.kill_sim(&server.hostname);
    }
    let now = cluster
        .env
        .admin()
        .lease_record("k3s")
        .expect("k3s lease")
        .renew_time;
    let fake = FakeApi::start();
    // The bed serves no HelmChart CRD (packaged-charts: "not installed"); neither does the fake.
    fake.set_helm_crd_installed(false);
    for object in copy_objects(&env) {
        fake.put(object);
    }

    for args in [
        &["leases", "-o", "json"][..],
        &["leases", "-o", "wide"],
        &["check", "-o", "json"],
        &["snapshots", "list", "-o", "json"],
        &["snapshots", "diff", "-o", "json"],
        &["leases", "follow", "-o", "json"],
    ] {
        let with_now: Vec<&str> = args.iter().copied().chain(["--now", &now]).collect();
        let real = run_as(&env, User::Admin, &with_now);
        let faked = k3sdoctor(&with_now).cluster(&fake, Role::Admin).run();
        assert_eq!(
            (real.code, comparable(&real, env.server())),
            (faked.code, comparable(&faked, &fake.url())),
            "{args:?}: the real and the fake server disagree\n--- real stderr\n{}\n--- fake stderr\n{}",
            real.stderr,
            faked.stderr
        );
    }

    // Both serve a clock in their Date header, which live freshness is judged on.
    let real: Value = run_as(&env, User::Admin, &["leases", "-o", "json"]).json();
    let faked: Value = k3sdoctor(["leases", "-o", "json"])
        .cluster(&fake, Role::Admin)
        .run()
        .json();
    assert_eq!(real["now"]["source"], faked["now"]["source"]);

    // The writes a repair makes, and the ways they fail, answered alike.
    let fake_admin = AdminApi::new(&fake.write_kubeconfig(env.scratch(), Role::Admin));
    assert_eq!(
        write_probes(env.admin()),
        write_probes(&fake_admin),
        "the real (left) and the fake (right) server answer writes differently"
    );

    // The same refusal, in the same words, for a user with no rights.
    for args in [&["leases"][..], &["snapshots", "diff"], &["check"]] {
        let real = run_as(&env, User::Nobody, args);
        let faked = k3sdoctor(args).cluster(&fake, Role::Nobody).run();
        assert_eq!(
            (real.code, real.stderr.replace(env.server(), "<server>")),
            (faked.code, faked.stderr.replace(&fake.url(), "<server>")),
            "{args:?}: different errors for a user without rights"
        );
    }
}

/// What a server answers to the writes k3sdoctor makes and to the ways they go wrong: status
/// code and message (numbers elided, as resourceVersions differ), in order.
fn write_probes(api: &AdminApi) -> Vec<(String, u16, String)> {
    let mut answers = Vec::new();
    let probe = |what: &str, method: &str, path: &str, body: Option<&Value>| {
        let (code, message) = match api.request(method, path, "application/json", body) {
            Ok(v) => (200, v["kind"].as_str().unwrap_or_default().to_string()),
            Err((code, message)) => (code, message),
        };
        let message: String = message
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        (what.to_string(), code, message)
    };
    let lease = api.lease("k3s").expect("the k3s lease");
    let rv = lease["metadata"]["resourceVersion"].clone();
    answers.push(probe(
        "get a missing lease",
        "GET",
        &lease_path("nope"),
        None,
    ));

    let mut stale = lease.clone();
    stale["metadata"]["resourceVersion"] = "1".into();
    answers.push(probe(
        "put with a stale resourceVersion",
        "PUT",
        &lease_path("k3s"),
        Some(&stale),
    ));

    let mut unconditional = lease.clone();
    unconditional["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("resourceVersion");
    answers.push(probe(
        "put without resourceVersion",
        "PUT",
        &lease_path("k3s"),
        Some(&unconditional),
    ));

    let mut renamed = lease.clone();
    renamed["metadata"]["name"] = "other".into();
    answers.push(probe(
        "put under another name",
        "PUT",
        &lease_path("k3s"),
        Some(&renamed),
    ));

    let mut moved = lease.clone();
    moved["spec"]["holderIdentity"] = "server-3".into();
    answers.push(probe(
        "dry-run put",
        "PUT",
        &format!("{}?dryRun=All&fieldManager=k3sdoctor", lease_path("k3s")),
        Some(&moved),
    ));
    let after = api.lease("k3s").expect("the k3s lease");
    answers.push((
        "dry run left the lease as it was".into(),
        0,
        (after["metadata"]["resourceVersion"] == rv
            && after["spec"]["holderIdentity"] == lease["spec"]["holderIdentity"])
            .to_string(),
    ));

    let mut big = api
        .configmap("k3s-etcd-snapshots")
        .expect("the snapshot ConfigMap");
    big["data"]["padding"] = "x".repeat(1024 * 1024).into();
    answers.push(probe(
        "put a ConfigMap over 1 MiB",
        "PUT",
        &configmap_path("k3s-etcd-snapshots"),
        Some(&big),
    ));
    answers
}
