//! Divergence detection after every frame: a non-finite position or velocity, or (with a
//! stepper that minimises an energy, i.e. Newton, over stable Neo-Hookean solids) an inverted
//! tet, stops the simulation with a [`SimError::Solver`] of component [`DIVERGED`] naming the
//! frame, the body and the solver state. The check reads the positions and velocities through
//! the state's host-visible copies (`GpuState::mirror`): one device copy and one host pass per
//! frame, not per time step; the Newton stepper records the copy in its last graph of a step,
//! so it costs no submission or host wait of its own there.

use super::FrameStats;
use crate::error::SimError;
use crate::fem::rest::TetRest;
use crate::model::SimModel;
use crate::scene::MaterialModel;
use nalgebra::Vector3;

/// The component of the [`SimError::Solver`] a diverged frame returns.
pub const DIVERGED: &str = "diverged";

/// What the check needs from the model, computed once.
pub(super) struct DivergenceCheck {
    /// Body index of every model vertex.
    vertex_body: Vec<u32>,
    /// Body names.
    body_names: Vec<String>,
    /// Tets that must not invert: (body, tet vertices, Dm⁻¹).
    tets: Vec<(u32, [u32; 4], nalgebra::Matrix3<f64>)>,
}

impl DivergenceCheck {
    /// The check for `model`; tets are checked for inversion only with an energy-minimising
    /// stepper (`inversion`) and only in stable Neo-Hookean bodies.
    pub(super) fn new(model: &SimModel, inversion: bool) -> DivergenceCheck {
        let mut vertex_body = vec![0u32; model.positions.len()];
        let mut tets = Vec::new();
        for (k, b) in model.bodies.iter().enumerate() {
            for v in b.vertices.clone() {
                if let Some(slot) = vertex_body.get_mut(v as usize) {
                    *slot = k as u32;
                }
            }
            if !(inversion && b.model == MaterialModel::StableNeoHookean) {
                continue;
            }
            for t in b.tets.clone() {
                let Some(tet) = model.tets.get(t as usize) else {
                    continue;
                };
                let rest = TetRest::new(&tet.map(|v| Vector3::from(model.positions[v as usize])));
                if let Some(r) = rest {
                    tets.push((k as u32, *tet, r.dm_inv));
                }
            }
        }
        DivergenceCheck {
            vertex_body,
            body_names: model.bodies.iter().map(|b| b.name.clone()).collect(),
            tets,
        }
    }

    fn body(&self, k: u32) -> &str {
        self.body_names
            .get(k as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// Checks the state after frame `frame` (simulated time `time`) stepped with `stats` by
    /// `stepper`; positions `x` and velocities `v` as read back (xyz of each vec4).
    pub(super) fn check(
        &self,
        x: &[[f32; 4]],
        v: &[[f32; 4]],
        frame: u64,
        time: f64,
        stepper: &str,
        stats: &FrameStats,
    ) -> Result<(), SimError> {
        let what = |body: u32, finding: String| {
            SimError::solver(
                DIVERGED,
                format!(
                    "frame {frame} (t = {time:.6} s): body \"{}\": {finding}; {}",
                    self.body(body),
                    solver_state(stepper, stats)
                ),
            )
        };
        let finite = |p: &[f32; 4]| p[..3].iter().all(|c| c.is_finite());
        if let Some(i) = x.iter().position(|p| !finite(p)) {
            let b = self.vertex_body.get(i).copied().unwrap_or(0);
            return Err(what(b, format!("non-finite position at vertex {i}")));
        }
        if let Some(i) = v.iter().position(|p| !finite(p)) {
            let b = self.vertex_body.get(i).copied().unwrap_or(0);
            return Err(what(b, format!("non-finite velocity at vertex {i}")));
        }
        let at = |i: u32| {
            let p = x.get(i as usize).copied().unwrap_or([0.0; 4]);
            Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64)
        };
        for (tet, (body, t, dm_inv)) in self.tets.iter().enumerate() {
            let x0 = at(t[0]);
            let ds =
                nalgebra::Matrix3::from_columns(&[at(t[1]) - x0, at(t[2]) - x0, at(t[3]) - x0]);
            let det = (ds * dm_inv).determinant();
            if det <= 0.0 {
                return Err(what(
                    *body,
                    format!(
                        "inverted tet (det F = {det:.3} at tet {tet} of the checked ones, vertices \
                         {t:?}); {stepper} over stable Neo-Hookean solids must not invert"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The solver state of a frame in words (for the divergence message).
fn solver_state(stepper: &str, s: &FrameStats) -> String {
    let mut out = format!(
        "solver state: {stepper}, {} Newton and {} PCG iterations in the frame",
        s.newton_iterations, s.pcg_iterations
    );
    if s.newton_iterations > 0 {
        out.push_str(&format!(
            ", gradient norm {:.3e} N, PCG residual {:.3e}, energy {:.6e} J",
            s.gradient_norm, s.pcg_residual, s.energy
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_tet() -> SimModel {
        SimModel {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            tets: vec![[0, 1, 2, 3]],
            bodies: vec![crate::model::BodyRange {
                name: "blob".into(),
                vertices: 0..4,
                tets: 0..1,
                triangles: 0..0,
                surface: Vec::new(),
                model: MaterialModel::StableNeoHookean,
            }],
            ..SimModel::default()
        }
    }

    fn vec4(p: &[[f64; 3]]) -> Vec<[f32; 4]> {
        p.iter()
            .map(|q| [q[0] as f32, q[1] as f32, q[2] as f32, 0.0])
            .collect()
    }

    #[test]
    fn finds_non_finite_and_inverted_states() {
        let m = one_tet();
        let check = DivergenceCheck::new(&m, true);
        let x = vec4(&m.positions);
        let v = vec![[0.0f32; 4]; 4];
        let s = FrameStats::default();
        assert!(check.check(&x, &v, 1, 0.1, "newton", &s).is_ok());
        let mut nan = x.clone();
        nan[2][1] = f32::NAN;
        let e = check.check(&nan, &v, 3, 0.1, "newton", &s).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("diverged: frame 3"), "{msg}");
        assert!(
            msg.contains("body \"blob\"") && msg.contains("position at vertex 2"),
            "{msg}"
        );
        let mut fast = v.clone();
        fast[1][0] = f32::INFINITY;
        let msg = check
            .check(&x, &fast, 4, 0.1, "newton", &s)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("non-finite velocity at vertex 1"), "{msg}");
        let mut flipped = x.clone();
        flipped[3][2] = -0.5;
        let msg = check
            .check(&flipped, &v, 5, 0.1, "newton", &s)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("inverted tet"), "{msg}");
        // Without the inversion rule (XPBD, symplectic Euler) an inverted tet is not divergence.
        let lenient = DivergenceCheck::new(&m, false);
        assert!(lenient.check(&flipped, &v, 5, 0.1, "xpbd", &s).is_ok());
    }
}
