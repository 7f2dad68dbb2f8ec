// Fixed-point scales of the penalty-contact sums (kernels/recovery/penalty.comp writes them,
// kernels/newton/vectors.comp reads them; mirrored in engine/src/cpu_reference/recovery_response.rs).
// Gradient sums Σ c w n are lengths: 2^26 units per metre (±32 m in i32, 1.5e-8 m resolution).
// Hessian sums Σ |a| S n nᵀ are dimensionless: 2^20 units per 1 (±2048, 9.5e-7 resolution). A
// pair adds at most |a| S ≤ 2, so a vertex in up to 1,024 pairs fits; at 2^24 (±128) a vertex in
// 65+ pairs of a folded cloth wrapped the i32 sum to a negative block (paper_sphere frame 75: an
// indefinite Newton matrix and a PCG residual of 9e5, docs/measurements.md issue 22).
const float PENALTY_GRAD_SCALE = 67108864.0;
const float PENALTY_HESS_SCALE = 1048576.0;
