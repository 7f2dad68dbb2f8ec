//! Linear solvers recorded into command graphs: block-Jacobi preconditioned conjugate gradients
//! on symmetric block-sparse matrices with 3×3 blocks (the building block of the Newton solver).

pub mod pcg;

pub use pcg::{
    warm_run_length, BlockMatrixF32, MatrixFreeCouplings, ModelDecrease, Pcg, PcgSolve,
    ResultSlots, SolveExit, SolveParts, WarmSolveStats, WarmStart, GROUP_MAX, GROUP_MIN,
    RESULT_SLOTS,
};
