use super::*;

#[test]
fn samples_comments_and_labels_read_as_the_text_format_says() {
    assert_eq!(parse_sample("# HELP x y"), None);
    assert_eq!(parse_sample("   "), None);
    let plain = parse_sample("process_start_time_seconds 1.7e+09")
        .unwrap()
        .unwrap();
    assert_eq!(plain.name(), "process_start_time_seconds");
    assert_eq!(plain.value().unwrap(), 1.7e9);
    let line = r#"etcd_request_duration_seconds_bucket{operation="get",type="a,b\"}c\\",le="+Inf"} 42 1700000000000"#;
    let s = parse_sample(line).unwrap().unwrap();
    assert_eq!(s.name(), "etcd_request_duration_seconds_bucket");
    assert_eq!(s.value().unwrap(), 42.0);
    assert_eq!(s.label("operation").as_deref(), Some("get"));
    assert_eq!(s.label("type").as_deref(), Some("a,b\"}c\\"));
    assert_eq!(s.label("le").as_deref(), Some("+Inf"));
    assert_eq!(s.label("resource"), None);
    let inf = parse_sample(r#"x{le="1"} +Inf"#).unwrap().unwrap();
    assert!(inf.value().unwrap().is_infinite());
}

#[test]
fn lines_that_are_not_samples_are_errors_that_quote_them() {
    for bad in [
        "x{a=\"1\" 3",
        "x",
        "x{a=\"1\"}",
        "x notanumber",
        "{a=\"1\"} 3",
    ] {
        let e = parse_sample(bad).unwrap().unwrap_err();
        assert!(e.contains("not a metrics line"), "{bad}: {e}");
    }
}

#[test]
fn a_line_of_a_series_not_read_is_checked_for_its_shape_only() {
    let nothing = |_: &str| false;
    for skipped in [
        "noise_total 1",
        "apiserver_request_total{code=\"200\",verb=\"GET\"} 3 1700000000000",
        ":colon_name NaN",
        // Not parsed past the name: a line of a series nobody reads costs a few bytes.
        "x{a=\"1\" 3",
    ] {
        assert_eq!(read_line(skipped, nothing), Ok(Line::Skipped), "{skipped}");
    }
    // What a proxy or a plain HTTP server answers in place of metrics.
    for bad in [
        "<html><body>Bad Gateway</body></html>",
        "404 page not found",
        "Client sent an HTTP request to an HTTPS server.",
        "{\"kind\":\"Status\",\"code\":401}",
        "Unauthorized",
    ] {
        let e = read_line(bad, nothing).unwrap_err();
        assert!(e.contains("not a metrics line"), "{bad}: {e}");
    }
    assert_eq!(read_line("  # TYPE x counter", nothing), Ok(Line::Blank));
}

#[test]
fn a_label_is_read_without_the_rest_of_the_line() {
    // The value is read only when asked: a line whose labels say it does not count costs no
    // number parsing, and is not refused for its value.
    let line = r#"etcd_request_duration_seconds_bucket{operation="list",type="pods",le="1"} oops"#;
    let Ok(Line::Sample(sample)) = read_line(line, |_| true) else {
        panic!("{line} is a sample by its name");
    };
    assert_eq!(sample.label("operation").as_deref(), Some("list"));
    assert_eq!(sample.label("absent"), None);
    assert!(sample.value().unwrap_err().contains("not a metrics line"));
}

proptest::proptest! {
    #[test]
    fn any_line_is_read_or_refused_never_a_panic(line in "\\PC{0,120}") {
        if let Some(Ok(sample)) = parse_sample(&line) {
            let _ = sample.label("le");
            let _ = sample.value();
        }
        let _ = read_line(&line, |name| name.len() % 2 == 0);
    }

    #[test]
    fn any_label_value_reads_back_as_written(value in "[^\\n]{0,40}") {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        let line = format!("m{{a=\"x\",b=\"{escaped}\"}} 1");
        let sample = parse_sample(&line).unwrap().unwrap();
        proptest::prop_assert_eq!(sample.label("b").map(|v| v.into_owned()), Some(value));
    }
}

/// The label set's end as the format defines it, one character at a time: the oracle for the
/// byte scan of `closing_brace`.
fn closing_brace_by_chars(text: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(at),
            _ => {}
        }
    }
    None
}

proptest::proptest! {
    #[test]
    fn the_byte_scan_ends_the_label_set_where_the_characters_do(
        text in "[a-z\"\\\\}{=,é€😀 ]{0,40}"
    ) {
        proptest::prop_assert_eq!(closing_brace(&text), closing_brace_by_chars(&text));
    }

    #[test]
    fn escaped_and_plain_values_read_back_beside_other_labels(
        first in "[a-z\"\\\\é€ ]{0,12}",
        second in "[a-z\"\\\\}é€ ]{0,12}",
    ) {
        let quote = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
        let line = format!("m{{a=\"{}\",b=\"{}\",le=\"+Inf\"}} 2", quote(&first), quote(&second));
        let sample = parse_sample(&line).unwrap().unwrap();
        let (a, b, le) = (sample.label("a"), sample.label("b"), sample.label("le"));
        proptest::prop_assert_eq!(a.as_deref(), Some(first.as_str()));
        proptest::prop_assert_eq!(b.as_deref(), Some(second.as_str()));
        proptest::prop_assert_eq!(le.as_deref(), Some("+Inf"));
        proptest::prop_assert_eq!(sample.value().unwrap(), 2.0);
    }
}
