//! Reference XPBD substeps (the CPU twin of `kernels/xpbd/*.comp`, scheduled like
//! [`crate::stepper::xpbd::XpbdStepper`]): the same packed [`XpbdSystem`], the same color order, the same
//! branches and f32 arithmetic, so GPU and reference agree to rounding (the order of
//! constraints within a color does not matter: they share no vertex).

// `!(x > 0.0)` mirrors the kernels' NaN-rejecting tests exactly.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::stepper::xpbd::{ConstraintSet, TetSolve, XpbdSettings, XpbdSystem};

type V3 = [f32; 3];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn scale(a: V3, s: f32) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn xyz(v: [f32; 4]) -> V3 {
    [v[0], v[1], v[2]]
}
fn length(a: V3) -> f32 {
    dot(a, a).sqrt()
}
/// Columns of `m · b` for column-major 3×3 matrices (`m[j]`, `b[j]` columns).
/// Quaternion iterations of the corotated rotation per solve (`ROT_ITERATIONS`).
const ROT_ITERATIONS: usize = 8;

/// Rotation matrix (columns) of a unit quaternion xyzw.
fn quat_to_mat(q: [f32; 4]) -> [V3; 3] {
    let [x, y, z, w] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ],
        [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ],
        [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

fn quat_mul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    let (av, bv) = ([a[0], a[1], a[2]], [b[0], b[1], b[2]]);
    let v = add(add(scale(bv, a[3]), scale(av, b[3])), cross(av, bv));
    [v[0], v[1], v[2], a[3] * b[3] - dot(av, bv)]
}

fn quat_normalize(q: [f32; 4]) -> [f32; 4] {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    q.map(|c| c / l)
}

fn mat_mul(m: &[V3; 3], b: &[V3; 3]) -> [V3; 3] {
    b.map(|bj| {
        add(
            add(scale(m[0], bj[0]), scale(m[1], bj[1])),
            scale(m[2], bj[2]),
        )
    })
}
/// Columns of `m · bᵀ`.
fn mat_mul_t(m: &[V3; 3], b: &[V3; 3]) -> [V3; 3] {
    let bt = [0, 1, 2].map(|j| [b[0][j], b[1][j], b[2][j]]);
    mat_mul(m, &bt)
}

/// Smallest distance above a collider's offset a projection leaves (m; `COLLIDER_GUARD` of
/// `kernels/include/colliders.glsl`).
const COLLIDER_GUARD: f32 = crate::contact::colliders::COLLIDER_GUARD as f32;

/// Signed gap (negative inside) and outward unit normal of `x` against packed collider `c` at
/// time `t` (`collider_gap` of `kernels/include/colliders.glsl`).
pub fn collider_gap(colliders: &[[f32; 4]], c: usize, x: V3, t: f32) -> (f32, V3) {
    let (c0, c1, c2) = (colliders[4 * c], colliders[4 * c + 1], colliders[4 * c + 2]);
    let shift = scale(xyz(colliders[4 * c + 3]), t);
    match c0[0] as u32 {
        0 => {
            let n = xyz(c1);
            (dot(n, x) - c0[2] - dot(n, shift), n)
        }
        1 => {
            let d = sub(x, add(xyz(c1), shift));
            let l = length(d);
            let n = if l > 0.0 {
                scale(d, 1.0 / l)
            } else {
                [0.0, 0.0, 1.0]
            };
            (l - c0[2], n)
        }
        _ => {
            let (lo, hi) = (add(xyz(c1), shift), add(xyz(c2), shift));
            let clamped = [0, 1, 2].map(|k| x[k].max(lo[k]).min(hi[k]));
            let out_d = sub(x, clamped);
            let l = length(out_d);
            if l > 0.0 {
                return (l, scale(out_d, 1.0 / l));
            }
            let mut best = 1e30f32;
            let mut n = [0.0, 0.0, 1.0];
            for k in 0..3 {
                let (dl, dh) = (x[k] - lo[k], hi[k] - x[k]);
                let mut e = [0.0f32; 3];
                e[k] = 1.0;
                if dl < best {
                    best = dl;
                    n = scale(e, -1.0);
                }
                if dh < best {
                    best = dh;
                    n = e;
                }
            }
            (-best, n)
        }
    }
}

/// Reference XPBD state over a packed system.
#[derive(Debug, Clone)]
pub struct XpbdReference {
    sys: XpbdSystem,
    settings: XpbdSettings,
    /// Positions (m).
    pub x: Vec<V3>,
    /// Velocities (m/s).
    pub v: Vec<V3>,
    /// Positions at the start of the substep (m).
    pub x_prev: Vec<V3>,
    /// λ of the tets (deviatoric, hydrostatic).
    pub tet_lambda: Vec<[f32; 2]>,
    /// Warm-started rotation of each corotated tet (quaternion xyzw).
    pub tet_rot: Vec<[f32; 4]>,
    /// λ of the distance constraints.
    pub edge_lambda: Vec<f32>,
    /// λ of the bends (vec3).
    pub bend_lambda: Vec<V3>,
    /// Substeps completed.
    pub clock: u32,
}

impl XpbdReference {
    /// Starts from the system's initial state.
    pub fn new(sys: &XpbdSystem, settings: XpbdSettings) -> XpbdReference {
        let n = sys.num_vertices();
        XpbdReference {
            x: sys.positions.iter().copied().map(xyz).collect(),
            v: sys.velocities.iter().copied().map(xyz).collect(),
            x_prev: vec![[0.0; 3]; n],
            tet_lambda: vec![[0.0; 2]; sys.tets.len()],
            tet_rot: vec![[0.0, 0.0, 0.0, 1.0]; sys.tets.len()],
            edge_lambda: vec![0.0; sys.edges.len()],
            bend_lambda: vec![[0.0; 3]; sys.bends.len()],
            clock: 0,
            sys: sys.clone(),
            settings,
        }
    }

    fn h(&self) -> f32 {
        self.settings.substep() as f32
    }

    /// Prediction of one substep (`predict.comp`) and λ reset.
    pub fn predict(&mut self) {
        self.tet_lambda.fill([0.0; 2]);
        self.edge_lambda.fill(0.0);
        self.bend_lambda.fill([0.0; 3]);
        let h64 = self.settings.substep();
        let h = h64 as f32;
        let damp = (1.0 - self.settings.damping * h64).max(0.0) as f32;
        let g = self.settings.gravity.map(|x| x as f32);
        let s = &self.sys;
        for i in 0..self.x.len() {
            let xi = self.x[i];
            self.x_prev[i] = xi;
            let m = s.vertex_motion[i];
            let w = s.inv_mass[i];
            if m != u32::MAX {
                let m = m as usize;
                let (ka, c, mv) = (s.motions[3 * m], s.motions[3 * m + 1], s.motions[3 * m + 2]);
                let t = ((self.clock + 1) as f32 * h).min(c[3]);
                let d = sub(xyz(s.positions[i]), xyz(c));
                let theta = ka[3] * t;
                let k = xyz(ka);
                let mut r = d;
                if dot(k, k) > 0.0 {
                    let (ct, st) = (theta.cos(), theta.sin());
                    r = add(
                        add(scale(d, ct), scale(cross(k, d), st)),
                        scale(k, dot(k, d) * (1.0 - ct)),
                    );
                }
                self.x[i] = add(add(r, xyz(c)), scale(xyz(mv), t));
            } else if w > 0.0 {
                let f = xyz(s.external_forces[i]);
                let vel = add(self.v[i], scale(add(g, scale(f, w)), h));
                let vel = scale(vel, damp);
                self.v[i] = vel;
                self.x[i] = add(xi, scale(vel, h));
            }
        }
    }

    /// The XPBD update of one scalar constraint over four corners (`project` of
    /// `tet_sweep.comp`).
    #[allow(clippy::too_many_arguments)]
    fn project(
        c: f32,
        g: &[V3; 3],
        w: [f32; 4],
        alpha: f32,
        inv_h2: f32,
        lam: &mut f32,
        xs: &mut [V3; 4],
    ) {
        let g0 = scale(add(add(g[0], g[1]), g[2]), -1.0);
        let gs = [g0, g[0], g[1], g[2]];
        let wsum = w[0] * dot(g0, g0)
            + w[1] * dot(g[0], g[0])
            + w[2] * dot(g[1], g[1])
            + w[3] * dot(g[2], g[2]);
        let at = alpha * inv_h2;
        let denom = wsum + at;
        if !(denom > 0.0) {
            return;
        }
        let dl = (-c - at * *lam) / denom;
        *lam += dl;
        for k in 0..4 {
            xs[k] = add(xs[k], scale(gs[k], w[k] * dl));
        }
    }

    /// The deviatoric part of `f` (columns): `f` itself (stable Neo-Hookean) or `f − R`
    /// (corotated, `model` = 1; R by the warm-started quaternion iteration of Müller et al.
    /// 2016, `deviatoric` of `tet_sweep.comp`).
    fn deviatoric(&mut self, f: &[V3; 3], model: f32, t: usize) -> [V3; 3] {
        if model < 0.5 {
            return *f;
        }
        let mut q = self.tet_rot[t];
        for _ in 0..ROT_ITERATIONS {
            let r = quat_to_mat(q);
            let mut om = add(add(cross(r[0], f[0]), cross(r[1], f[1])), cross(r[2], f[2]));
            let den = (dot(r[0], f[0]) + dot(r[1], f[1]) + dot(r[2], f[2])).abs() + 1e-9;
            om = scale(om, 1.0 / den);
            let wl = length(om);
            if wl > 1e-9 {
                let s = (0.5 * wl).sin() / wl;
                let dq = [om[0] * s, om[1] * s, om[2] * s, (0.5 * wl).cos()];
                q = quat_normalize(quat_mul(dq, q));
            }
        }
        self.tet_rot[t] = q;
        let r = quat_to_mat(q);
        [sub(f[0], r[0]), sub(f[1], r[1]), sub(f[2], r[2])]
    }

    /// One stable Neo-Hookean or corotated tet (`tet_sweep.comp`).
    pub fn solve_tet(&mut self, t: usize, inv_h2: f32) {
        let s = &self.sys;
        let v = s.tets.vertices[t].map(|v| v as usize);
        let mut xs = v.map(|i| self.x[i]);
        let w = v.map(|i| s.inv_mass[i]);
        let d = &s.tets.data[4 * t..4 * t + 4];
        let b = [xyz(d[0]), xyz(d[1]), xyz(d[2])];
        let prm = d[3];
        let mut lam = self.tet_lambda[t];
        let ds = |xs: &[V3; 4]| [sub(xs[1], xs[0]), sub(xs[2], xs[0]), sub(xs[3], xs[0])];
        if self.settings.tet_solve == TetSolve::Coupled {
            let f = mat_mul(&ds(&xs), &b);
            let dv = self.deviatoric(&f, prm[3], t);
            let c = (dot(dv[0], dv[0]) + dot(dv[1], dv[1]) + dot(dv[2], dv[2])).sqrt();
            let mut gd = [[0.0f32; 3]; 3];
            if c > 1e-12 {
                gd = mat_mul_t(&dv.map(|col| scale(col, 1.0 / c)), &b);
            }
            let cof = [cross(f[1], f[2]), cross(f[2], f[0]), cross(f[0], f[1])];
            let ch = dot(f[0], cof[0]) - prm[2];
            let gh = mat_mul_t(&cof, &b);
            let neg_sum = |g: &[V3; 3]| scale(add(add(g[0], g[1]), g[2]), -1.0);
            let gd4 = [neg_sum(&gd), gd[0], gd[1], gd[2]];
            let gh4 = [neg_sum(&gh), gh[0], gh[1], gh[2]];
            let wdot = |a: &[V3; 4], b: &[V3; 4]| {
                w[0] * dot(a[0], b[0])
                    + w[1] * dot(a[1], b[1])
                    + w[2] * dot(a[2], b[2])
                    + w[3] * dot(a[3], b[3])
            };
            let kdd = wdot(&gd4, &gd4) + prm[0] * inv_h2;
            let khh = wdot(&gh4, &gh4) + prm[1] * inv_h2;
            let kdh = wdot(&gd4, &gh4);
            let r0 = -c - prm[0] * inv_h2 * lam[0];
            let r1 = -ch - prm[1] * inv_h2 * lam[1];
            let det = kdd * khh - kdh * kdh;
            if !(det > 0.0) {
                return;
            }
            let dd = (r0 * khh - kdh * r1) / det;
            let dh = (kdd * r1 - kdh * r0) / det;
            self.tet_lambda[t] = [lam[0] + dd, lam[1] + dh];
            for k in 0..4 {
                self.x[v[k]] = add(
                    xs[k],
                    scale(add(scale(gd4[k], dd), scale(gh4[k], dh)), w[k]),
                );
            }
            return;
        }
        let f = mat_mul(&ds(&xs), &b);
        let dv = self.deviatoric(&f, prm[3], t);
        let c = (dot(dv[0], dv[0]) + dot(dv[1], dv[1]) + dot(dv[2], dv[2])).sqrt();
        if c > 1e-12 {
            let g = mat_mul_t(&dv.map(|col| scale(col, 1.0 / c)), &b);
            Self::project(c, &g, w, prm[0], inv_h2, &mut lam[0], &mut xs);
        }
        let f = mat_mul(&ds(&xs), &b);
        let cof = [cross(f[1], f[2]), cross(f[2], f[0]), cross(f[0], f[1])];
        let ch = dot(f[0], cof[0]) - prm[2];
        let g = mat_mul_t(&cof, &b);
        Self::project(ch, &g, w, prm[1], inv_h2, &mut lam[1], &mut xs);
        self.tet_lambda[t] = lam;
        for k in 0..4 {
            self.x[v[k]] = xs[k];
        }
    }

    /// One distance constraint (`edge_sweep.comp`).
    pub fn solve_edge(&mut self, e: usize, inv_h2: f32) {
        let s = &self.sys;
        let [a, b, _, _] = s.edges.vertices[e].map(|v| v as usize);
        let d = s.edges.data[e];
        let (xa, xb) = (self.x[a], self.x[b]);
        let (wa, wb) = (s.inv_mass[a], s.inv_mass[b]);
        let dx = sub(xa, xb);
        let l = length(dx);
        let at = d[1] * inv_h2;
        let denom = wa + wb + at;
        if !(l > 0.0) || !(denom > 0.0) {
            return;
        }
        let n = scale(dx, 1.0 / l);
        let dl = (-(l - d[0]) - at * self.edge_lambda[e]) / denom;
        self.edge_lambda[e] += dl;
        self.x[a] = add(xa, scale(n, wa * dl));
        self.x[b] = sub(xb, scale(n, wb * dl));
    }

    /// One vector bending constraint (`bending_sweep.comp`).
    pub fn solve_bend(&mut self, b: usize, inv_h2: f32) {
        let s = &self.sys;
        let v = s.bends.vertices[b];
        let kw = s.bends.data[2 * b];
        let alpha = s.bends.data[2 * b + 1][0];
        let four = v[3] != u32::MAX;
        let corners = if four { 4 } else { 3 };
        let mut xs = [[0.0f32; 3]; 4];
        let mut w = [0.0f32; 4];
        for k in 0..corners {
            xs[k] = self.x[v[k] as usize];
            w[k] = s.inv_mass[v[k] as usize];
        }
        let c = add(
            add(
                add(scale(xs[0], kw[0]), scale(xs[1], kw[1])),
                scale(xs[2], kw[2]),
            ),
            scale(xs[3], kw[3]),
        );
        let wsum = w[0] * kw[0] * kw[0]
            + w[1] * kw[1] * kw[1]
            + w[2] * kw[2] * kw[2]
            + w[3] * kw[3] * kw[3];
        let at = alpha * inv_h2;
        let denom = wsum + at;
        if !(denom > 0.0) {
            return;
        }
        let lam = self.bend_lambda[b];
        let dl = scale(sub(scale(c, -1.0), scale(lam, at)), 1.0 / denom);
        self.bend_lambda[b] = add(lam, dl);
        for k in 0..corners {
            self.x[v[k] as usize] = add(xs[k], scale(dl, w[k] * kw[k]));
        }
    }

    /// One iteration: every color of tets, distance constraints and bends in turn.
    pub fn iterate(&mut self) {
        let h = self.settings.substep();
        let inv_h2 = (1.0 / (h * h)) as f32;
        let colors = |s: &ConstraintSet| s.colors.clone();
        for r in colors(&self.sys.tets) {
            for t in r {
                self.solve_tet(t as usize, inv_h2);
            }
        }
        for r in colors(&self.sys.edges) {
            for e in r {
                self.solve_edge(e as usize, inv_h2);
            }
        }
        for r in colors(&self.sys.bends) {
            for b in r {
                self.solve_bend(b as usize, inv_h2);
            }
        }
    }

    /// Collider projection with friction (`colliders.comp`).
    pub fn colliders(&mut self) {
        let h = self.h();
        let t = (self.clock + 1) as f32 * h;
        let s = &self.sys;
        for i in 0..self.x.len() {
            if !(s.inv_mass[i] > 0.0) {
                continue;
            }
            let mut xi = self.x[i];
            let xp = self.x_prev[i];
            for c in 0..s.num_colliders as usize {
                let (gap, n) = collider_gap(&s.colliders, c, xi, t);
                let clearance = s.collider_offsets.get(i).copied().unwrap_or(0.0);
                let d = gap - s.colliders[4 * c][3] - clearance;
                if d < COLLIDER_GUARD {
                    let depth = COLLIDER_GUARD - d;
                    xi = add(xi, scale(n, depth));
                    let mu = s.colliders[4 * c][1];
                    let dx = sub(sub(xi, xp), scale(xyz(s.colliders[4 * c + 3]), h));
                    let dt = sub(dx, scale(n, dot(dx, n)));
                    let lt = length(dt);
                    let limit = mu * depth;
                    if lt <= limit {
                        xi = sub(xi, dt);
                    } else {
                        xi = sub(xi, scale(dt, limit / lt));
                    }
                }
            }
            self.x[i] = xi;
        }
    }

    /// Velocity update and clock (`velocity.comp`).
    pub fn velocities(&mut self) {
        let inv_h = (1.0 / self.settings.substep()) as f32;
        for i in 0..self.x.len() {
            self.v[i] = scale(sub(self.x[i], self.x_prev[i]), inv_h);
        }
        self.clock += 1;
    }

    /// One substep.
    pub fn substep(&mut self) {
        self.predict();
        for _ in 0..self.settings.iterations {
            self.iterate();
            if self.sys.num_colliders > 0 {
                self.colliders();
            }
        }
        if self.sys.num_colliders > 0 {
            self.colliders();
        }
        self.velocities();
    }

    /// One time step (all substeps).
    pub fn step(&mut self) {
        for _ in 0..self.settings.substeps {
            self.substep();
        }
    }
}
