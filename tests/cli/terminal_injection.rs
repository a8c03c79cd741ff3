//! Text from the cluster never reaches the terminal as control characters.
//! A Lease holder with `ESC[31m` and a newline is shown escaped in tables, findings and notes,
//! on a pipe and on a terminal, and kept exact in JSON.

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::{k3sdoctor, on_terminal};
use crate::support::objects::{NOW, lease, server};

const HOSTILE: &str = "s1\x1b[31m\nevil";
const SHOWN: &str = "s1\\e[31m\\nevil";

fn cluster() -> FakeApi {
    FakeApi::with_objects([
        server("s1", "v1.29.4+k3s1"),
        server("s2", "v1.29.4+k3s1"),
        lease("k3s", HOSTILE, 1),
        lease("k3s-etcd", "s2", 1),
    ])
}

/// Nothing but our own colour codes (`ESC[` + digits and `;` + `m`, none of them `31m`
/// alone) may reach the screen, and no raw piece of the holder.
#[track_caller]
fn assert_escaped(screen: &str, what: &str) {
    assert!(screen.contains(SHOWN), "{what} lacks {SHOWN:?}:\n{screen}");
    assert!(
        !screen.contains("\x1b[31m"),
        "{what} has the raw escape:\n{screen:?}"
    );
    assert!(
        !screen.contains("\nevil"),
        "{what} has the raw newline:\n{screen:?}"
    );
}

#[test]
fn a_hostile_lease_holder_is_escaped_on_a_pipe() {
    let fake = cluster();
    for args in [
        vec!["leases", "--now", NOW],
        vec!["leases", "-o", "wide", "--now", NOW],
        vec!["check", "--now", NOW],
        vec!["leases", "follow", "--now", NOW],
    ] {
        let out = k3sdoctor(&args).cluster(&fake, Role::ReadOnly).run();
        let both = format!("{}{}", out.stdout, out.stderr);
        assert_escaped(&both, &args.join(" "));
        assert!(
            !both.contains('\x1b'),
            "{args:?} wrote ESC on a pipe:\n{both:?}"
        );
    }
    // Programs get the holder exactly, escaped by JSON itself.
    let out = k3sdoctor(["leases", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["locks"][0]["holder"], HOSTILE);
    assert!(out.stdout.contains(r"s1\u001b[31m\nevil"), "{}", out.stdout);
}

#[test]
fn a_hostile_lease_holder_is_escaped_on_a_terminal() {
    let fake = cluster();
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = fake.write_kubeconfig(home.path(), Role::ReadOnly);
    let command = format!(
        "{} leases --now {NOW} --kubeconfig {}; {} check --now {NOW} --kubeconfig {}",
        env!("CARGO_BIN_EXE_k3sdoctor"),
        kubeconfig.display(),
        env!("CARGO_BIN_EXE_k3sdoctor"),
        kubeconfig.display()
    );
    let Some(out) = on_terminal(&command, home.path()) else {
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout);
    // The terminal gets colour (so this is the terminal path), and the holder escaped.
    assert!(
        screen.contains("\x1b[1m"),
        "no colour on the terminal:\n{screen:?}"
    );
    assert_escaped(&screen, "the terminal");
}

/// A holder with a right-to-left override (which would show the rest of the
/// line reversed) and a zero-width space (which makes `s2` look like another name) is shown
/// with both escaped, in tables, findings and plans; JSON keeps the exact value.
#[test]
fn bidi_and_zero_width_characters_in_a_holder_are_escaped() {
    const INVISIBLE: &str = "s2\u{200b}\u{202e}evil\u{2066}x\u{feff}";
    const VISIBLE: &str = "s2\\u{200b}\\u{202e}evil\\u{2066}x\\u{feff}";
    let fake = FakeApi::with_objects([
        server("s1", "v1.29.4+k3s1"),
        server("s2", "v1.29.4+k3s1"),
        lease("k3s", INVISIBLE, 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    for args in [
        vec!["leases", "--now", NOW],
        vec!["leases", "-o", "wide", "--now", NOW],
        vec!["check", "--now", NOW],
        vec!["leases", "follow", "--now", NOW],
    ] {
        let out = k3sdoctor(&args).cluster(&fake, Role::ReadOnly).run();
        let both = format!("{}{}", out.stdout, out.stderr);
        assert!(
            both.contains(VISIBLE),
            "{args:?} lacks {VISIBLE:?}:\n{both}"
        );
        for c in ['\u{200b}', '\u{202e}', '\u{2066}', '\u{feff}'] {
            assert!(
                !both.contains(c),
                "{args:?} wrote U+{:04X} raw:\n{both}",
                c as u32
            );
        }
    }
    let out = k3sdoctor(["leases", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["locks"][0]["holder"], INVISIBLE);
}

/// `-o json` writes U+202E, U+0085 and the other C1 controls as `\uXXXX`
/// escapes, as the table escapes them: still valid JSON, decoding to the exact value, but
/// nothing `jq` or a log viewer passes to a terminal raw. The hostile holder is also a Node's
/// name.
#[test]
fn json_escapes_bidi_and_c1_characters_and_keeps_the_value() {
    const HOSTILE: &str = "s2\u{202e}evil\u{85}\u{9b}31m\u{200b}";
    let fake = FakeApi::with_objects([
        server("s1", "v1.29.4+k3s1"),
        server(HOSTILE, "v1.29.4+k3s1"),
        lease("k3s", HOSTILE, 1),
        lease("k3s-etcd", "s1", 1),
    ]);
    for args in [
        vec!["leases", "-o", "json", "--now", NOW],
        vec!["check", "-o", "json", "--now", NOW],
    ] {
        let out = k3sdoctor(&args).cluster(&fake, Role::ReadOnly).run();
        for c in ['\u{202e}', '\u{85}', '\u{9b}', '\u{200b}'] {
            assert!(
                !out.stdout.contains(c),
                "{args:?} wrote U+{:04X} raw:\n{}",
                c as u32,
                out.stdout
            );
        }
        assert!(
            out.stdout.contains(r"s2\u202eevil\u0085\u009b31m\u200b"),
            "{args:?}:\n{}",
            out.stdout
        );
        let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert!(
            report.to_string().contains(HOSTILE),
            "{args:?} decodes to the exact holder"
        );
    }
    let out = k3sdoctor(["leases", "-o", "json", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["locks"][0]["holder"], HOSTILE);
}
