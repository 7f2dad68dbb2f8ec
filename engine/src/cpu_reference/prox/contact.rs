//! The contact problem of RAINBOW's PROX solver (report §2.4, spec §B1; the contact type is
//! [`crate::contact::prox::model::Contact`]): per contact a normal
//! impulse λn ≥ 0 and a friction impulse λf ∈ R² in the Coulomb disk, acting on the nodes that
//! embed the contact point, with lumped (diagonal, isotropic) inverse masses.
//!
//! A contact k has up to eight node slots (RAINBOW: the four nodes of the tet of each body that
//! embeds the contact point; Supple's proximity pairs: the four vertices of a vertex–triangle or
//! edge–edge stencil) with signed weights `w_kj` (barycentric weights with the side's sign folded
//! in: −ω for the first body, +ω for the second), and an orthonormal frame C_k = [n; s; t] (rows).
//! Its Jacobian rows are `J_k v = C_k Σ_j w_kj v_{node(k, j)}`, so `v_n = n · (v_B − v_A)` is the
//! normal relative velocity (> 0 separates). J is never assembled:
//! - `(W Jᵀ λ)_a = m_a⁻¹ Σ_{(k, j): node(k, j) = a} w_kj C_kᵀ λ_k` ([`gather`]);
//! - the Delassus diagonal block `J_k W J_kᵀ = (Σ_a m_a⁻¹ (Σ_{j: node(k, j) = a} w_kj)²) I₃`
//!   ([`Contact::delassus_diagonal`]; C_k orthonormal, masses isotropic);
//! - `b_k = J_k u′ + ε_k (n · Σ_j w_kj u_j) e_n` with u′ the velocities after the free update and
//!   u those at the start of the step (Newton restitution on the normal row; RAINBOW's code uses
//!   ε = 0, i.e. `b = J u′`) ([`ProxProblem::new`]).

pub use crate::contact::prox::model::{check_contact, tangents, Contact, NO_NODE};
use crate::math::Vec3;

/// `w = W Jᵀ λ` over all contacts: the velocity correction of every node (m/s), summed per
/// node in contact order then slot order.
pub fn gather(contacts: &[Contact], inv_mass: &[f64], lambda: &[[f64; 3]]) -> Vec<Vec3> {
    let mut w = vec![Vec3::zeros(); inv_mass.len()];
    for (c, &l) in contacts.iter().zip(lambda) {
        c.scatter(inv_mass, l, &mut w);
    }
    w
}

/// Initial r-factors (RAINBOW's `compute_initial_r_factor`): `r0 / A_kk`, `r0` where the
/// Delassus diagonal is 0 (a contact on fixed nodes only). RAINBOW's `r0` is 0.1.
pub fn initial_r(contacts: &[Contact], inv_mass: &[f64], r0: f64) -> Vec<f64> {
    contacts
        .iter()
        .map(|c| {
            let d = c.delassus_diagonal(inv_mass);
            if d > 0.0 {
                r0 / d
            } else {
                r0
            }
        })
        .collect()
}

/// Kinetic energy `½ Σ m_a |u_a|²` of the nodes with positive inverse mass (J).
pub fn kinetic_energy(inv_mass: &[f64], u: &[Vec3]) -> f64 {
    inv_mass
        .iter()
        .zip(u)
        .filter(|(&w, _)| w > 0.0)
        .map(|(&w, v)| 0.5 * v.norm_squared() / w)
        .sum()
}

/// One contact problem: contacts, lumped inverse masses and the free velocity term b.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxProblem {
    /// The contacts.
    pub contacts: Vec<Contact>,
    /// Lumped inverse mass of every node (1/kg; 0 = fixed).
    pub inv_mass: Vec<f64>,
    /// `b_k` (m/s) per contact: (normal, s, t).
    pub b: Vec<[f64; 3]>,
}

impl ProxProblem {
    /// The problem of `contacts` over nodes with inverse masses `inv_mass`, velocities after the
    /// free update `u_free` and at the start of the step `u_start` (for restitution). Checks
    /// node indices, lengths and finiteness; the error names the contact and the field.
    pub fn new(
        contacts: Vec<Contact>,
        inv_mass: Vec<f64>,
        u_free: &[Vec3],
        u_start: &[Vec3],
    ) -> Result<Self, String> {
        let n = inv_mass.len();
        if u_free.len() != n || u_start.len() != n {
            return Err(format!(
                "{n} inverse masses but {} free and {} start velocities",
                u_free.len(),
                u_start.len()
            ));
        }
        if let Some(a) = inv_mass.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!(
                "inverse mass of node {a} is {} (must be finite, >= 0)",
                inv_mass[a]
            ));
        }
        for (k, c) in contacts.iter().enumerate() {
            check_contact(k, c, n)?;
        }
        let b = contacts
            .iter()
            .map(|c| {
                let mut b = c.jacobian(u_free);
                if c.restitution > 0.0 {
                    b[0] += c.restitution * c.normal.dot(&c.relative_velocity(u_start));
                }
                b
            })
            .collect();
        Ok(ProxProblem {
            contacts,
            inv_mass,
            b,
        })
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// Whether there are no contacts.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// `v = A λ + b = J W Jᵀ λ + b` per contact (m/s): the contact velocities after the impulses.
    pub fn velocities(&self, lambda: &[[f64; 3]]) -> Vec<[f64; 3]> {
        let w = gather(&self.contacts, &self.inv_mass, lambda);
        self.contacts
            .iter()
            .zip(&self.b)
            .map(|(c, b)| {
                let jw = c.jacobian(&w);
                [jw[0] + b[0], jw[1] + b[1], jw[2] + b[2]]
            })
            .collect()
    }

    /// Node velocities after the contact impulses: `u = u′ + W Jᵀ λ`.
    pub fn apply(&self, u_free: &[Vec3], lambda: &[[f64; 3]]) -> Vec<Vec3> {
        let w = gather(&self.contacts, &self.inv_mass, lambda);
        u_free.iter().zip(&w).map(|(u, d)| u + d).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tangents_complete_a_right_handed_frame() {
        for n in [
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.3, -0.5, 0.2).normalize(),
            Vec3::new(-0.1, 0.2, -0.97).normalize(),
        ] {
            let [s, t] = tangents(&n);
            for (a, b) in [(n, s), (n, t), (s, t)] {
                assert!(a.dot(&b).abs() < 1e-14);
            }
            assert!((s.norm() - 1.0).abs() < 1e-14 && (t.norm() - 1.0).abs() < 1e-14);
            assert!(
                (s.cross(&t) - n).norm() < 1e-14,
                "not right-handed for {n:?}"
            );
        }
    }

    #[test]
    fn jacobian_delassus_and_gather_agree_with_a_dense_matrix() {
        // Two contacts sharing node 2, one repeating node 3 in two slots.
        let inv_mass = vec![0.5, 2.0, 1.0, 0.25, 0.0];
        let c0 = Contact::new(
            &[0, 1, 2],
            &[-0.3, -0.7, 1.0],
            Vec3::new(0.0, 1.0, 0.2),
            0.4,
            0.0,
        );
        let c1 = Contact::new(
            &[2, 3, 3, 4],
            &[-1.0, 0.25, 0.5, 0.25],
            Vec3::new(1.0, -1.0, 0.5),
            0.4,
            0.0,
        );
        let contacts = [c0, c1];
        // Dense J (6 x 15) and W.
        let mut j = nalgebra::DMatrix::<f64>::zeros(6, 15);
        for (k, c) in contacts.iter().enumerate() {
            for (r, e) in c.frame().iter().enumerate() {
                for (a, w) in c.slots() {
                    for d in 0..3 {
                        j[(3 * k + r, 3 * a + d)] += w * e[d];
                    }
                }
            }
        }
        let w = nalgebra::DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(
            15,
            inv_mass.iter().flat_map(|&m| [m, m, m]),
        ));
        let a = &j * &w * j.transpose();
        for (k, c) in contacts.iter().enumerate() {
            let d = c.delassus_diagonal(&inv_mass);
            for r in 0..3 {
                assert!((a[(3 * k + r, 3 * k + r)] - d).abs() < 1e-12);
            }
            // Off-diagonal entries of the contact's own block vanish (orthonormal frame).
            assert!(a[(3 * k, 3 * k + 1)].abs() < 1e-12);
        }
        let lambda = [[0.7, -0.2, 0.1], [0.3, 0.05, -0.4]];
        let lam = nalgebra::DVector::from_iterator(6, lambda.iter().flatten().copied());
        let wj = &w * j.transpose() * &lam;
        let g = gather(&contacts, &inv_mass, &lambda);
        for a in 0..5 {
            for d in 0..3 {
                assert!((g[a][d] - wj[3 * a + d]).abs() < 1e-12);
            }
        }
        let v: Vec<Vec3> = (0..5)
            .map(|i| Vec3::new(i as f64, 1.0 - i as f64, 0.5))
            .collect();
        let vv = nalgebra::DVector::from_iterator(15, v.iter().flat_map(|x| [x.x, x.y, x.z]));
        let jv = &j * vv;
        for (k, c) in contacts.iter().enumerate() {
            let r = c.jacobian(&v);
            for i in 0..3 {
                assert!((r[i] - jv[3 * k + i]).abs() < 1e-12);
            }
        }
        // r-factors: 0.1 / diagonal; a contact on fixed nodes only gets 0.1.
        let fixed = Contact::new(&[4], &[1.0], Vec3::new(0.0, 0.0, 1.0), 0.4, 0.0);
        let r = initial_r(&[c0, fixed], &inv_mass, 0.1);
        assert!((r[0] - 0.1 / c0.delassus_diagonal(&inv_mass)).abs() < 1e-15);
        assert_eq!(r[1], 0.1);
    }

    #[test]
    fn problem_checks_name_the_contact_and_field() {
        let c = Contact::new(&[0, 7], &[-1.0, 1.0], Vec3::new(0.0, 0.0, 1.0), 0.5, 0.0);
        let u = vec![Vec3::zeros(); 2];
        let e = ProxProblem::new(vec![c], vec![1.0; 2], &u, &u).unwrap_err();
        assert!(e.contains("contact 0") && e.contains("nodes[1]"), "{e}");
        let mut c = Contact::new(&[0, 1], &[-1.0, 1.0], Vec3::new(0.0, 0.0, 1.0), -0.5, 0.0);
        let e = ProxProblem::new(vec![c], vec![1.0; 2], &u, &u).unwrap_err();
        assert!(e.contains("friction"), "{e}");
        c.friction = 0.5;
        c.restitution = 1.5;
        let e = ProxProblem::new(vec![c], vec![1.0; 2], &u, &u).unwrap_err();
        assert!(e.contains("restitution"), "{e}");
        c.restitution = 0.5;
        c.weights[1] = f64::NAN;
        let e = ProxProblem::new(vec![c], vec![1.0; 2], &u, &u).unwrap_err();
        assert!(e.contains("weights[1]"), "{e}");
        // Restitution adds ε n·(Σ w u) to the normal row of b.
        c.weights[1] = 1.0;
        let u_start = vec![Vec3::zeros(), Vec3::new(0.0, 0.0, -2.0)];
        let u_free = vec![Vec3::zeros(), Vec3::new(0.0, 0.0, -3.0)];
        let p = ProxProblem::new(vec![c], vec![1.0; 2], &u_free, &u_start).unwrap();
        assert!((p.b[0][0] - (-3.0 - 0.5 * 2.0)).abs() < 1e-15);
    }
}
