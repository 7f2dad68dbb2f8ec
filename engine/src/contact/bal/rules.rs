//! The host-side rules of Algorithm 1 that decide between graph runs (σ⁰ and its growth, the
//! A′ rule) and the layout of the 64-bit pair keys. The CPU reference solver
//! ([`crate::cpu_reference::bal::solver`]) uses the same functions, so the GPU wiring and the
//! reference cannot drift apart.

/// How σ grows when a pair comes closer than 10⁻² d̂ (Algorithm 1 line 21; spec §A7 #4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigmaRule {
    /// As printed: `σ ← max(1.2 σ, 100 σ⁰)` (the first trigger jumps to 100 σ⁰, then ×1.2,
    /// unbounded).
    AsPrinted,
    /// The cap reading: `σ ← min(1.2 σ, 100 σ⁰)` (IPC's `min(κ_max, 2κ)` analogue).
    Capped,
}

/// When friction is re-lagged (spec §A5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionLagMode {
    /// After every Newton iteration (fully implicit, the paper).
    PerIteration,
    /// Once at the start of the step (semi-implicit, IPC).
    PerStep,
}

/// What the A′ rule does (Algorithm 1 lines 4–8; codes as the kernels read them).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AugRule {
    /// Line 5: A′ = ∅ (every multiplier dropped).
    Empty = 0,
    /// Line 8: A′ = pairs of A closer than 10⁻² d̂ (multipliers of pairs already in A′
    /// carried, new ones start at 0).
    Rebuild = 1,
    /// Neither branch: A′ kept (pairs that left A leave A′: A′ ⊂ A, spec §A7 #7, ours).
    Keep = 2,
}

/// Algorithm 1 lines 20–21: σ after an iteration whose new iterate has `min d < 10⁻² d̂`.
pub fn grown_sigma(rule: SigmaRule, sigma: f64, sigma0: f64) -> f64 {
    match rule {
        SigmaRule::AsPrinted => (1.2 * sigma).max(100.0 * sigma0),
        SigmaRule::Capped => (1.2 * sigma).min(100.0 * sigma0),
    }
}

/// Algorithm 1 lines 4–8. `dmin_cur` = min d over A at the current iterate (the printed
/// `d^[l+1]`), `dmin_prev` = the same one iteration earlier (`d^[l]`); at l = 0 both are the
/// start-of-step value (spec §A7 #5). An empty A has min d = +∞.
pub fn augmentation_rule(dmin_cur: f64, dmin_prev: f64, aug_empty: bool, d_hat: f64) -> AugRule {
    if dmin_cur > 1e-2 * d_hat {
        AugRule::Empty
    } else if dmin_cur < dmin_prev || aug_empty {
        AugRule::Rebuild
    } else {
        AugRule::Keep
    }
}

/// σ's corridor `[σ_min, 100 σ_min]` (N/m; spec §A7 #3, ours): IPC Toolkit's
/// `κ_min = 10¹¹ m̄ / (4 d₀ b″(d₀))` (`initial_barrier_stiffness`) recomputed for unsquared
/// distances, `σ_min = 10¹¹ m̄ / (h² b″(d₀))` with `d₀ = 10⁻⁸ · bbox diagonal` (½ d̂ if that is
/// not below d̂), m̄ the mean free vertex mass (kg). The `1/h²` converts IPC's incremental
/// potential, which is scaled by h², to ours (`E = ‖x − y‖²_M / (2h²) + Ψ`; spec Part C, IPC
/// Toolkit #163).
pub fn sigma_bounds(mean_mass: f64, bbox_diagonal: f64, d_hat: f64, h: f64) -> (f64, f64) {
    let mut d0 = 1e-8 * bbox_diagonal;
    if !(d0 > 0.0 && d0 < d_hat) {
        d0 = 0.5 * d_hat;
    }
    // b″(d₀) of the unsquared clamped log barrier (cpu_reference::bal::barrier).
    let t = d0 - d_hat;
    let b2 = -2.0 * (d0 / d_hat).ln() - 4.0 * t / d0 + t * t / (d0 * d0);
    let min = 1e11 * mean_mass / (h * h * b2);
    (min, 100.0 * min)
}

/// σ⁰ of §3.4 with the squared norm (spec §A7 #1–#3): `−gᵦ·g_E / ‖gᵦ‖²` from the dot product
/// of the unit-σ barrier gradient with the elastic + inertia gradient and the barrier
/// gradient's squared norm, clamped to `bounds`; `bounds.0` without a barrier gradient (no
/// contact at the start of the step).
pub fn initial_sigma(barrier_dot_energy: f64, barrier_norm2: f64, bounds: (f64, f64)) -> f64 {
    let raw = if barrier_norm2 > 0.0 {
        -barrier_dot_energy / barrier_norm2
    } else {
        bounds.0
    };
    raw.clamp(bounds.0, bounds.1)
}

/// Bit widths of the pair keys `(inactive << (1 + a + b)) | (kind << (a + b)) | (a << b) | b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBits {
    /// Bits of the first primitive (vertex or edge).
    pub a: u32,
    /// Bits of the second primitive (triangle or edge).
    pub b: u32,
}

/// Bits that hold every value below `n + 1` (so that `n` itself is not all ones).
fn bits_for(n: usize) -> u32 {
    (usize::BITS - (n + 1).leading_zeros()).max(1)
}

impl KeyBits {
    /// Widths for `nv` vertices, `nt` triangles and `ne` edges: a primitive index never reaches
    /// all ones, so no key equals the sentinel.
    pub fn new(nv: usize, nt: usize, ne: usize) -> KeyBits {
        KeyBits {
            a: bits_for(nv.max(ne)),
            b: bits_for(nt.max(ne)),
        }
    }

    /// Bits of a key: the inactive bit (candidates not closer than d̂ sort after the active
    /// pairs), the kind bit and the two primitives.
    pub fn total(&self) -> u32 {
        2 + self.a + self.b
    }

    /// All ones in the key bits: the key of empty candidate slots, sorted last.
    pub fn sentinel(&self) -> u64 {
        (1u64 << self.total()) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigma_and_augmentation_rules() {
        // As printed: the first trigger jumps to 100 σ⁰, then ×1.2 without bound.
        let s = grown_sigma(SigmaRule::AsPrinted, 1.0, 1.0);
        assert_eq!(s, 100.0);
        assert!((grown_sigma(SigmaRule::AsPrinted, s, 1.0) - 120.0).abs() < 1e-12);
        // Capped: ×1.2 up to 100 σ⁰.
        let mut c = 1.0;
        for _ in 0..100 {
            c = grown_sigma(SigmaRule::Capped, c, 1.0);
            assert!(c <= 100.0);
        }
        assert_eq!(c, 100.0);
        let dh = 1e-3;
        use AugRule::*;
        assert_eq!(
            augmentation_rule(f64::INFINITY, f64::INFINITY, true, dh),
            Empty
        );
        assert_eq!(augmentation_rule(2e-5, 2e-5, false, dh), Empty);
        assert_eq!(augmentation_rule(5e-6, 8e-6, false, dh), Rebuild);
        assert_eq!(augmentation_rule(5e-6, 5e-6, true, dh), Rebuild);
        assert_eq!(augmentation_rule(5e-6, 4e-6, false, dh), Keep);
        // σ⁰: squared norm, clamped; the lower bound without contact.
        assert_eq!(initial_sigma(-12.0, 4.0, (0.0, 1e9)), 3.0);
        assert_eq!(initial_sigma(-12.0, 4.0, (5.0, 1e9)), 5.0);
        assert_eq!(initial_sigma(-12.0, 4.0, (0.1, 1.0)), 1.0);
        assert_eq!(initial_sigma(0.0, 0.0, (0.5, 50.0)), 0.5);
        let (lo, hi) = sigma_bounds(1e-3, 0.2, 1e-3, 1.0 / 30.0);
        assert!(lo > 0.0 && (hi / lo - 100.0).abs() < 1e-12);
    }
}
