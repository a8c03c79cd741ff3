//! A Prometheus histogram as one scrape shows it: cumulative bucket counts by upper bound.
//! Several series of one family (one per operation or resource) add up bucket by bucket, as
//! `sum by (le)` does, and a quantile is read the way `histogram_quantile` reads it, so a
//! number k3sdoctor prints is the number a dashboard would show for the same counts.

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Histogram {
    /// (upper bound, cumulative count), sorted by bound; `+Inf` included when scraped.
    buckets: Vec<(f64, f64)>,
}

impl Histogram {
    /// Adds one series' `_bucket{le=…}` sample.
    pub(crate) fn add(&mut self, upper: f64, count: f64) {
        if upper.is_nan() || !count.is_finite() || count < 0.0 {
            return;
        }
        match self.buckets.iter_mut().find(|(le, _)| *le == upper) {
            Some((_, sum)) => *sum += count,
            None => {
                let at = self.buckets.partition_point(|(le, _)| *le < upper);
                self.buckets.insert(at, (upper, count));
            }
        }
    }

    /// Observations counted (the `+Inf` bucket, else the highest).
    pub(crate) fn count(&self) -> f64 {
        self.buckets.last().map_or(0.0, |(_, c)| *c)
    }

    /// What was observed between `earlier` and this scrape of the same process: the bucket-wise
    /// difference, as `rate()` takes it before `histogram_quantile`. `None` when a bucket
    /// shrank or the buckets differ: the process restarted in between (its counts started
    /// again from zero) or another process answered, so the difference means nothing.
    pub(crate) fn since(&self, earlier: &Histogram) -> Option<Histogram> {
        if self.buckets.len() != earlier.buckets.len() {
            return None;
        }
        let buckets = self
            .buckets
            .iter()
            .zip(&earlier.buckets)
            .map(|(&(le, now), &(le_then, then))| {
                (le == le_then && now >= then).then_some((le, now - then))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Histogram { buckets })
    }

    /// The `q` quantile (0 < q < 1) as `histogram_quantile` computes it: linear within the
    /// bucket that holds the rank; the highest finite bound when the rank falls in `+Inf`.
    /// `None` without observations or without a finite bucket.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total <= 0.0 || !(0.0..=1.0).contains(&q) {
            return None;
        }
        let rank = q * total;
        let mut lower = (0.0, 0.0);
        for &(upper, count) in &self.buckets {
            if count >= rank {
                if upper.is_infinite() {
                    return Some(lower.0);
                }
                let in_bucket = count - lower.1;
                if in_bucket <= 0.0 {
                    return Some(upper);
                }
                return Some(lower.0 + (upper - lower.0) * (rank - lower.1) / in_bucket);
            }
            lower = (upper, count);
        }
        self.buckets
            .iter()
            .rev()
            .find(|(le, _)| le.is_finite())
            .map(|(le, _)| *le)
    }
}

#[cfg(test)]
mod tests;
