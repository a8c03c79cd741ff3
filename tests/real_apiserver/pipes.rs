//! On the real API server, the lease table a script reads: one line per lock, the holder and
//! its node in columns of their own (the simulated servers campaign as `server-N` on nodes
//! `ip-10-0-0-1N`, the case that used to wrap as `server-2 (node` / `ip-10-0-0-12)`), and
//! YAML timestamps quoted as kubectl quotes them.

use crate::common::run_as;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};

#[test]
fn real_lease_table_rows_are_whole_for_awk_and_yaml_times_are_quoted() {
    let Some(env) =
        EnvTest::start("real_lease_table_rows_are_whole_for_awk_and_yaml_times_are_quoted")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    cluster.split_etcd_onto("server-2");
    let out = run_as(&env, User::Admin, &["leases", "--no-headers"]);
    out.code(1);
    // The rows as `awk '{print $1, $2, $3}'` splits them.
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        // stdout is the rows alone off a terminal, each with the same six fields (one-token
        // ages).
        .inspect(|f| assert_eq!(f.len(), 6, "{f:?}"))
        .collect();
    let expected = |lock: &str, holder: &str| {
        vec![
            lock.to_string(),
            holder.to_string(),
            cluster.server(holder).node.clone(),
        ]
    };
    let got: Vec<Vec<String>> = rows
        .iter()
        .map(|f| f[..3].iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(
        got,
        [
            expected("k3s", "server-1"),
            expected("k3s-etcd", "server-2")
        ],
        "{}",
        out.stdout
    );
    assert_ne!(cluster.server("server-2").node, "server-2");
    assert!(!out.stdout.contains("LOCK "), "{}", out.stdout);

    let yaml = run_as(&env, User::Admin, &["leases", "-o", "yaml"]).stdout;
    let quoted = regex::Regex::new(r#"renewTime: "\d{4}-\d\d-\d\dT[0-9:.]+Z""#).unwrap();
    assert!(quoted.is_match(&yaml), "{yaml}");
    let plain = regex::Regex::new(r"(?m)(: |- )\d{4}-\d\d-\d\dT").unwrap();
    assert!(!plain.is_match(&yaml), "{yaml}");
}
