//! Plain-Rust reference implementations of every GPU kernel, used by the tests to check the
//! kernels on lavapipe (and by benchmarks as host baselines). They favour clarity over speed.

pub mod bal;
pub mod bvh;
pub mod ccd;
pub mod coloring;
pub mod compact;
pub mod contact;
pub mod distance;
pub mod fem;
pub mod gate;
pub mod integrate;
pub mod newton;
pub mod pcg;
pub mod prox;
pub mod proximity;
pub mod radix_sort;
pub mod recovery_response;
pub mod reduce;
pub mod scan;
pub mod shortest_path;
pub mod thin;
pub mod two_way;
pub mod xpbd;
