//! The manifest `k3sdoctor dump` writes: the kinds it read whole, so an empty list still says
//! "read, and none" (its `List` has no item to tell the kind by), and what the API server
//! refused, which `check` then reports as not checked with the reason.

use super::Source;
use crate::model::dump_manifest::{MANIFEST_FILE, MANIFEST_KIND, Manifest};
use crate::model::kinds::Kind;

/// The manifest, when `path` is one.
pub(super) fn read(path: &str, bytes: &[u8]) -> Option<Manifest> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name != MANIFEST_FILE {
        return None;
    }
    serde_json::from_slice::<Manifest>(bytes)
        .ok()
        .filter(|m| m.kind == MANIFEST_KIND)
}

pub(super) fn add(manifest: Manifest, file: &str, source: &mut Source) {
    source.complete.extend(
        manifest
            .read
            .iter()
            .filter_map(|k| Kind::named(&k.kind))
            .map(Kind::name),
    );
    for refused in &manifest.refused {
        source.notes.push(format!(
            "{file}: the dump's {} were refused when it was taken ({})",
            refused.kind, refused.refused
        ));
    }
}
