//! GPU primitives recorded into command graphs: prefix sum, stream compaction, key-value radix
//! sort and f32 reductions. Each owns its persistent workspace (allocated once for a capacity,
//! cleared or overwritten per run, never reallocated) and has a plain-Rust reference in
//! [`crate::cpu_reference`].

mod compact;
mod radix_sort;
mod reduce;
mod scan;
mod tuning;

pub use compact::Compact;
pub use radix_sort::{RadixSort, SortKeys};
pub use reduce::{Reduce, ReduceOp, ReduceResult};
pub use scan::{Scan, ScanKind};
pub use tuning::Tuning;
