//! Containers by content, nesting, caps, truncation, and repairs refused: a bundle is
//! untrusted input.

use serde_json::Value;

use super::{NOW, assert_same_as_dump, dump_verdict, run, troubleshoot_tgz, verdict, write};
use crate::support::bundles::{self, Bundle, FIXTURE, split_cluster};
use crate::support::harness::{k3sdoctor, repo_path};

#[test]
fn every_compression_and_zip_read_the_same() {
    let tar = bundles::troubleshoot(&split_cluster()).tar();
    let dir = tempfile::tempdir().unwrap();
    let (code, expected) = dump_verdict(&["leases"]);
    for (name, bytes, container) in [
        ("plain", tar.clone(), "tar"),
        ("gz", bundles::gzip(&tar), "gzip tar"),
        ("xz", bundles::xz(&tar), "xz tar"),
        ("bz2", bundles::bzip2(&tar), "bzip2 tar"),
        ("zst", bundles::zstd(&tar), "zstd tar"),
        ("zip", bundles::troubleshoot(&split_cluster()).zip(), "zip"),
    ] {
        // Names say nothing: every file is called `bundle`.
        let path = write(&dir, &format!("{name}-bundle"), &bytes);
        let out = run(&["leases", "-o", "json", "--now", NOW], &path);
        assert_eq!(out.code, code, "{name}: {}", out.stderr);
        assert_eq!(verdict(&out), expected, "{name}");
        let report: Value = out.json();
        assert_eq!(report["readFrom"][0]["container"], container, "{name}");
    }
}

#[test]
fn a_bundle_inside_a_ticket_zip_is_opened_one_level_deep() {
    let inner = bundles::gzip(&bundles::troubleshoot(&split_cluster()).tar());
    let ticket = Bundle::default()
        .file(
            "ticket-4711/notes.txt",
            "customer says the snapshots stopped\n",
        )
        .file("ticket-4711/support-bundle.tar.gz", inner.clone())
        .zip();
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "ticket.zip", &ticket);
    let out = assert_same_as_dump(&["leases"], &path);
    let report: Value = out.json();
    assert_eq!(
        report["readFrom"][0]["path"],
        format!("{path}:ticket-4711/support-bundle.tar.gz")
    );
    // Two levels down is not opened: nothing to read, exit 3, and the note says why.
    let deeper = Bundle::default()
        .file(
            "outer/ticket.tar.gz",
            bundles::gzip(&Bundle::default().file("bundle.tar.gz", inner).tar()),
        )
        .tar();
    let path = write(&dir, "deeper.tar", &deeper);
    run(&["leases"], &path)
        .code(3)
        .one_line_error()
        .stderr_has("k3sdoctor opens one level");
}

#[test]
fn each_cap_stops_the_read_with_one_line_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    // Eight MiB of log that gzip makes a few KiB: a small bomb.
    let bomb = bundles::troubleshoot(&split_cluster())
        .file("support-bundle-x/pods/logs/big.log", vec![b'a'; 8 << 20])
        .tar();
    let path = write(&dir, "bomb.tgz", &bundles::gzip(&bomb));
    assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
    run(&["leases", "--max-bundle-size", "1MiB"], &path)
        .code(3)
        .one_line_error()
        .stderr_has("decompresses to more than 1 MiB (--max-bundle-size)");
    run(&["leases", "-q", "--max-bundle-size", "16MiB"], &path).code(1);
    let many = write(
        &dir,
        "many.tar",
        &bundles::troubleshoot(&split_cluster()).tar(),
    );
    run(&["leases", "--max-bundle-entries", "5"], &many)
        .code(3)
        .one_line_error()
        .stderr_has("holds more than 5 entries (--max-bundle-entries)");
    let zip = write(
        &dir,
        "many.zip",
        &bundles::troubleshoot(&split_cluster()).zip(),
    );
    run(&["leases", "--max-bundle-entries", "5"], &zip)
        .code(3)
        .one_line_error()
        .stderr_has("holds more than 5 entries");
    k3sdoctor(["leases", "--max-bundle-size", "lots", "--from-file", &many])
        .run()
        .code(2);
}

#[test]
fn a_truncated_or_corrupt_archive_is_one_line_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let gz = bundles::gzip(&bundles::troubleshoot(&split_cluster()).tar());
    let cut = write(&dir, "cut.tar.gz", &gz[..gz.len() / 2]);
    run(&["check"], &cut)
        .code(3)
        .one_line_error()
        .stderr_has("the gzip tar data is truncated or corrupt");
    let zip = bundles::troubleshoot(&split_cluster()).zip();
    let cut = write(&dir, "cut.zip", &zip[..zip.len() - 40]);
    run(&["check"], &cut)
        .code(3)
        .one_line_error()
        .stderr_has("truncated or corrupt");
    let mut xz = bundles::xz(&bundles::troubleshoot(&split_cluster()).tar());
    let middle = xz.len() / 2;
    xz[middle] ^= 0xff;
    let bad = write(&dir, "bad.txz", &xz);
    run(&["check"], &bad).code(3).one_line_error();
}

#[test]
fn repairs_refuse_a_bundle_as_they_refuse_a_dump() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = troubleshoot_tgz(&dir, "bundle.tar.gz");
    for args in [
        vec!["leases", "follow", "--fix", "--yes"],
        vec!["snapshots", "backfill", "--fix", "--yes"],
    ] {
        run(&args, &bundle)
            .code(2)
            .one_line_error()
            .stderr_has("nor can a support bundle");
    }
}

#[test]
fn a_compressed_dump_file_is_read_as_the_dump() {
    let mut text = Vec::new();
    for file in ["nodes.yaml", "kube-system-leases.yaml"] {
        text.extend(b"---\n");
        text.extend(std::fs::read(repo_path(FIXTURE).join(file)).unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "leases.yaml.gz", &bundles::gzip(&text));
    run(&["leases", "--now", NOW], &path)
        .code(1)
        .stderr_has("lease-split");
}
