// Fixed-point scales of the penalty-contact sums (kernels/recovery/penalty.comp writes them,
// kernels/newton/vectors.comp reads them; mirrored in engine/src/cpu_reference/recovery_response.rs).
// Gradient sums Σ c w n are lengths: 2^26 units per metre (±32 m in i32, 1.5e-8 m resolution).
// Hessian sums Σ |a| S n nᵀ are dimensionless: 2^24 units per 1 (±128).
const float PENALTY_GRAD_SCALE = 67108864.0;
const float PENALTY_HESS_SCALE = 16777216.0;
