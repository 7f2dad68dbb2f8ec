//! Reference linearisation of the implicit-Euler incremental potential (the CPU twin of one
//! Newton linearisation on the GPU: `kernels/newton/vectors.comp` modes 0–1, the element
//! kernels and `kernels/fem/assemble_hessian.comp` mode 0):
//! `E(x) = Σᵢ ½ mᵢ/h² ‖xᵢ − yᵢ‖² + Σₑ Eₑ(x) + Σᵢ contactᵢ(x) − f·x`, `y = xₜ + h vₜ + h² g`
//! (fixed vertices: `y = x`, zero gradient, identity diagonal block). f64 throughout.

use super::contact::{friction_lag, push_out, vertex_contact, Collider, ContactParams};
use super::fem::{Material, TetRest};
use super::thin::{ThinElement, NO_VERTEX};
use nalgebra::{Matrix3, Vector3};

/// What one linearisation needs besides the state.
#[derive(Debug, Clone)]
pub struct PotentialSetup<'a> {
    /// Rest positions (m).
    pub rest: &'a [[f64; 3]],
    /// Lumped masses (kg).
    pub masses: &'a [f64],
    /// Inverse masses (0: fixed).
    pub inv_mass: &'a [f64],
    /// Tets and their materials.
    pub tets: &'a [[u32; 4]],
    /// One material per tet.
    pub tet_materials: Vec<Material>,
    /// Cloth and rod elements.
    pub thin: &'a [ThinElement],
    /// Constant external forces (N).
    pub external_forces: &'a [[f64; 3]],
    /// Colliders.
    pub colliders: &'a [Collider],
    /// Per vertex, its clearance from colliders on top of their offsets (m; empty: 0).
    pub collider_offsets: &'a [f64],
    /// Time step (s).
    pub h: f64,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Collider barrier stiffness relative to m/h².
    pub kappa: f64,
    /// Collider barrier activation distance d̂ (m).
    pub dhat: f64,
    /// Friction slip threshold (m).
    pub slip: f64,
}

/// One linearisation of the incremental potential.
#[derive(Debug, Clone)]
pub struct Linearization {
    /// ∇E per vertex (N; zero for fixed vertices).
    pub gradient: Vec<Vector3<f64>>,
    /// Diagonal Newton blocks (N/m; identity for fixed vertices).
    pub diag: Vec<Matrix3<f64>>,
    /// E (J).
    pub energy: f64,
    /// Per-vertex stiffness estimate of the PCG warm start (N/m; 1 for fixed vertices):
    /// `3 m/h² + tr(contact block) + Σₑ tr(Hₑ)/kₑ`.
    pub stiffness: Vec<f64>,
}

/// The linearisation at `x`, where `x` is also the step start (the first linearisation of a
/// step at time `t` = end of the step).
pub fn linearize_at_step_start(
    s: &PotentialSetup,
    x: &[Vector3<f64>],
    v: &[Vector3<f64>],
    t: f64,
) -> Linearization {
    let n = x.len();
    let h2 = s.h * s.h;
    // Predict pushes free vertices within a collider's offset out to d̂/2 above it; the step
    // start (inertia, friction) stays where it was.
    let start = x;
    // Vertex i sees every collider with its clearance added to the collider's offset.
    let seen_by: Vec<Vec<Collider>> = (0..n)
        .map(|i| {
            let extra = s.collider_offsets.get(i).copied().unwrap_or(0.0);
            s.colliders
                .iter()
                .map(|c| Collider {
                    offset: c.offset + extra,
                    ..*c
                })
                .collect()
        })
        .collect();
    let seen = |i: usize| -> &[Collider] { &seen_by[i] };
    let pushed: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            if s.inv_mass[i] == 0.0 || s.colliders.is_empty() {
                x[i]
            } else {
                push_out(seen(i), &x[i], t, 0.5 * s.dhat)
            }
        })
        .collect();
    let x = &pushed[..];
    let g = Vector3::from(s.gravity);
    let mut grad = vec![Vector3::zeros(); n];
    let mut diag = vec![Matrix3::zeros(); n];
    let mut energy = 0.0;
    let mut stiffness = vec![0.0; n];
    for i in 0..n {
        let fixed = s.inv_mass[i] == 0.0;
        let k = s.masses[i] / h2;
        let y = if fixed {
            start[i]
        } else {
            start[i] + s.h * v[i] + h2 * g
        };
        let kc = s.kappa * k;
        let lag = if fixed {
            None
        } else {
            friction_lag(seen(i), &x[i], t, s.h, kc, s.dhat)
        };
        let params = ContactParams {
            kc,
            t,
            eps: s.slip,
            dhat: s.dhat,
        };
        let (ec, gc, hc) = if fixed {
            (0.0, Vector3::zeros(), Matrix3::zeros())
        } else {
            vertex_contact(seen(i), &x[i], &start[i], lag.as_ref(), &params)
        };
        let f = Vector3::from(s.external_forces[i]);
        let dx = x[i] - y;
        energy += 0.5 * k * dx.norm_squared() + ec - f.dot(&x[i]);
        grad[i] = k * dx + gc - f;
        diag[i] = k * Matrix3::identity() + hc;
        stiffness[i] = 3.0 * k + hc.trace();
    }
    let mut add = |verts: [u32; 4], e: f64, ge: &super::fem::Vec12, he: &super::fem::Mat12| {
        energy += e;
        let nodes = verts.iter().filter(|&&v| v != NO_VERTEX).count() as f64;
        for a in 0..4 {
            let va = verts[a];
            if va == NO_VERTEX {
                continue;
            }
            grad[va as usize] += ge.fixed_rows::<3>(3 * a);
            diag[va as usize] += he.fixed_view::<3, 3>(3 * a, 3 * a);
            stiffness[va as usize] += he.trace() / nodes;
        }
    };
    for (t_i, tet) in s.tets.iter().enumerate() {
        let p = |v: u32| Vector3::from(s.rest[v as usize]);
        let Some(rest) = TetRest::new(&tet.map(p)) else {
            continue;
        };
        let xe = tet.map(|v| x[v as usize]);
        let m = &s.tet_materials[t_i];
        add(
            *tet,
            rest.energy(m, &xe),
            &rest.gradient(m, &xe),
            &rest.hessian_analytic(m, &xe),
        );
    }
    for e in s.thin {
        let vs = e.vertices();
        let xe = vs.map(|v| {
            if v == NO_VERTEX {
                Vector3::zeros()
            } else {
                x[v as usize]
            }
        });
        add(vs, e.energy(&xe), &e.gradient(&xe), &e.hessian(&xe));
    }
    for i in 0..n {
        if s.inv_mass[i] == 0.0 {
            grad[i] = Vector3::zeros();
            diag[i] = Matrix3::identity();
            stiffness[i] = 1.0;
        }
    }
    Linearization {
        gradient: grad,
        diag,
        energy,
        stiffness,
    }
}

/// One decision of the device-driven Newton loop (`kernels/newton/control.comp` in `mode`,
/// [`crate::stepper::newton::device_loop::ControlMode`]) on the control `words`, with the
/// reductions `sums` (element energy, inertia energy, max |g|, max |d|), the PCG scalars `pcg`
/// and the line-search step `alpha`. f32 like the kernel, bit for bit.
pub fn device_control(
    mode: u32,
    words: &mut [u32],
    sums: [f32; 4],
    pcg: &[f32],
    alpha: &mut f32,
    p: &crate::stepper::newton::device_loop::ControlParams,
) {
    use crate::stepper::newton::device_loop::{phase as ph, status as stat, words as w};
    let two_sum = |a: f32, b: f32| {
        let s = a + b;
        let bb = s - a;
        (s, (a - (s - bb)) + (b - bb))
    };
    let set = |words: &mut [u32], i: usize, v: f32| words[i] = v.to_bits();
    let get = |words: &[u32], i: usize| f32::from_bits(words[i]);
    let evaluated = |words: &mut [u32]| {
        let (hi, lo) = two_sum(sums[0], sums[1]);
        set(words, w::ENERGY_HI, hi);
        set(words, w::ENERGY_LO, lo);
        set(words, w::GNORM, sums[2]);
        let stop = words[w::SOLVES] >= p.max_iterations
            || (p.gradient_tolerance > 0.0 && sums[2] <= p.gradient_tolerance);
        words[w::PHASE] = if stop { ph::FINISH } else { ph::ASSEMBLE };
    };
    let phase = words[w::PHASE];
    match mode {
        0 => {
            words[..w::LOG].fill(0);
            evaluated(words);
        }
        1 => {
            if phase & (ph::ASSEMBLE | ph::SOLVING) == 0 {
                return;
            }
            if pcg[p.slot_done as usize] == 0.0 {
                words[w::PHASE] = ph::SOLVING;
                return;
            }
            let k = words[w::SOLVES] as usize;
            let rel = pcg[p.slot_residual as usize];
            let at = w::LOG + k * w::LOG_WORDS;
            words[at] = pcg[p.slot_iterations as usize] as u32;
            words[at + 1] = if p.warm != 0 {
                pcg[p.slot_warm_iterations as usize] as u32
            } else {
                0
            };
            set(words, at + 2, rel);
            set(words, at + 3, 0.0);
            words[at + 4] = pcg[p.slot_exit as usize] as u32;
            set(words, at + 5, pcg[p.slot_model as usize]);
            set(words, at + 6, pcg[p.slot_remaining as usize]);
            words[w::SOLVES] = k as u32 + 1;
            if !rel.is_finite() {
                words[w::STATUS] |= stat::NOT_FINITE;
                words[w::PHASE] = 0;
                return;
            }
            words[w::TRIALS] = 0;
            *alpha = 1.0;
            words[w::PHASE] = ph::SEARCH;
        }
        2 => {
            if phase & ph::SEARCH == 0 {
                return;
            }
            let a = *alpha;
            set(words, w::DMAX, sums[3]);
            let (hi, lo) = two_sum(sums[0], sums[1]);
            let e_hi = get(words, w::ENERGY_HI);
            let diff = (hi - e_hi) + (lo - get(words, w::ENERGY_LO));
            let slack = 1e-12f32 * e_hi.abs().max(1e-12);
            let at = w::LOG + (words[w::SOLVES] as usize - 1) * w::LOG_WORDS;
            if diff <= slack {
                set(words, w::ENERGY_HI, hi);
                set(words, w::ENERGY_LO, lo);
                set(words, at + 3, a);
                words[w::PHASE] = ph::ACCEPT;
                return;
            }
            let a = a * 0.5;
            *alpha = a;
            words[w::TRIALS] += 1;
            let go_on = if p.alpha_floor < 0.0 {
                a > 1e-6
            } else {
                a >= p.alpha_floor && a > 0.0
            };
            if !go_on {
                words[w::STATUS] |= stat::SEARCH_FAILED;
                words[w::PHASE] = ph::FINISH;
            }
        }
        3 => {
            if phase & ph::ACCEPT == 0 {
                return;
            }
            let (d, a) = (get(words, w::DMAX), *alpha);
            let prod = d * a;
            let err = d.mul_add(a, -prod);
            let below = (prod - p.tolerance_hi) + (err - p.tolerance_lo);
            words[w::PHASE] = if below < 0.0 {
                ph::FINISH
            } else {
                ph::EVALUATE
            };
        }
        4 => {
            if phase & ph::EVALUATE != 0 {
                evaluated(words);
            }
        }
        _ => {
            if phase != 0 {
                words[w::GRAPHS] += 1;
            }
            if phase & ph::FINISH != 0 {
                words[w::PHASE] = 0;
                words[w::STATUS] |= stat::DONE;
            }
        }
    }
}

/// The scripted vertices' moves and pull of one step (`kernels/newton/script.comp`), in
/// f64 from the model's motions ([`crate::model::Motion::position`]).
pub mod script {
    use crate::model::SimModel;

    /// Mode 1: per vertex, the move from `x` to its scripted pose at time `t` (s); zero for free
    /// vertices.
    pub fn direction(model: &SimModel, x: &[[f64; 3]], t: f64) -> Vec<[f64; 3]> {
        x.iter()
            .enumerate()
            .map(|(i, xi)| match model.vertex_motion.get(i) {
                Some(&m) if m != u32::MAX => {
                    let p = model.motions[m as usize].position(model.positions[i], t);
                    [p[0] - xi[0], p[1] - xi[1], p[2] - xi[2]]
                }
                _ => [0.0; 3],
            })
            .collect()
    }

    /// The scripted pose of vertex `i` at time `t` (m), if it is scripted.
    fn pose(model: &SimModel, i: usize, t: f64) -> Option<[f64; 3]> {
        match model.vertex_motion.get(i) {
            Some(&m) if m != u32::MAX => {
                Some(model.motions[m as usize].position(model.positions[i], t))
            }
            _ => None,
        }
    }

    /// Mode 3 (the pull's start): per scripted vertex, the shift extrapolated by its change over
    /// the last step, s + (s − s_last), the new s_last (the old s) and the target y = p(t) + the
    /// new s; `None` for free ones (left as they were).
    #[allow(clippy::type_complexity)]
    pub fn pull_start(
        model: &SimModel,
        shift: &[[f64; 3]],
        shift_last: &[[f64; 3]],
        t: f64,
    ) -> Vec<Option<([f64; 3], [f64; 3], [f64; 3])>> {
        (0..shift.len())
            .map(|i| {
                pose(model, i, t).map(|p| {
                    let (s, l) = (shift[i], shift_last[i]);
                    let e = [
                        s[0] + (s[0] - l[0]),
                        s[1] + (s[1] - l[1]),
                        s[2] + (s[2] - l[2]),
                    ];
                    (e, s, [p[0] + e[0], p[1] + e[1], p[2] + e[2]])
                })
            })
            .collect()
    }

    /// Mode 4 (the multiplier step at `x`): per vertex, the shift s + p(t) − x and the target
    /// y = p(t) + s for scripted vertices; `None` for free ones (left as they were).
    pub fn pull_update(
        model: &SimModel,
        x: &[[f64; 3]],
        shift: &[[f64; 3]],
        t: f64,
    ) -> Vec<Option<([f64; 3], [f64; 3])>> {
        x.iter()
            .enumerate()
            .map(|(i, xi)| {
                pose(model, i, t).map(|p| {
                    let s = [
                        shift[i][0] + p[0] - xi[0],
                        shift[i][1] + p[1] - xi[1],
                        shift[i][2] + p[2] - xi[2],
                    ];
                    (s, [p[0] + s[0], p[1] + s[1], p[2] + s[2]])
                })
            })
            .collect()
    }

    /// Mode 5 (the weight's growth by `factor`): per vertex, the solve's mass times `factor`
    /// and the shift (s or s_last alike) divided by it for scripted vertices; free ones unchanged.
    pub fn stiffen(
        model: &SimModel,
        mass: &[f64],
        shift: &[[f64; 3]],
        factor: f64,
    ) -> (Vec<f64>, Vec<[f64; 3]>) {
        (0..mass.len())
            .map(|i| match model.vertex_motion.get(i) {
                Some(&m) if m != u32::MAX => (
                    mass[i] * factor,
                    [
                        shift[i][0] / factor,
                        shift[i][1] / factor,
                        shift[i][2] / factor,
                    ],
                ),
                _ => (mass[i], shift[i]),
            })
            .unzip()
    }

    /// Mode 2: `x + alpha · dir` for scripted vertices, `x` for free ones.
    pub fn advance(
        model: &SimModel,
        x: &[[f64; 3]],
        dir: &[[f64; 3]],
        alpha: f64,
    ) -> Vec<[f64; 3]> {
        x.iter()
            .zip(dir)
            .enumerate()
            .map(|(i, (xi, d))| match model.vertex_motion.get(i) {
                Some(&m) if m != u32::MAX => [
                    xi[0] + alpha * d[0],
                    xi[1] + alpha * d[1],
                    xi[2] + alpha * d[2],
                ],
                _ => *xi,
            })
            .collect()
    }
}
