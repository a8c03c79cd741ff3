//! Sizes as people read them: binary units, which is what etcd's quota and snapshot files are
//! set and sized in.

/// 8417312 → `8.0 MiB`.
pub(crate) fn human(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes:.0} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(super::human(512.0), "512 B");
        assert_eq!(super::human(8417312.0), "8.0 MiB");
        assert_eq!(super::human(2147483648.0), "2.0 GiB");
    }
}
