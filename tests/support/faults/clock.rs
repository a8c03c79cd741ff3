//! A steppable clock for the binary under test (libfaketime).
