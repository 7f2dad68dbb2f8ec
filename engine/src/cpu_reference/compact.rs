//! Reference stream compaction.

/// The values whose flag is non-zero, in order.
pub fn compact(flags: &[u32], values: &[u32]) -> Vec<u32> {
    flags
        .iter()
        .zip(values)
        .filter(|(f, _)| **f != 0)
        .map(|(_, v)| *v)
        .collect()
}
