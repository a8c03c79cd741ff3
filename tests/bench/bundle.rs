//! Support bundle benchmark: `cargo bench --bench bundle`.
//!
//! Generates a troubleshoot bundle of about 100 MiB (gzip tar; the split-cluster fixture's
//! objects plus pod logs of pseudo-random request lines, which gzip about 4:1 as access logs
//! do), then runs the release `k3sdoctor check --from-file` on it and `tar -xzf` of the same
//! file into a scratch folder, 3 times each after a warm-up, and prints one markdown table of
//! medians: wall time, the child's peak RSS (`wait4`, through the launcher of measure.rs),
//! the ratio against `tar -xzf`, and the targets (≤ 3 s, ≤ 300 MiB). It measures
//! and reports; it never fails on a number. The bundle is made here only: tests build small
//! ones.

#[path = "../support/mod.rs"]
#[allow(unused_imports)]
mod support;

// Shared with the perf benchmark, which uses all of it; this one does not.
#[allow(dead_code)]
mod measure;

use std::io::Write;
use std::path::Path;

use measure::{Env, Invocation, Launcher, Sample, Stdout};
use support::bundles::{TROUBLESHOOT_TOP, split_cluster, troubleshoot};

const TARGET_MIB: u64 = 100;
const REPEATS: usize = 3;
const TIME_TARGET_S: f64 = 3.0;
const RSS_TARGET_MIB: f64 = 300.0;

/// Writes the bundle: the fixture's cluster-resources, then logs until the file reaches
/// [`TARGET_MIB`].
fn generate(path: &Path) -> (u64, u64) {
    let file = std::fs::File::create(path).expect("create the bundle");
    let gz =
        flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let small = troubleshoot(&split_cluster()).tar();
    let mut entries = tar::Archive::new(&small[..]);
    for entry in entries.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut header = entry.header().clone();
        let path = entry.path().unwrap().into_owned();
        if header.entry_type().is_symlink() {
            let target = entry.link_name().unwrap().unwrap().into_owned();
            tar.append_link(&mut header, &path, &target).unwrap();
        } else {
            tar.append_data(&mut header, &path, &mut entry).unwrap();
        }
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut raw = 0u64;
    let mut pod = 0;
    while std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) < TARGET_MIB << 20 {
        let mut log = Vec::with_capacity(8 << 20);
        while log.len() < 8 << 20 {
            let id = next();
            writeln!(
                log,
                "2024-05-31T12:{:02}:{:02}.{:06}Z INFO request id={id:016x} path=/api/v1/namespaces/app-{}/pods status={} took={}ms",
                id % 60,
                (id >> 8) % 60,
                (id >> 16) % 1_000_000,
                (id >> 24) % 40,
                [200, 200, 200, 404, 500][(id >> 32) as usize % 5],
                (id >> 40) % 900
            )
            .unwrap();
        }
        raw += log.len() as u64;
        let mut header = tar::Header::new_gnu();
        header.set_size(log.len() as u64);
        header.set_mode(0o644);
        let name = format!("{TROUBLESHOOT_TOP}/cluster-resources/pods/logs/app/web-{pod}/web.log");
        tar.append_data(&mut header, name, &log[..]).unwrap();
        tar.get_mut().flush().unwrap();
        pod += 1;
    }
    tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
    (std::fs::metadata(path).unwrap().len(), raw)
}

fn median(samples: &mut [Sample]) -> Sample {
    samples.sort_by_key(|s| s.wall);
    samples[samples.len() / 2]
}

fn main() {
    if !measure::should_run("bundle") {
        return;
    }
    let mut launcher = Launcher::start();
    let bin = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"));
    let work = measure::Workspace::new();
    let env = Env {
        kubeconfig: work.path().join("no-kubeconfig"),
        home: work.home.clone(),
        scratch: work.scratch.clone(),
    };
    let bundle = work.path().join("support-bundle.tar.gz");
    let (size, logs) = generate(&bundle);
    let bundle_arg = bundle.display().to_string();
    let unpacked = work.path().join("unpacked");
    let tar_bin = ["/usr/bin/tar", "/bin/tar"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists());

    println!("support bundle benchmark (cargo bench --bench bundle)");
    println!();
    println!("- k3sdoctor: {}", bin.display());
    if !bin.components().any(|c| c.as_os_str() == "release") {
        println!(
            "  warning: not a release build; run `cargo bench --bench bundle` for release numbers"
        );
    }
    println!(
        "- bundle: troubleshoot layout, gzip tar of {:.1} MiB ({:.1} MiB of pod logs before compression), \
         the split-cluster fixture's Nodes, Leases, ConfigMaps and ETCDSnapshotFiles",
        size as f64 / 1048576.0,
        logs as f64 / 1048576.0
    );
    if let Some(floor) = launcher.floor(&env) {
        println!(
            "- measurement floor (`true` run the same way): {:.1} ms, {:.1} MiB peak RSS",
            floor.wall.as_secs_f64() * 1000.0,
            floor.max_rss_kib as f64 / 1024.0
        );
    }
    let check = Invocation::new(bin, &["check", "--from-file", &bundle_arg]);
    let untar = tar_bin.map(|t| {
        Invocation::new(
            t,
            &["-xzf", &bundle_arg, "-C", &unpacked.display().to_string()],
        )
    });
    let mut run = |inv: &Invocation, stdout| {
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).unwrap();
        launcher.run(inv, &env, stdout)
    };
    let warm = run(&check, Stdout::Keep);
    println!(
        "- warm-up: k3sdoctor check exit {} (1: the fixture's split)",
        warm.exit
    );
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..REPEATS {
        ours.push(run(&check, Stdout::Discard));
        if let Some(untar) = &untar {
            theirs.push(run(untar, Stdout::Discard));
        }
    }
    let ours = median(&mut ours);
    let theirs = (!theirs.is_empty()).then(|| median(&mut theirs));
    let ms = |s: &Sample| s.wall.as_secs_f64() * 1000.0;
    let mib = |s: &Sample| s.max_rss_kib as f64 / 1024.0;
    println!();
    println!(
        "| command | wall ms (median of {REPEATS}) | peak RSS MiB | wall vs `tar -xzf` | targets |"
    );
    println!("|---|---:|---:|---:|---|");
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "| `k3sdoctor check --from-file` ({:.0} MiB troubleshoot bundle) | {:.1} | {:.1} | {} | time ≤ {TIME_TARGET_S} s: {} ; peak RSS ≤ {RSS_TARGET_MIB} MiB: {} |",
        size as f64 / 1048576.0,
        ms(&ours),
        mib(&ours),
        theirs.map_or("–".to_string(), |t| format!("{:.2}×", ms(&ours) / ms(&t))),
        met(ours.wall.as_secs_f64() <= TIME_TARGET_S),
        met(mib(&ours) <= RSS_TARGET_MIB)
    );
    match theirs {
        Some(t) => println!(
            "| `tar -xzf` of the same file | {:.1} | {:.1} | – | baseline |",
            ms(&t),
            mib(&t)
        ),
        None => println!("| `tar -xzf` | – | – | – | tar not found |"),
    }
}
