//! Archives built to exhaust memory: every byte an archive makes k3sdoctor
//! hold counts against `--max-bundle-size` before it is held, and a folder is held to the same
//! entry cap as an archive. Each archive is a few KiB or MiB; what it would have made k3sdoctor
//! hold is far larger, so without the fix these run long and end otherwise.

use super::{NOW, run, write};
use crate::support::bundles::{self, Bundle, TROUBLESHOOT_TOP, split_cluster};

const BIG: usize = 8 << 20;

/// An 8 MiB YAML file and `links` links to it, made by `link`.
fn linked(links: usize, link: fn(Bundle, &str, &str) -> Bundle) -> Bundle {
    let mut bundle = Bundle::default().file("dump/big.yaml", vec![b'#'; BIG]);
    for n in 0..links {
        bundle = link(bundle, &format!("dump/copy-{n}.yaml"), "dump/big.yaml");
    }
    bundle
}

#[test]
fn tar_hard_links_count_their_targets_bytes_each_time() {
    let dir = tempfile::tempdir().unwrap();
    // 8 MiB, and 8 MiB again for each of the 24 links: 200 MiB held from one 8 MiB file.
    let tar = linked(24, |b, path, target| b.hard_link(path, target)).tar();
    let path = write(&dir, "links.tar.gz", &bundles::gzip(&tar));
    run(&["leases", "--max-bundle-size", "64MiB"], &path)
        .code(3)
        .one_line_error()
        .stderr_has("decompresses to more than 64 MiB (--max-bundle-size)");
}

#[test]
fn tar_and_zip_symlinks_count_their_targets_bytes_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = linked(24, |b, path, _| b.link(path, "big.yaml"));
    for (name, bytes) in [
        ("symlinks.tar.gz", bundles::gzip(&bundle.tar())),
        ("symlinks.zip", bundle.zip()),
    ] {
        let path = write(&dir, name, &bytes);
        run(&["leases", "--max-bundle-size", "64MiB"], &path)
            .code(3)
            .one_line_error()
            .stderr_has("decompresses to more than 64 MiB (--max-bundle-size)");
    }
}

/// A GNU sparse member (`tar --sparse`) of `expanded` bytes that stores only its last block.
fn sparse_member(path: &str, expanded: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.set_path(path).unwrap();
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::GNUSparse);
    header.set_size(512);
    let gnu = header.as_gnu_mut().unwrap();
    gnu.set_real_size(expanded);
    gnu.sparse[0].set_offset(expanded - 512);
    gnu.sparse[0].set_length(512);
    header.set_cksum();
    let mut member = header.as_bytes().to_vec();
    member.extend([b'a'; 512]);
    member
}

#[test]
fn gnu_sparse_members_are_skipped_with_a_note_not_expanded() {
    // Ten members of 200 MiB each once their holes are filled, in a few KiB, beside the bundle.
    let mut tar = Vec::new();
    for n in 0..10 {
        tar.extend(sparse_member(&format!("extra/holes-{n}.yaml"), 200 << 20));
    }
    tar.extend(bundles::troubleshoot(&split_cluster()).tar());
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "sparse.tar.gz", &bundles::gzip(&tar));
    run(
        &["leases", "--now", NOW, "--max-bundle-size", "1MiB"],
        &path,
    )
    .code(1)
    .stderr_has("lease-split")
    .stderr_has(
        "skipped extra/holes-3.yaml in {path}: a GNU sparse member (209715200 bytes once its holes are filled)"
            .replace("{path}", &path)
            .as_str(),
    );
}

/// A header of `kind` that declares `size` bytes of extension data, then 1 MiB of it: the
/// rest is never there, since it must not be read.
fn declared_extension(kind: tar::EntryType, size: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.set_path("././@LongLink").unwrap();
    header.set_mode(0o644);
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_cksum();
    let mut tar = header.as_bytes().to_vec();
    tar.extend(vec![b'a'; 1 << 20]);
    tar
}

#[test]
fn long_names_and_pax_headers_past_a_mebibyte_are_refused_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, what) in [
        (tar::EntryType::GNULongName, "GNU long name"),
        (tar::EntryType::GNULongLink, "GNU long link name"),
        (tar::EntryType::XHeader, "PAX header"),
    ] {
        let tar = declared_extension(kind, 1536 << 20);
        let path = write(&dir, "long.tar.gz", &bundles::gzip(&tar));
        run(&["leases"], &path)
            .code(3)
            .one_line_error()
            .stderr_has(&format!(
                "a {what} in it declares 1536 MiB, more than the 1 MiB k3sdoctor reads for one member"
            ));
    }
}

#[test]
fn long_names_and_pax_paths_within_the_cap_are_read() {
    // A path past tar's 100 bytes: a GNU long name in a GNU tar, a PAX path in a ustar one.
    let deep = format!("{}/{TROUBLESHOOT_TOP}", "x".repeat(150));
    let bundle = bundles::troubleshoot(&split_cluster()).under(&deep);
    let dir = tempfile::tempdir().unwrap();
    let gnu = write(&dir, "gnu.tar", &bundle.tar());
    run(&["leases", "--now", NOW], &gnu)
        .code(1)
        .stderr_has("lease-split");
    // A PAX path: the leases file stored under a short name that no reader would take.
    let fixture = |file: &str| {
        std::fs::read(crate::support::harness::repo_path(&format!(
            "tests/fixtures/split-cluster/{file}"
        )))
        .unwrap()
    };
    let mut pax = tar::Builder::new(Vec::new());
    let nodes = fixture("nodes.yaml");
    let mut header = tar::Header::new_ustar();
    header.set_mode(0o644);
    header.set_size(nodes.len() as u64);
    pax.append_data(&mut header, "dump/nodes.yaml", &nodes[..])
        .unwrap();
    let leases = fixture("kube-system-leases.yaml");
    let long = format!("{}/kube-system-leases.yaml", "y".repeat(200));
    pax.append_pax_extensions([("path", long.as_bytes())])
        .unwrap();
    let mut header = tar::Header::new_ustar();
    header.set_mode(0o644);
    header.set_size(leases.len() as u64);
    header.set_path("short.txt").unwrap();
    header.set_cksum();
    pax.append(&header, &leases[..]).unwrap();
    let path = write(&dir, "pax.tar", &pax.into_inner().unwrap());
    run(&["leases", "--now", NOW], &path)
        .code(1)
        .stderr_has("lease-split");
}

#[test]
fn a_path_held_twice_in_a_tar_is_read_from_its_last_copy_and_said() {
    let leases = format!("{TROUBLESHOOT_TOP}/cluster-resources/leases/kube-system.json");
    let tar = Bundle::default()
        .file(&leases, "{\"kind\": \"LeaseList\", \"items\": []}")
        .tar();
    let mut both = tar[..tar.len() - 1024].to_vec();
    both.extend(bundles::troubleshoot(&split_cluster()).tar());
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "twice.tar", &both);
    // The last copy holds the split, so the split is what is reported.
    run(&["leases", "--now", NOW], &path)
        .code(1)
        .stderr_has("lease-split")
        .stderr_has(&format!(
            "{leases} appears 2 times in {path}: read the last copy in the archive, the one tar -x leaves"
        ));
}

#[test]
fn a_folder_is_held_to_the_entry_cap_as_an_archive_is() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("many");
    std::fs::create_dir(&folder).unwrap();
    for n in 0..200 {
        std::fs::write(folder.join(format!("pod-{n}.log")), "x\n").unwrap();
    }
    let folder = folder.display().to_string();
    run(&["leases", "--max-bundle-entries", "150"], &folder)
        .code(3)
        .one_line_error()
        .stderr_has(&format!(
            "the support bundle {folder} holds more than 150 entries (--max-bundle-entries)"
        ));
    run(&["leases", "--max-bundle-entries", "250"], &folder)
        .code(3)
        .stderr_has("no ");
}

#[test]
fn a_zips_listing_counts_before_the_zip_is_opened() {
    use std::io::Write;
    // 100 entries with a 60 KB comment each: 6 MB of listing (names, extra fields and comments
    // alike) around 200 bytes of content, all held by the zip crate as it opens the file.
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for n in 0..100 {
        let options = zip::write::FullFileOptions::default().with_file_comment("c".repeat(60_000));
        zip.start_file(format!("dump/{n}.yaml"), options).unwrap();
        zip.write_all(b"{}").unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "listing.zip", &bytes);
    run(&["leases", "--max-bundle-size", "4MiB"], &path)
        .code(3)
        .one_line_error()
        .stderr_has("decompresses to more than 4 MiB (--max-bundle-size)");
}
