//! Plain data parsed from API objects. Nothing here talks to the network or the terminal.

pub mod configmap;
pub mod lease;
pub mod lock;
pub mod node;
