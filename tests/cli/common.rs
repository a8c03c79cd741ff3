//! Commands several test files run the same way.

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{Output, k3sdoctor};
use crate::support::objects::NOW;

/// `leases follow --fix --yes --now NOW` as admin, plus `extra`.
pub(crate) fn follow_fix(fake: &FakeApi, extra: &[&str]) -> Output {
    k3sdoctor(
        ["leases", "follow", "--fix", "--yes", "--now", NOW]
            .iter()
            .chain(extra),
    )
    .cluster(fake, Role::Admin)
    .run()
}
