//! Bounded condition waits shared by the fake-server and real-apiserver tests.

use std::time::{Duration, Instant};

/// Polls `cond` every 50 ms until it holds or `limit` passes; bounded so no test hangs.
pub(crate) fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}
