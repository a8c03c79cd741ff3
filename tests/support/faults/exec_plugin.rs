//! Exec credential plugins that hang, fail, or print secrets.
