//! The data of RAINBOW's PROX contact model shared by the GPU solver, the host contact
//! generation and the plain-Rust reference (report §2.4, spec §B1): contacts with up to eight
//! node slots, signed barycentric weights and an orthonormal frame; the scheme and the
//! convergence parameters with RAINBOW's defaults.
//!
//! A contact k has up to eight node slots (RAINBOW: the four nodes of the tet of each body that
//! embeds the contact point; Supple's proximity pairs: the four vertices of a vertex–triangle or
//! edge–edge stencil) with signed weights `w_kj` (barycentric weights with the side's sign folded
//! in: −ω for the first body, +ω for the second), and an orthonormal frame C_k = [n; s; t] (rows).
//! Its Jacobian rows are `J_k v = C_k Σ_j w_kj v_{node(k, j)}`, so `v_n = n · (v_B − v_A)` is the
//! normal relative velocity (> 0 separates); with lumped isotropic masses the Delassus diagonal
//! block is `(Σ_a m_a⁻¹ (Σ_{j: node(k, j) = a} w_kj)²) I₃`.

use crate::math::Vec3;

/// Node slot not used by a contact.
pub const NO_NODE: u32 = u32::MAX;

/// One contact: nodes, signed weights, frame and surface parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Node of each slot ([`NO_NODE`] when unused).
    pub nodes: [u32; 8],
    /// Signed weight of each slot (0 when unused): `Σ_j w_j v_j` is the relative velocity of the
    /// second body's contact point with respect to the first's.
    pub weights: [f64; 8],
    /// Unit normal n, from the first body toward the second.
    pub normal: Vec3,
    /// Unit tangents s and t: (n, s, t) is a right-handed orthonormal frame.
    pub tangents: [Vec3; 2],
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Newton restitution coefficient ε ∈ [0, 1] of the normal row.
    pub restitution: f64,
    /// Signed gap at detection (m); negative is a penetration depth.
    pub gap: f64,
}

/// Tangents (s, t) completing the unit normal `n` to a right-handed orthonormal frame
/// (Duff et al. 2017, "Building an orthonormal basis, revisited"; branch-free except for the
/// sign, the same construction as `kernels/prox/prox.glsl::prox_tangents`).
pub fn tangents(n: &Vec3) -> [Vec3; 2] {
    let sign = if n.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    [
        Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x),
        Vec3::new(b, sign + n.y * n.y * a, -n.y),
    ]
}

impl Contact {
    /// A contact on `nodes` with signed `weights` (slots past the slices' length are unused),
    /// unit `normal` (normalised here), friction `mu`, no restitution and gap `gap` (m).
    pub fn new(nodes: &[u32], weights: &[f64], normal: Vec3, mu: f64, gap: f64) -> Self {
        let mut c = Contact {
            nodes: [NO_NODE; 8],
            weights: [0.0; 8],
            normal: Vec3::zeros(),
            tangents: [Vec3::zeros(); 2],
            friction: mu,
            restitution: 0.0,
            gap,
        };
        for (j, (&a, &w)) in nodes.iter().zip(weights).take(8).enumerate() {
            c.nodes[j] = a;
            c.weights[j] = w;
        }
        let n = normal.normalize();
        c.normal = n;
        c.tangents = tangents(&n);
        c
    }

    /// The frame rows `[n, s, t]`.
    pub fn frame(&self) -> [Vec3; 3] {
        [self.normal, self.tangents[0], self.tangents[1]]
    }

    /// Used slots `(node, weight)`.
    pub fn slots(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.nodes
            .iter()
            .zip(&self.weights)
            .filter(|(&a, _)| a != NO_NODE)
            .map(|(&a, &w)| (a as usize, w))
    }

    /// World relative velocity `Σ_j w_j v_j` of the contact point (m/s).
    pub fn relative_velocity(&self, v: &[Vec3]) -> Vec3 {
        self.slots()
            .fold(Vec3::zeros(), |acc, (a, w)| acc + v[a] * w)
    }

    /// `J_k v = C_k Σ_j w_j v_j`: (normal, s, t) relative velocity (m/s).
    pub fn jacobian(&self, v: &[Vec3]) -> [f64; 3] {
        let rel = self.relative_velocity(v);
        self.frame().map(|e| e.dot(&rel))
    }

    /// `C_kᵀ λ`: the world impulse of `lambda` = (λn, λs, λt) (N·s).
    pub fn impulse(&self, lambda: [f64; 3]) -> Vec3 {
        let [n, s, t] = self.frame();
        n * lambda[0] + s * lambda[1] + t * lambda[2]
    }

    /// Diagonal of the Delassus block `J_k W J_kᵀ` (the same for all three rows; 1/kg), with
    /// the weights of repeated nodes summed first.
    pub fn delassus_diagonal(&self, inv_mass: &[f64]) -> f64 {
        let mut total = 0.0;
        for (j, &a) in self.nodes.iter().enumerate() {
            if a == NO_NODE || self.nodes[..j].contains(&a) {
                continue;
            }
            let w: f64 = (j..8)
                .filter(|&i| self.nodes[i] == a)
                .map(|i| self.weights[i])
                .sum();
            total += inv_mass[a as usize] * w * w;
        }
        total
    }

    /// `w += W J_kᵀ dλ` at this contact's nodes (the Gauss–Seidel update of the velocity
    /// correction w).
    pub fn scatter(&self, inv_mass: &[f64], dlambda: [f64; 3], w: &mut [Vec3]) {
        let p = self.impulse(dlambda);
        for (a, wt) in self.slots() {
            w[a] += p * (inv_mass[a] * wt);
        }
    }
}

/// Checks one contact: node indices below `num_nodes`, finite weights and parameters, a unit
/// normal, μ ≥ 0, ε ∈ [0, 1].
pub fn check_contact(k: usize, c: &Contact, num_nodes: usize) -> Result<(), String> {
    for (j, &a) in c.nodes.iter().enumerate() {
        if a != NO_NODE && a as usize >= num_nodes {
            return Err(format!(
                "contact {k}: nodes[{j}] = {a}, but there are {num_nodes} nodes"
            ));
        }
        if !c.weights[j].is_finite() {
            return Err(format!("contact {k}: weights[{j}] is {}", c.weights[j]));
        }
    }
    let frame_ok = c.frame().iter().all(|e| e.iter().all(|x| x.is_finite()))
        && (c.normal.norm() - 1.0).abs() < 1e-6;
    if !frame_ok {
        return Err(format!(
            "contact {k}: normal {:?} is not a finite unit vector",
            c.normal
        ));
    }
    if !(c.friction.is_finite() && c.friction >= 0.0) {
        return Err(format!(
            "contact {k}: friction {} must be finite and >= 0",
            c.friction
        ));
    }
    if !(0.0..=1.0).contains(&c.restitution) {
        return Err(format!(
            "contact {k}: restitution {} must be in [0, 1]",
            c.restitution
        ));
    }
    if !c.gap.is_finite() {
        return Err(format!("contact {k}: gap is {}", c.gap));
    }
    Ok(())
}

/// A PROX scheme (`prox.scheme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Serial Gauss–Seidel in contact order (Alg. 2; RAINBOW's default `gauss_seidel`).
    GaussSeidel,
    /// Jacobi (Alg. 4; `parallel_jacobi`).
    Jacobi,
    /// Jacobi with the cone radius from the new normal impulse (Alg. 5; `parallel_jacboi_hybrid`).
    Hybrid,
    /// Gauss–Seidel by colors of the contact graph (Alg. 7 with the exact sum; `parallel_gauss_seidel`).
    ColoredGaussSeidel,
}

impl Scheme {
    /// Every scheme.
    pub const ALL: [Scheme; 4] = [
        Scheme::GaussSeidel,
        Scheme::Jacobi,
        Scheme::Hybrid,
        Scheme::ColoredGaussSeidel,
    ];

    /// The scene-file name (`"gauss-seidel"`, `"jacobi"`, `"hybrid"`, `"colored-gauss-seidel"`).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::GaussSeidel => "gauss-seidel",
            Scheme::Jacobi => "jacobi",
            Scheme::Hybrid => "hybrid",
            Scheme::ColoredGaussSeidel => "colored-gauss-seidel",
        }
    }

    /// The scheme of a scene-file name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Convergence parameters; the defaults are RAINBOW's (`prox_soft_bodies/types.py`,
/// `Parameters`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverParams {
    /// Converged when the merit (N·s) falls below this (RAINBOW 1e-3).
    pub absolute_tolerance: f64,
    /// Converged when the merit changes by less than this fraction of the last merit (1e-4).
    pub relative_tolerance: f64,
    /// Sweeps at most (200).
    pub max_iterations: u32,
    /// r scale on a rejected sweep (0.7).
    pub nu_reduce: f64,
    /// r scale when the merit falls by less than `too_small_merit_change` (1.3).
    pub nu_increase: f64,
    /// Merit decrease (N·s) below which r grows (0.01).
    pub too_small_merit_change: f64,
    /// Numerator of the initial r-factor `r_factor / A_kk` (0.1).
    pub r_factor: f64,
}

impl Default for SolverParams {
    fn default() -> Self {
        SolverParams {
            absolute_tolerance: 1e-3,
            relative_tolerance: 1e-4,
            max_iterations: 200,
            nu_reduce: 0.7,
            nu_increase: 1.3,
            too_small_merit_change: 0.01,
            r_factor: 0.1,
        }
    }
}

/// Why a solve stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Merit below the absolute tolerance.
    Absolute,
    /// Merit changed by less than the relative tolerance.
    Relative,
    /// `max_iterations` sweeps without convergence (the last accepted iterate is returned).
    MaxIterations,
}
