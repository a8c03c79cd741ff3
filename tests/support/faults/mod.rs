//! The fault harness: the faults loopback can produce, as fixtures a test switches on and off.
//! Every promise the README makes under faults is tested by causing the fault, not by reasoning
//! about it (design.md §7).

pub mod clock;
pub mod exec_plugin;
pub mod forward_proxy;
pub mod tcp_proxy;
pub mod writers;
