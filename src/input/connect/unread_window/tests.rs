use super::*;

#[test]
fn one_rancher_s_connections_share_the_budget_within_the_bounds() {
    // The default --parallel 16 opens one connection; --parallel 500 opens 16.
    assert_eq!(connection_window(1), 5 << 20);
    assert_eq!(connection_window(0), 5 << 20);
    assert_eq!(connection_window(4), 4 << 20);
    assert_eq!(connection_window(16), 1 << 20);
    assert_eq!(connection_window(1_000), 1 << 20);
    assert_eq!(connection_window(usize::MAX), 1 << 20);
    for connections in 1..=64 {
        let window = connection_window(connections);
        assert!((LEAST_WINDOW..=MOST_WINDOW).contains(&window));
        assert!(
            window as usize * connections <= (UNREAD_BUDGET as usize).max(connections << 20),
            "{connections} connections may hold more than the budget"
        );
    }
}
