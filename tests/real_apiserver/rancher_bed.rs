//! Smoke tests of the Rancher test bed itself (tests/support/rancher), not of k3sdoctor.
