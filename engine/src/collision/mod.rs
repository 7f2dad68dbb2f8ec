//! Collision handling between deformable surfaces (cloth, tet boundaries, rods' surfaces):
//! [`two_way`] is the two-way interior point method (backward projected Gauss–Seidel steps and
//! CCD-free forward steps) that keeps every intermediate state intersection-free.

pub mod two_way;

pub use two_way::{StepBound, TwoWay, TwoWayReport, TwoWaySettings};
