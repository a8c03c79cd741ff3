//! A loopback TCP proxy that a test switches between pass, reset and blackhole.
