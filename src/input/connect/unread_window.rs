//! How much of its answers Rancher may send ahead of k3sdoctor's reading: each HTTP/2
//! connection's receive window. k3sdoctor parses a fleet's answers on one thread; hyper's
//! default window, 5 MiB a connection, let the 16 connections of `--parallel 500` hold up to
//! 80 MiB of answers not yet read (an apiserver's `/metrics` alone is ~370 KB per cluster),
//! and the fleet's peak memory grew with it. The windows of one Rancher's connections now
//! share a budget, so a fleet buffers about as much however many connections it opens.

/// The answers all of one Rancher's connections may hold unread.
const UNREAD_BUDGET: u32 = 16 << 20;

/// No connection gets less: a window is the most one round trip delivers, and 1 MiB per
/// 50 ms is 20 MiB/s on that connection.
const LEAST_WINDOW: u32 = 1 << 20;

/// hyper's default, which a fleet on one or a few connections (the default `--parallel 16`
/// opens one) keeps.
const MOST_WINDOW: u32 = 5 << 20;

/// The receive window of each of `connections` HTTP/2 connections to one Rancher.
pub(super) fn connection_window(connections: usize) -> u32 {
    let connections = u32::try_from(connections.max(1)).unwrap_or(u32::MAX);
    (UNREAD_BUDGET / connections).clamp(LEAST_WINDOW, MOST_WINDOW)
}

#[cfg(test)]
mod tests;
