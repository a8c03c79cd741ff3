//! A target that dies while `leases follow` moves the lock onto it: the result is exit 4 or a
//! takeover the target really made, never a false "verified".

use crate::common::run_as;
use crate::support::envtest::servers::{SimCluster, TRANSITION};
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::wait::wait_for;

const FOLLOW: &[&str] = &["leases", "follow", "--fix", "--yes", "--timeout", "40s"];

#[test]
fn real_target_crashed_before_the_write_is_never_verified() {
    let Some(env) = EnvTest::start("real_target_crashed_before_the_write_is_never_verified") else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    cluster.split_etcd_onto("server-2");
    // Its k3s-etcd lease and Node still look alive for a lease duration: the preflight passes,
    // the write lands, and nobody named server-2 is left to renew it.
    env.kill_sim("server-2");
    let out = run_as(&env, User::Admin, FOLLOW);
    out.code(4).one_line_error();
    assert!(
        !env.sim_log("server-2")
            .contains("became leader of k3s (identity server-2)"),
        "server-2 cannot have taken k3s"
    );
}

#[test]
fn real_target_crashed_during_verification_is_exit_4_or_a_real_takeover() {
    let Some(env) =
        EnvTest::start("real_target_crashed_during_verification_is_exit_4_or_a_real_takeover")
    else {
        return;
    };
    let cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 3, &[]);
    cluster.split_etcd_onto("server-2");
    let follow = k3sdoctor(FOLLOW)
        .kubeconfig(&env.kubeconfig(User::Admin))
        .spawn();
    assert!(
        wait_for(TRANSITION, || cluster.holders("k3s") == ["server-2"]),
        "follow did not write the lock"
    );
    env.kill_sim("server-2");
    let out = follow.wait();
    let took_over = env
        .sim_log("server-2")
        .contains("became leader of k3s (identity server-2)");
    match out.code {
        0 => assert!(
            took_over,
            "verified, but server-2 never renewed k3s:\n{}",
            out.stderr
        ),
        _ => {
            out.code(4).one_line_error();
        }
    }
}
