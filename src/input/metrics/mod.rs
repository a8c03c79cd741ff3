//! The Prometheus text the servers answer on `/metrics`, read for the datastore's series
//! only, line by line (`scrape_reader`), whichever Kubernetes, etcd or kine version wrote it.

mod sample_line;
pub(crate) mod scrape_reader;
