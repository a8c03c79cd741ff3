//! Completion against the real kube-apiserver with simulated RKE2 servers:
//! completion offers the servers (node names and hostnames as k3ssim registers them) and the
//! lock names of the distro the real locks show; `-vv` traces the real requests; kubectl's
//! flags go on either side of the subcommand.

use std::process::{Command, Stdio};

use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;

/// `kubectl_complete-k3s_doctor WORDS` (the binary under kubectl's completion name): the
/// values, after checking the answer is Cobra's and nothing reached stderr.
fn complete(env: &EnvTest, words: &[&str]) -> Vec<String> {
    let bin = env.scratch().join("kubectl_complete-k3s_doctor");
    if !bin.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_k3sdoctor"), &bin).unwrap();
    }
    let out = Command::new(&bin)
        .args(words)
        .env_clear()
        .env("HOME", env.scratch())
        .env("KUBECONFIG", env.kubeconfig(User::Admin))
        .env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            env.scratch().join("none"),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{words:?}: {out:?}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.pop(), Some(":4"), "{text}");
    let mut values: Vec<String> = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    values.sort();
    values
}

#[test]
fn real_completion_offers_the_servers_and_the_distros_lock_names() {
    let Some(env) = EnvTest::start("real_completion_offers_the_servers_and_the_distros_lock_names")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "rke2", "v1.29.4+rke2r1", 2, &[]);
    let mut expected: Vec<String> = cluster
        .servers
        .iter()
        .flat_map(|s| [s.node.clone(), s.hostname.clone()])
        .collect();
    expected.sort();
    assert_eq!(complete(&env, &["leases", "follow", "--to", ""]), expected);
    assert_eq!(
        complete(&env, &["leases", "follow", "--to", "server-"]),
        ["server-1", "server-2"]
    );
    // The distro comes from the real locks: no k3s names on an RKE2 cluster.
    assert_eq!(
        complete(&env, &["leases", "follow", "--lease", ""]),
        ["rke2", "rke2-etcd"]
    );
    let context = complete(&env, &["--context", ""]);
    assert_eq!(context.len(), 1, "{context:?}");

    // kubectl's flags before and after the subcommand, against the real server.
    let kc = env.kubeconfig(User::Admin);
    for args in [
        vec!["--context", &context[0], "leases", "-o", "json"],
        vec!["leases", "--context", &context[0], "-o", "json"],
    ] {
        let out = k3sdoctor(&args).kubeconfig(&kc).run();
        assert!(out.code == 0 || out.code == 1, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains("rke2-etcd"), "{args:?}");
    }

    // -vv: each real request with its status; -v: only the reads.
    let out = k3sdoctor(["leases", "-vv"]).kubeconfig(&kc).run();
    out.stderr_has("http.method=GET")
        .stderr_has("/api/v1/nodes")
        .stderr_has("http.status_code=200");
    let out = k3sdoctor(["leases", "-v"]).kubeconfig(&kc).run();
    out.stderr_has("list nodes: 2 items in");
    assert!(!out.stderr.contains("http.method="), "{}", out.stderr);
}
