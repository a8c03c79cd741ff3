//! The backup a ConfigMap repair saves first is written all or nothing: a full disk leaves no
//! partial file that would block a retry with the same path (a real ENOSPC, on a small tmpfs).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::restore::{backed_up, backfill_with_backup};
use crate::support::fake_api::FakeApi;
use crate::support::objects::{extra_metadata, lease, server, snapshot_configmap, snapshot_cr};

const V: &str = "v1.29.4+k3s1";

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` (and a line saying so) where this process may not mount, e.g. not root.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs here (needs root) for a real ENOSPC");
            return None;
        }
        Some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot resize the tmpfs");
    }

    fn entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A ConfigMap of about 200 KiB (bigger than the disk) and one snapshot missing from it.
fn big_configmap_cluster() -> FakeApi {
    let filler = "x".repeat(1000);
    let entries: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("etcd-snapshot-old-{}", 1_634_567_890 + i),
                format!("{{\"filler\":\"{filler}\"}}"),
            )
        })
        .collect();
    FakeApi::with_objects(vec![
        server("s1", V),
        lease("k3s", "s1", 1),
        lease("k3s-etcd", "s1", 1),
        extra_metadata("k3s"),
        snapshot_configmap("k3s", &entries),
        snapshot_cr("s1", 1_717_142_400, true),
    ])
}

fn snapshot_data(fake: &FakeApi) -> Value {
    fake.get("ConfigMap", Some("kube-system"), "k3s-etcd-snapshots")
        .unwrap()["data"]
        .clone()
}

#[test]
fn a_full_disk_leaves_no_partial_backup_and_a_retry_with_the_same_path_works() {
    let Some(disk) = SmallDisk::mount("64k") else {
        return;
    };
    let fake = big_configmap_cluster();
    let before = snapshot_data(&fake);
    let backup = disk.path().join("before.json");
    let backfill = || backfill_with_backup(&fake, &backup);

    let full = backfill();
    full.code(2)
        .one_line_error()
        .stderr_has("cannot write the backup")
        .stderr_has("No space left on device")
        .stderr_has("nothing was written");
    assert!(
        disk.entries().is_empty(),
        "left behind: {:?}",
        disk.entries()
    );
    assert_eq!(snapshot_data(&fake), before, "written without a backup");

    // With room, the same command (same path) goes through.
    disk.resize("1m");
    let retry = backfill();
    assert_ne!(retry.code, 2, "{}", retry.stderr);
    retry.stderr_has("saved ConfigMap kube-system/k3s-etcd-snapshots to");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    assert_eq!(saved["data"], before);
    assert_eq!(disk.entries(), vec![backup.clone()]);
}

/// The backup holds snapshot metadata (and can hold Rancher's cluster spec),
/// so only its owner may read it, as kubectl writes kubeconfigs: 0600 whatever the umask allows.
#[test]
fn a_backup_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let (_fake, _dir, backup, _) = backed_up();
    let mode = std::fs::metadata(&backup).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "backup mode {:o}", mode & 0o777);
}
