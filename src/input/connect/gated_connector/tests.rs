//! The HTTP/2 keep-alive: often enough that the request timeout never ends a quiet connection.

use std::time::Duration;

use super::keep_alive_interval;

#[test]
fn a_quiet_connection_is_pinged_well_within_the_request_timeout() {
    let secs = Duration::from_secs;
    // The default --request-timeout.
    assert_eq!(keep_alive_interval(Some(secs(30))), secs(10));
    assert_eq!(keep_alive_interval(Some(secs(6))), secs(2));
    // Not more often than once a second, nor less than every 30 s.
    assert_eq!(keep_alive_interval(Some(secs(2))), secs(1));
    assert_eq!(keep_alive_interval(Some(secs(600))), secs(30));
    // --request-timeout 0: no read timeout to outrun, but a dead peer is still found.
    assert_eq!(keep_alive_interval(None), secs(30));
}
