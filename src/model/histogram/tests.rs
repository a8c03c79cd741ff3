use super::*;

fn histogram(buckets: &[(f64, f64)]) -> Histogram {
    let mut h = Histogram::default();
    for &(le, n) in buckets {
        h.add(le, n);
    }
    h
}

#[test]
fn quantiles_interpolate_within_the_bucket_as_prometheus_does() {
    // 100 observations: 50 up to 0.1 s, 40 more up to 0.5 s, 10 more up to 1 s.
    let h = histogram(&[
        (0.1, 50.0),
        (0.5, 90.0),
        (1.0, 100.0),
        (f64::INFINITY, 100.0),
    ]);
    assert_eq!(h.count(), 100.0);
    assert_eq!(h.quantile(0.5), Some(0.1));
    assert!((h.quantile(0.7).unwrap() - 0.3).abs() < 1e-9);
    assert!((h.quantile(0.99).unwrap() - 0.95).abs() < 1e-9);
}

#[test]
fn a_rank_past_the_last_finite_bound_reads_that_bound() {
    let h = histogram(&[(0.5, 10.0), (1.0, 20.0), (f64::INFINITY, 100.0)]);
    assert_eq!(h.quantile(0.99), Some(1.0));
}

#[test]
fn series_add_up_bucket_by_bucket_in_any_order() {
    let a = histogram(&[(1.0, 3.0), (0.1, 1.0), (f64::INFINITY, 4.0)]);
    let mut b = a.clone();
    b.add(0.1, 1.0);
    b.add(f64::INFINITY, 4.0);
    b.add(1.0, 3.0);
    assert_eq!(b.count(), 8.0);
    assert_eq!(b.quantile(0.25), Some(0.1));
    assert_eq!(a.quantile(0.25), Some(0.1));
}

#[test]
fn the_difference_of_two_scrapes_holds_only_what_was_observed_in_between() {
    // 1,000 fast observations before; 10 more, all between 1 and 2 s, since.
    let earlier = histogram(&[
        (0.1, 1000.0),
        (1.0, 1000.0),
        (2.0, 1000.0),
        (f64::INFINITY, 1000.0),
    ]);
    let later = histogram(&[
        (0.1, 1000.0),
        (1.0, 1000.0),
        (2.0, 1010.0),
        (f64::INFINITY, 1010.0),
    ]);
    assert!(
        later.quantile(0.99).unwrap() < 0.1,
        "the lifetime p99 hides them"
    );
    let between = later.since(&earlier).unwrap();
    assert_eq!(between.count(), 10.0);
    assert!((between.quantile(0.99).unwrap() - 1.99).abs() < 1e-9);
}

#[test]
fn a_shrunk_bucket_or_other_buckets_give_no_difference() {
    let earlier = histogram(&[(1.0, 50.0), (f64::INFINITY, 60.0)]);
    // Restarted: counting from zero again.
    let restarted = histogram(&[(1.0, 5.0), (f64::INFINITY, 6.0)]);
    assert_eq!(restarted.since(&earlier), None);
    let other_buckets = histogram(&[(0.5, 50.0), (f64::INFINITY, 60.0)]);
    assert_eq!(other_buckets.since(&earlier), None);
    let more_buckets = histogram(&[(0.5, 50.0), (1.0, 50.0), (f64::INFINITY, 60.0)]);
    assert_eq!(more_buckets.since(&earlier), None);
    // Nothing observed in between: a difference of zeros, and no quantile.
    let same = earlier.since(&earlier).unwrap();
    assert_eq!(same.count(), 0.0);
    assert_eq!(same.quantile(0.99), None);
}

#[test]
fn no_observations_give_no_quantile() {
    assert_eq!(Histogram::default().quantile(0.99), None);
    assert_eq!(
        histogram(&[(1.0, 0.0), (f64::INFINITY, 0.0)]).quantile(0.99),
        None
    );
}
