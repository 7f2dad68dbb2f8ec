//! Reference prefix sums (wrapping u32 arithmetic, as on the GPU).

/// Exclusive prefix sum: `out[i] = in[0] + … + in[i-1]`.
pub fn exclusive_scan(input: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    input
        .iter()
        .map(|&v| {
            let r = acc;
            acc = acc.wrapping_add(v);
            r
        })
        .collect()
}

/// Inclusive prefix sum: `out[i] = in[0] + … + in[i]`.
pub fn inclusive_scan(input: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    input
        .iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect()
}
