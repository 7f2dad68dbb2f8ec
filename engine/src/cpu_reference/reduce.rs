//! Reference f32 reductions with the GPU's NaN rules (min/argmin treat NaN as +inf, max as -inf).

/// Sum accumulated in f64 (the GPU's f32 tree sum is compared against it with a tolerance).
pub fn sum(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

/// Minimum (`+inf` for an empty slice).
pub fn min(v: &[f32]) -> f32 {
    v.iter()
        .map(|&x| if x.is_nan() { f32::INFINITY } else { x })
        .fold(f32::INFINITY, f32::min)
}

/// Maximum (`-inf` for an empty slice).
pub fn max(v: &[f32]) -> f32 {
    v.iter()
        .map(|&x| if x.is_nan() { f32::NEG_INFINITY } else { x })
        .fold(f32::NEG_INFINITY, f32::max)
}

/// Minimum and the lowest index holding it (`(+inf, u32::MAX)` for an empty slice).
pub fn argmin(v: &[f32]) -> (f32, u32) {
    let mut best = (f32::INFINITY, u32::MAX);
    for (i, &x) in v.iter().enumerate() {
        let x = if x.is_nan() { f32::INFINITY } else { x };
        if x < best.0 || (x == best.0 && (i as u32) < best.1) {
            best = (x, i as u32);
        }
    }
    best
}
