//! Concurrent writers: several runs of the binary released at the same instant.
