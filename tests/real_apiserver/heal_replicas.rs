//! Two `serve --heal` replicas with exactly the heal role: one heals a split, once; after a
//! `kill -9` of the one that healed, the other takes the heal Lease, reads the cooldown back
//! from it and does not heal a split that comes back inside it.

use std::time::Duration;

use crate::common::another_server;
use crate::heal::{HEALED, SEEN, events, held_back};
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::readme::{readme_namespaced_role, readme_role_in};
use crate::support::scrape::{metrics, sample, start_serve, wait_for_sample};

#[test]
fn real_two_replicas_with_the_heal_role_heal_a_split_once() {
    let Some(env) = EnvTest::start("real_two_replicas_with_the_heal_role_heal_a_split_once") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    // What deploy/ and deploy/heal/ grant serve: the read-only ClusterRole and Roles, and the
    // heal Role in kube-system (docs/rbac.md).
    let admin = env.admin();
    crate::common::grant_read_only(&env, "repair");
    admin.apply_yaml(&readme_role_in("k3sdoctor-read-only", "kube-node-lease"));
    admin.bind_in("kube-node-lease", "k3sdoctor-read-only", "repair");
    admin.apply_yaml(&readme_namespaced_role("k3sdoctor-heal"));
    admin.bind_in("kube-system", "k3sdoctor-heal", "repair");
    let core = cluster.core_lock();
    let target = another_server(&cluster, &core);
    cluster.split_etcd_onto(target);
    let replica = || {
        start_serve(
            k3sdoctor(["serve", "--heal", "on", "--heal-after", "5s"])
                .kubeconfig(&env.kubeconfig(User::Repair)),
        )
    };
    let (a, a_address) = replica();
    let (b, b_address) = replica();
    let moved = |address| {
        sample(
            &metrics(address),
            r#"k3sdoctor_heals_total{outcome="moved"}"#,
        )
        .unwrap_or(0.0)
    };
    assert!(
        crate::support::wait::wait_for(HEALED, || moved(a_address) + moved(b_address) >= 1.0),
        "neither replica healed"
    );
    assert_eq!(cluster.holders(&core), vec![target.to_string()]);
    // The other one never moves: it does not hold the heal Lease.
    std::thread::sleep(Duration::from_secs(10));
    assert_eq!(moved(a_address) + moved(b_address), 1.0);
    let a_scrape = metrics(a_address);
    let b_scrape = metrics(b_address);
    assert_eq!(
        sample(&a_scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#).unwrap()
            + sample(&b_scrape, r#"k3sdoctor_heals_total{outcome="failed"}"#).unwrap(),
        0.0
    );
    assert_eq!(events(&env, "LockMoved").len(), 1);
    let lease = env
        .admin()
        .get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/k3sdoctor-heal")
        .expect("the heal Lease");
    assert!(
        lease["spec"]["holderIdentity"]
            .as_str()
            .is_some_and(|h| !h.is_empty()),
        "{lease:#}"
    );
    let annotations = &lease["metadata"]["annotations"];
    assert_eq!(
        annotations["k3sdoctor.io/heal-cooldown"], "30m",
        "{lease:#}"
    );
    assert!(
        annotations["k3sdoctor.io/heal-last"].is_string(),
        "{lease:#}"
    );

    // Split again, and kill -9 the replica that healed: the other takes the heal Lease, reads
    // the cooldown back from it, and does not heal inside it.
    let etcd = cluster.etcd_lock();
    let again = another_server(&cluster, &core);
    cluster.split_etcd_onto(again);
    let (healer, healer_address, other, other_address) = if moved(a_address) == 1.0 {
        (a, a_address, b, b_address)
    } else {
        (b, b_address, a, a_address)
    };
    wait_for_sample(
        healer_address,
        r#"k3sdoctor_heal_blocked{reason="cooldown"}"#,
        1.0,
        SEEN,
    );
    healer.signal_and_wait(libc::SIGKILL);
    // The killed holder's Lease expires (15 s) before the other replica takes it.
    wait_for_sample(
        other_address,
        r#"k3sdoctor_heal_blocked{reason="cooldown"}"#,
        1.0,
        SEEN,
    );
    held_back(other_address, "cooldown");
    let scrape = metrics(other_address);
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heal_blocked{reason="not-leader"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, r#"k3sdoctor_heals_total{outcome="moved"}"#),
        Some(0.0),
        "{scrape}"
    );
    assert_eq!(events(&env, "LockMoved").len(), 1);
    assert_eq!(cluster.holder(&core), target);
    assert_eq!(cluster.holder(&etcd), again);
    other
        .signal_and_wait(libc::SIGTERM)
        .code(0)
        .stderr_has("blocked: cooldown");
}
