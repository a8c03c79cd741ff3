//! The fault harness: the faults loopback can produce, as fixtures a test switches on and off.
//! Every promise the README makes under faults is tested by causing the fault, not by reasoning
//! about it.

pub(crate) mod clock;
pub(crate) mod exec_plugin;
pub(crate) mod forward_proxy;
pub(crate) mod tcp_proxy;
pub(crate) mod writers;
