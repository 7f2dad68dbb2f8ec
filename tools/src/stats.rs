//! Minimum, median and maximum of repeated measurements, as printed by `supple bench`.

use serde::Serialize;

/// Summary of repeated samples of one measurement (same unit as the samples).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Stats {
    /// Smallest sample.
    pub min: f64,
    /// Median sample (the upper one of the two middle samples for an even count).
    pub median: f64,
    /// Largest sample.
    pub max: f64,
    /// Number of samples.
    pub samples: usize,
}

impl Stats {
    /// Summarises `samples` (NaN fields when empty; NaN samples sort last).
    pub fn of(samples: &[f64]) -> Stats {
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        Stats {
            min: v.first().copied().unwrap_or(f64::NAN),
            median: v.get(v.len() / 2).copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
            samples: v.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stats;

    #[test]
    fn min_median_max() {
        let s = Stats::of(&[3.0, 1.0, 2.0, 10.0, 4.0]);
        assert_eq!((s.min, s.median, s.max, s.samples), (1.0, 3.0, 10.0, 5));
        assert!(Stats::of(&[]).median.is_nan());
    }
}
