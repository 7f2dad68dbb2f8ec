//! PROX kernels (`kernels/prox/`, `supple::contact::prox`) against the plain-Rust reference
//! (`supple::cpu_reference::prox`) on lavapipe with the validation layer on: the proximal
//! operators against their closed forms, setup (b with restitution, r), the node → contact
//! incidence, the
//! gather, Jacobi and hybrid sweeps, the colored Gauss–Seidel sweep against serial Gauss–Seidel
//! in color-major order (per color and fused), the merit kernel's decisions, Jones–Plassmann on
//! 8-node contacts, proximity pairs as contacts, whole solves (energy, NCP residuals),
//! bit-identical reruns, dispatch counts and bad input. Scenes: PROX-S2 (a soft cube 1 mm above a
//! fixed box, RAINBOW's contact generation) and PROX-S3 (two copies side by side).
//! `scheme_measurements` prints sweeps, rollbacks, ms and dispatches per scheme (run with
//! `--nocapture`); the ignored `measure_scheme_ordering_on_s2` runs PROX-S2 for 1 s.

use supple::contact::prox::generation::{SdfBody, SdfContactGenerator, SdfParams};
use supple::contact::prox::{
    ColoringMethod, ProxError, ProxSettings, ProxSolveReport, ProxSolver, StepperBuffers,
    SweepDispatch,
};
use supple::cpu_reference::prox::graph::{jones_plassmann, random_vivace};
use supple::cpu_reference::prox::pairs::pairs_to_contacts;
use supple::cpu_reference::prox::solve::{sweep_jacobi, sweep_serial};
use supple::cpu_reference::prox::{
    gather, greedy_largest_first, initial_r, kinetic_energy, ncp_residuals, solve, ColorGroups,
    Contact, ContactGraph, Exit, ProxProblem, Scheme, SolverParams, NO_NODE,
};
use supple::math::Vec3;
use supple::mesh::procedural::{box_tets, CellSplit};
use supple::proximity::{ProximityMesh, ProximityOptions, ProximitySearch};
use supple::vk::{BufferUsage, CompileOptions, Context, GpuBuffer, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context};

/// A contact problem of a scene, rounded to the f32 values the GPU sees.
struct Scene {
    problem: ProxProblem,
    u_free: Vec<Vec3>,
}

fn round(x: f64) -> f64 {
    x as f32 as f64
}

fn round3(v: Vec3) -> Vec3 {
    v.map(round)
}

/// How the test scenes' contacts are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// RAINBOW's generation (envelope 0.1 m, 32 grid nodes per axis): 8-node contacts.
    Sdf,
    /// Proximity pairs closer than 4 mm between the bodies (brute force, the reference
    /// conversion): 4-node contacts, many more of them.
    Pairs,
}

/// Brute-force vertex–triangle and edge–edge pairs closer than `d` between different bodies, as
/// contacts (the reference conversion).
fn pair_contacts(x: &[Vec3], tris: &[[u32; 3]], body: &[u32], d: f64, mu: f64) -> Vec<Contact> {
    use supple::cpu_reference::prox::pairs::{pair_contact, PairKind};
    let edges = supple::cpu_reference::proximity::unique_edges(tris);
    let mut out = Vec::new();
    let mut keep = |c: Contact| {
        if c.nodes[0] != NO_NODE && c.gap < d {
            out.push(c);
        }
    };
    for v in 0..x.len() as u32 {
        for t in tris
            .iter()
            .filter(|t| body[t[0] as usize] != body[v as usize])
        {
            keep(pair_contact(
                PairKind::VertexTriangle,
                [v, t[0], t[1], t[2]],
                x,
                mu,
            ));
        }
    }
    for (i, a) in edges.iter().enumerate() {
        for b in edges[i + 1..]
            .iter()
            .filter(|b| body[b[0] as usize] != body[a[0] as usize])
        {
            keep(pair_contact(
                PairKind::EdgeEdge,
                [a[0], a[1], b[0], b[1]],
                x,
                mu,
            ));
        }
    }
    out
}

/// PROX-S2 (`copies = 1`): a soft cube `create_beam(4,4,4, 0.5,0.5,0.5)` 1 mm above a fixed box
/// `create_beam(6,3,6, 2.0,0.5,2.0)` (z up), ρ = 1000, μ = 0.5; PROX-S3 (`copies = 2`): two
/// copies side by side 0.1 m apart in one problem. Free velocities: gravity over 1 ms plus a
/// tangential swirl, so some contacts slide and some stick.
fn cube_on_box(copies: usize) -> Scene {
    cube_on_box_with(copies, Source::Sdf)
}

/// [`cube_on_box`] with contacts from `source`.
fn cube_on_box_with(copies: usize, source: Source) -> Scene {
    let params = SdfParams {
        resolution: 32,
        ..SdfParams::default()
    };
    let mut bodies = Vec::new();
    let mut inv_mass = Vec::new();
    let mut x: Vec<Vec3> = Vec::new();
    let (mut tris, mut body) = (Vec::new(), Vec::new());
    for c in 0..copies {
        let ox = c as f64 * 2.1;
        let slab = box_tets(
            [5, 5, 2],
            [0.4, 0.4, 0.25],
            [ox, 0.0, -0.5],
            CellSplit::Five,
        );
        let cube = box_tets(
            [3; 3],
            [0.5 / 3.0; 3],
            [ox + 0.75, 0.75, 0.001],
            CellSplit::Five,
        );
        for (m, fixed) in [(slab, true), (cube, false)] {
            let rest: Vec<Vec3> = m.positions.iter().map(|p| Vec3::from(*p)).collect();
            let mut mass = vec![0.0; rest.len()];
            for t in &m.tets {
                let p = t.map(|i| rest[i as usize]);
                let v = (p[1] - p[0])
                    .cross(&(p[2] - p[0]))
                    .dot(&(p[3] - p[0]))
                    .abs()
                    / 6.0;
                for &i in t {
                    mass[i as usize] += 1000.0 * v / 4.0;
                }
            }
            inv_mass.extend(
                mass.iter()
                    .map(|&m| if fixed { 0.0 } else { round(1.0 / m) }),
            );
            let b = SdfBody::new(x.len() as u32, rest.clone(), m.tets.clone(), &params)
                .expect("sdf body");
            let first = x.len() as u32;
            tris.extend(b.surface.iter().map(|t| t.map(|i| i + first)));
            body.extend(std::iter::repeat_n(bodies.len() as u32, rest.len()));
            x.extend(rest);
            bodies.push(b);
        }
    }
    let mut contacts = match source {
        Source::Sdf => SdfContactGenerator::new(bodies, params).generate(&x, 0.5).0,
        Source::Pairs => pair_contacts(&x, &tris, &body, 4e-3, 0.5),
    };
    for c in &mut contacts {
        c.weights = c.weights.map(round);
        c.normal = round3(c.normal);
        c.tangents = c.tangents.map(round3);
        c.gap = round(c.gap);
    }
    let u_free: Vec<Vec3> = (0..x.len())
        .map(|i| {
            if inv_mass[i] == 0.0 {
                Vec3::zeros()
            } else {
                let a = i as f64 * 0.7;
                round3(Vec3::new(0.02 * a.sin(), 0.02 * a.cos(), -9.81e-3))
            }
        })
        .collect();
    let problem = ProxProblem::new(contacts, inv_mass, &u_free, &u_free).expect("problem");
    Scene { problem, u_free }
}

/// The stepper's buffers of a scene.
struct Buffers {
    inv_mass: GpuBuffer<f32>,
    velocity: GpuBuffer<[f32; 4]>,
    start: GpuBuffer<[f32; 4]>,
}

fn vec4s(v: &[Vec3]) -> Vec<[f32; 4]> {
    v.iter()
        .map(|u| [u.x as f32, u.y as f32, u.z as f32, 0.0])
        .collect()
}

impl Buffers {
    fn new(ctx: &Context, s: &Scene) -> Buffers {
        let st = BufferUsage::STORAGE;
        let m: Vec<f32> = s.problem.inv_mass.iter().map(|&w| w as f32).collect();
        Buffers {
            inv_mass: ctx.upload_buffer("test.inv_mass", &m, st).expect("upload"),
            velocity: ctx
                .upload_buffer("test.velocity", &vec4s(&s.u_free), st)
                .expect("upload"),
            start: ctx
                .upload_buffer("test.start", &vec4s(&s.u_free), st)
                .expect("upload"),
        }
    }

    fn stepper(&self) -> StepperBuffers<'_> {
        StepperBuffers {
            inv_mass: &self.inv_mass,
            velocity: &self.velocity,
            start_velocity: &self.start,
        }
    }
}

fn settings(scheme: Scheme, dispatch: SweepDispatch) -> ProxSettings {
    ProxSettings {
        scheme,
        sweep_dispatch: dispatch,
        ..ProxSettings::default()
    }
}

/// Tight tolerances: converge to the fixed point (RAINBOW's absolute ones stop early, see the
/// `supple::contact::prox` module documentation).
fn tight(mut s: ProxSettings) -> ProxSettings {
    s.solver = SolverParams {
        absolute_tolerance: 1e-9,
        relative_tolerance: 1e-7,
        max_iterations: 2000,
        too_small_merit_change: 0.0,
        ..SolverParams::default()
    };
    s
}

fn run(ctx: &Context, g: Graph) {
    g.compile(ctx, CompileOptions::default())
        .expect("compile")
        .run()
        .expect("run");
}

/// Reference values in solver order → GPU layout.
fn to_solver_order(solver: &ProxSolver, values: &[[f64; 3]]) -> Vec<[f32; 4]> {
    solver
        .layout()
        .order
        .iter()
        .map(|&o| {
            let v = values[o as usize];
            [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]
        })
        .collect()
}

/// GPU λ (solver order) → original order.
fn from_solver_order(solver: &ProxSolver, lam: &[[f32; 4]]) -> Vec<[f64; 3]> {
    let mut out = vec![[0.0; 3]; solver.layout().contacts as usize];
    for (i, &o) in solver.layout().order.iter().enumerate() {
        out[o as usize] = [lam[i][0] as f64, lam[i][1] as f64, lam[i][2] as f64];
    }
    out
}

fn max_rel(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    let scale = a
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(1e-30);
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// Deterministic non-trivial impulses: two reference Gauss–Seidel sweeps from zero.
fn warm_lambda(p: &ProxProblem) -> Vec<[f64; 3]> {
    let r = initial_r(&p.contacts, &p.inv_mass, 0.1);
    let order: Vec<u32> = (0..p.len() as u32).collect();
    let mut l = vec![[0.0; 3]; p.len()];
    sweep_serial(p, &order, &r, 1.0, &mut l);
    sweep_serial(p, &order, &r, 1.0, &mut l);
    l
}

#[test]
fn operators_match_closed_forms() {
    let ctx = context(false);
    // (z, μ, radius) cases: inside, on, outside the disk, λn <= 0, μ = 0, Jacobi radius.
    let cases: Vec<([f64; 3], f64, f64)> = vec![
        ([2.0, 0.3, -0.4], 1.0, -1.0),
        ([2.0, 3.0, 4.0], 0.5, -1.0),
        ([2.0, 0.6, 0.8], 0.5, -1.0),
        ([-1.0, 3.0, 4.0], 0.5, -1.0),
        ([0.0, 1e-3, 0.0], 0.5, -1.0),
        ([1.0, 1.0, 1.0], 0.0, -1.0),
        ([2.0, 3.0, 4.0], 0.5, 4.0),
        ([2.0, 3.0, 4.0], 0.5, 0.0),
        ([1e-6, -2e-7, 5e-7], 0.9, -1.0),
        ([123.0, -400.0, 80.0], 0.3, -1.0),
    ];
    let zin: Vec<[f32; 4]> = cases
        .iter()
        .map(|(z, mu, _)| [z[0] as f32, z[1] as f32, z[2] as f32, *mu as f32])
        .collect();
    let radius: Vec<f32> = cases.iter().map(|c| c.2 as f32).collect();
    let st = BufferUsage::STORAGE;
    let bin = ctx.upload_buffer("test.zin", &zin, st).unwrap();
    let brad = ctx.upload_buffer("test.radius", &radius, st).unwrap();
    let bout: GpuBuffer<[f32; 4]> = ctx.create_buffer("test.zout", cases.len(), st).unwrap();
    let mut g = Graph::new("test.operators");
    let mut push = supple::contact::prox::ProxParams {
        k: cases.len() as u32,
        n: 0,
        max_iterations: 0,
        color: 0,
        abs_tol: 0.0,
        rel_tol: 0.0,
        nu_reduce: 0.0,
        nu_increase: 0.0,
        too_small: 0.0,
        r_factor: 0.0,
        sweeps: 0,
        mode: 0,
        seed: 0,
        pad: [0; 3],
    };
    push.k = cases.len() as u32;
    g.dispatch(
        supple::vk::Dispatch::new("test.operators", supple::vk::ids::PROX_OPERATORS, [1, 1, 1])
            .workgroup_size(64)
            .read(&bin)
            .read(&brad)
            .write(&bout)
            .push(&push),
    );
    run(&ctx, g);
    let out = bout.read().unwrap();
    for (i, (z, mu, r)) in cases.iter().enumerate() {
        // Closed forms: λn = max(0, zn); λf = zf inside the disk of radius μ ρ (ρ = the given
        // radius, or λn), else zf scaled onto it; 0 when ρ <= 0.
        let z32 = zin[i].map(|v| v as f64);
        let ln = z32[0].max(0.0);
        let rho = if *r < 0.0 { ln } else { *r };
        let norm = (z32[1] * z32[1] + z32[2] * z32[2]).sqrt();
        let radius = (*mu as f32 as f64) * rho;
        let f = if rho <= 0.0 {
            [0.0, 0.0]
        } else if norm <= radius {
            [z32[1], z32[2]]
        } else {
            [z32[1] * radius / norm, z32[2] * radius / norm]
        };
        let want = [ln, f[0], f[1]];
        for k in 0..3 {
            let tol = 1e-6 * want[k].abs().max(1e-6);
            assert!(
                (out[i][k] as f64 - want[k]).abs() <= tol,
                "case {i} {z:?}: GPU {:?} vs {want:?}",
                out[i]
            );
        }
        // The same as the f64 reference operator.
        let mu32 = *mu as f32 as f64;
        let r64 = supple::cpu_reference::prox::operators::prox_contact(
            [z32[0], z32[1], z32[2]],
            mu32,
            (*r >= 0.0).then_some(*r),
        );
        for k in 0..3 {
            assert!((r64[k] - want[k]).abs() <= 1e-12 * want[k].abs().max(1.0));
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn setup_incidence_and_gather_match_reference() {
    let ctx = context(false);
    let s = cube_on_box(1);
    assert!(s.problem.len() > 20, "S2 has {} contacts", s.problem.len());
    // Restitution on every third contact, start velocities differing from the free ones.
    let mut contacts = s.problem.contacts.clone();
    for c in contacts.iter_mut().step_by(3) {
        c.restitution = 0.5;
    }
    let u_start: Vec<Vec3> = s
        .u_free
        .iter()
        .map(|u| round3(u * 0.5 + Vec3::new(0.0, 0.0, -0.02)))
        .collect();
    let p = &ProxProblem::new(contacts, s.problem.inv_mass.clone(), &s.u_free, &u_start).unwrap();
    let bufs = Buffers::new(&ctx, &s);
    bufs.start.write(&vec4s(&u_start)).unwrap();
    let mut solver = ProxSolver::new(
        &ctx,
        settings(Scheme::ColoredGaussSeidel, SweepDispatch::PerColor),
        16,
        &bufs.stepper(),
    )
    .unwrap();
    solver.set_contacts(&p.contacts).unwrap();
    let mut g = Graph::new("test.prepare");
    solver.record_prepare(&mut g, 0);
    run(&ctx, g);
    // b and r.
    let r = initial_r(&p.contacts, &p.inv_mass, 0.1);
    let bias = solver.bias().read().unwrap();
    let scale = p.b.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for (i, &o) in solver.layout().order.iter().enumerate() {
        let (b, rr) = (p.b[o as usize], r[o as usize]);
        for k in 0..3 {
            assert!(
                (bias[i][k] as f64 - b[k]).abs() <= 1e-6 * scale,
                "b of contact {o}"
            );
        }
        assert!(
            ((bias[i][3] as f64 - rr) / rr).abs() < 1e-5,
            "r of contact {o}"
        );
    }
    // Incidence: every node's entries are its (contact, slot) uses, sorted by original index.
    let (off, ent) = solver.incidence();
    let (off, ent) = (off.read().unwrap(), ent.read().unwrap());
    let order = &solver.layout().order;
    let n = p.inv_mass.len();
    let mut want: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    for (k, c) in p.contacts.iter().enumerate() {
        for (j, &a) in c.nodes.iter().enumerate() {
            if a != NO_NODE {
                want[a as usize].push((k as u32, j as u32));
            }
        }
    }
    for a in 0..n {
        let got: Vec<(u32, u32)> = ent[off[a] as usize..off[a + 1] as usize]
            .iter()
            .map(|&e| (order[(e >> 3) as usize], e & 7))
            .collect();
        assert_eq!(got, want[a], "node {a}");
    }
    // Gather of non-trivial impulses.
    let lam = warm_lambda(p);
    solver
        .lambda()
        .write_at(0, &to_solver_order(&solver, &lam))
        .unwrap();
    let mut g = Graph::new("test.gather");
    solver.record_gather(&mut g, "gather", true);
    run(&ctx, g);
    let w = solver.wvel().read().unwrap();
    let w_ref = gather(&p.contacts, &p.inv_mass, &lam);
    let wscale = w_ref.iter().map(|v| v.amax()).fold(0.0, f64::max);
    assert!(wscale > 0.0);
    for a in 0..n {
        for k in 0..3 {
            assert!(
                (w[a][k] as f64 - w_ref[a][k]).abs() <= 1e-5 * wscale,
                "node {a}"
            );
        }
    }
    assert_no_validation_errors(&ctx);
}

/// Runs one sweep on the GPU from `lam` (original order) after a prepare, with the kernels
/// `record` adds; returns λ in original order.
fn gpu_sweep(
    ctx: &Context,
    solver: &ProxSolver,
    lam: &[[f64; 3]],
    record: impl FnOnce(&ProxSolver, &mut Graph),
) -> Vec<[f64; 3]> {
    let mut g = Graph::new("test.prepare");
    solver.record_prepare(&mut g, 256.min(solver.capacity() as u32));
    run(ctx, g);
    solver
        .lambda()
        .write_at(0, &to_solver_order(solver, lam))
        .unwrap();
    let mut g = Graph::new("test.sweep");
    record(solver, &mut g);
    run(ctx, g);
    from_solver_order(solver, &solver.lambda().read().unwrap())
}

#[test]
fn jacobi_and_hybrid_sweeps_match_reference() {
    let ctx = context(false);
    let s = cube_on_box(1);
    let p = &s.problem;
    let bufs = Buffers::new(&ctx, &s);
    let lam = warm_lambda(p);
    let r = initial_r(&p.contacts, &p.inv_mass, 0.1);
    for hybrid in [false, true] {
        let scheme = if hybrid {
            Scheme::Hybrid
        } else {
            Scheme::Jacobi
        };
        let mut solver = ProxSolver::new(
            &ctx,
            settings(scheme, SweepDispatch::PerColor),
            16,
            &bufs.stepper(),
        )
        .unwrap();
        solver.set_contacts(&p.contacts).unwrap();
        let got = gpu_sweep(&ctx, &solver, &lam, |s, g| {
            s.record_gather(g, "gather", false);
            s.record_jacobi(g, "jacobi", hybrid);
        });
        let mut want = lam.clone();
        sweep_jacobi(p, hybrid, &r, 1.0, &mut want);
        let d = max_rel(&want, &got);
        assert!(d < 1e-5, "hybrid {hybrid}: {d:e}");
        // The two schemes differ on this problem (the cone radius matters).
        let mut other = lam.clone();
        sweep_jacobi(p, !hybrid, &r, 1.0, &mut other);
        assert!(max_rel(&want, &other) > 1e-4);
    }
    assert_no_validation_errors(&ctx);
}

/// Spec §B9 #3: after one sweep, Gauss–Seidel by colors (per-color dispatches and fused)
/// equals serial Gauss–Seidel in color-major order to 1e-6 relative, on S2 and S3 with
/// RAINBOW's contacts and on S2 with proximity-pair contacts (the test that catches the
/// report's averaging, B5 #1).
#[test]
fn colored_sweep_is_serial_gauss_seidel_in_color_major_order() {
    let ctx = context(false);
    for (copies, source) in [(1, Source::Sdf), (2, Source::Sdf), (1, Source::Pairs)] {
        let s = cube_on_box_with(copies, source);
        let p = &s.problem;
        let bufs = Buffers::new(&ctx, &s);
        let lam = warm_lambda(p);
        let r = initial_r(&p.contacts, &p.inv_mass, 0.1);
        for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
            let mut solver = ProxSolver::new(
                &ctx,
                settings(Scheme::ColoredGaussSeidel, dispatch),
                16,
                &bufs.stepper(),
            )
            .unwrap();
            let layout = solver.set_contacts(&p.contacts).unwrap().clone();
            assert!(layout.colors > 1);
            let got = gpu_sweep(&ctx, &solver, &lam, |s, g| {
                if s.fused() {
                    s.record_fused(g, "fused", Scheme::ColoredGaussSeidel, 1);
                } else {
                    s.record_gather(g, "gather", false);
                    for c in 0..layout.colors {
                        s.record_color(g, &format!("color[{c}]"), c);
                    }
                }
            });
            let mut want = lam.clone();
            sweep_serial(p, &layout.order, &r, 1.0, &mut want);
            let d = max_rel(&want, &got);
            assert!(d < 1e-6, "S{} {source:?} {dispatch:?}: {d:e}", copies + 1);
            // Serial GS in index order is a different sweep: the comparison has teeth.
            let mut index_order = lam.clone();
            let order: Vec<u32> = (0..p.len() as u32).collect();
            sweep_serial(p, &order, &r, 1.0, &mut index_order);
            assert!(max_rel(&want, &index_order) > 1e-4);
        }
    }
    assert_no_validation_errors(&ctx);
}

/// RAINBOW's decision logic replayed in f32 on the GPU's merit history (what the merit kernel
/// must have done): (rollbacks, r increases, exit, r scale).
fn replay(merits: &[f32], p: &SolverParams) -> (u32, u32, Exit, f32) {
    let (abs, rel, small) = (
        p.absolute_tolerance as f32,
        p.relative_tolerance as f32,
        p.too_small_merit_change as f32,
    );
    let (mut last, mut rs, mut rollbacks, mut grows) = (f32::INFINITY, 1.0f32, 0, 0);
    for (i, &m) in merits.iter().enumerate() {
        let done = i + 1 == merits.len();
        if m.is_nan() || m.is_infinite() || (m >= abs && (m - last).abs() >= rel * last && m > last)
        {
            rs *= p.nu_reduce as f32;
            rollbacks += 1;
        } else if m < abs {
            assert!(done, "converged at sweep {i} but went on");
            return (rollbacks, grows, Exit::Absolute, rs);
        } else if (m - last).abs() < rel * last {
            assert!(done, "converged at sweep {i} but went on");
            return (rollbacks, grows, Exit::Relative, rs);
        } else {
            if last - m < small {
                rs *= p.nu_increase as f32;
                grows += 1;
            }
            last = m;
        }
    }
    (rollbacks, grows, Exit::MaxIterations, rs)
}

fn check_report_against_replay(solver: &ProxSolver, rep: &ProxSolveReport, label: &str) {
    let merits = solver.merit_history().unwrap();
    assert_eq!(merits.len() as u32, rep.sweeps, "{label}");
    let (rollbacks, grows, exit, rs) = replay(&merits, &solver.settings().solver);
    assert_eq!(
        (rep.rollbacks, rep.r_increases, rep.exit),
        (rollbacks, grows, exit),
        "{label}: merits {merits:?}"
    );
    assert_eq!(rep.r_scale.to_bits(), rs.to_bits(), "{label}");
}

/// Whole solves on S2 for every scheme (per kernel and fused): the merit kernel takes RAINBOW's
/// decisions, the impulses never add kinetic energy (ε = 0), the velocities are u′ + W Jᵀ λ,
/// the device's residual is the reference's; dispatch counts are as recorded. (On S2 RAINBOW's
/// rollback rule shrinks r until the iteration stalls short of the fixed point, so f32 and f64
/// may take different decisions and stop at different iterates; the comparison with the
/// reference solution and the NCP bounds are on a small, well-posed problem below.)
#[test]
fn whole_solves_match_reference() {
    let ctx = context(false);
    let s = cube_on_box(1);
    let p = &s.problem;
    let bufs = Buffers::new(&ctx, &s);
    let before = kinetic_energy(&p.inv_mass, &s.u_free);
    for scheme in Scheme::ALL {
        for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
            let label = format!("{scheme:?} {dispatch:?}");
            bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
            let mut solver =
                ProxSolver::new(&ctx, tight(settings(scheme, dispatch)), 16, &bufs.stepper())
                    .unwrap();
            solver.set_contacts(&p.contacts).unwrap();
            let rep = solver.solve().unwrap();
            check_report_against_replay(&solver, &rep, &label);
            assert!(rep.exit != Exit::MaxIterations, "{label}: {rep:?}");
            let got: Vec<[f64; 3]> = solver
                .impulses()
                .unwrap()
                .iter()
                .map(|l| l.map(|v| v as f64))
                .collect();
            // The device's natural-map residual is the reference's of the same impulses.
            let res = ncp_residuals(p, &got).natural_map;
            assert!(
                (rep.residual as f64 - res).abs() <= 1e-3 * res.max(1e-9),
                "{label}: residual {} vs {res}",
                rep.residual
            );
            // Velocities after the impulses: u = u′ + W Jᵀ λ, never more kinetic energy.
            let u: Vec<Vec3> = bufs
                .velocity
                .read()
                .unwrap()
                .iter()
                .map(|v| Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64))
                .collect();
            let after = kinetic_energy(&p.inv_mass, &u);
            assert!(after <= before + 1e-9, "{label}: {before} -> {after} J");
            let u_ref = p.apply(&s.u_free, &got);
            for (a, b) in u.iter().zip(&u_ref) {
                assert!((a - b).amax() < 1e-5, "{label}: velocity {a:?} vs {b:?}");
            }
            // Dispatch counts: what was recorded, per sweep as documented.
            let c = rep.dispatches;
            let per_sweep = match (scheme, solver.fused()) {
                (_, true) | (Scheme::GaussSeidel, _) => 1,
                (Scheme::ColoredGaussSeidel, false) => solver.dispatch_counts().per_sweep,
                _ => 3,
            };
            assert_eq!(c.per_sweep, per_sweep, "{label}");
            if scheme == Scheme::ColoredGaussSeidel && !solver.fused() {
                assert!(per_sweep >= rep.colors + 2);
            }
            let batch = solver.dispatch_counts().sweeps;
            assert_eq!(c.sweeps, batch * rep.batches, "{label}");
            assert!(rep.batches * solver.settings().sweeps_per_batch >= rep.sweeps);
        }
    }
    assert_no_validation_errors(&ctx);
}

/// With r ten times RAINBOW's, Jacobi diverges at first: the merit kernel rolls back, shrinks r
/// and still converges within 200 sweeps (spec §B9 #7).
#[test]
fn rollbacks_on_the_device() {
    let ctx = context(false);
    let s = stack_scene(7);
    let bufs = Buffers::new(&ctx, &s);
    let mut st = settings(Scheme::Jacobi, SweepDispatch::PerColor);
    st.solver.r_factor = 1.0;
    let mut solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
    solver.set_contacts(&s.problem.contacts).unwrap();
    let rep = solver.solve().unwrap();
    check_report_against_replay(&solver, &rep, "jacobi r x10");
    assert!(
        rep.rollbacks > 0 && rep.exit != Exit::MaxIterations,
        "{rep:?}"
    );
    assert!(rep.sweeps <= 200);
    assert_no_validation_errors(&ctx);
}

/// Jones–Plassmann on 8-node contacts: the GPU's colors equal the reference's for the same
/// seed, and every coloring (greedy, random, JP; graph over all nodes or the free ones) is
/// valid on S2 and S3, with RAINBOW's and with proximity-pair contacts (spec §B9 #4). Prints
/// the color counts.
#[test]
fn colorings_are_valid_and_jones_plassmann_matches_reference() {
    let ctx = context(false);
    for (copies, source) in [
        (1, Source::Sdf),
        (2, Source::Sdf),
        (1, Source::Pairs),
        (2, Source::Pairs),
    ] {
        let s = cube_on_box_with(copies, source);
        let p = &s.problem;
        let n = p.inv_mass.len();
        let nodes: Vec<[u32; 8]> = p.contacts.iter().map(|c| c.nodes).collect();
        let bufs = Buffers::new(&ctx, &s);
        let free: Vec<bool> = p.inv_mass.iter().map(|&w| w > 0.0).collect();
        for fixed_in_graph in [true, false] {
            let mask = (!fixed_in_graph).then_some(free.as_slice());
            let graph = ContactGraph::new(&nodes, n, mask);
            let greedy = greedy_largest_first(&graph);
            let random = random_vivace(&graph, 0x5eed_0001, 200);
            assert_eq!(graph.check(&greedy.colors).unwrap(), greedy.num_colors);
            assert_eq!(graph.check(&random.colors).unwrap(), random.num_colors);
            let mut st = settings(Scheme::ColoredGaussSeidel, SweepDispatch::PerColor);
            st.coloring = ColoringMethod::JonesPlassmann;
            st.graph_fixed_nodes = fixed_in_graph;
            let mut solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
            let layout = solver.set_contacts(&p.contacts).unwrap().clone();
            let jp_gpu = solver.device_colors().unwrap().read().unwrap()[..p.len()].to_vec();
            let jp_ref = jones_plassmann(&nodes, n, mask, st.random_seed);
            assert_eq!(
                jp_gpu,
                jp_ref.colors,
                "S{} {source:?} JP colors",
                copies + 1
            );
            assert_eq!(graph.check(&jp_gpu).unwrap(), layout.colors);
            // Solver order is color-major: each color's contacts share no graph node.
            for c in 0..layout.colors as usize {
                let range = layout.color_offsets[c] as usize..layout.color_offsets[c + 1] as usize;
                for &k in &layout.order[range] {
                    assert_eq!(jp_gpu[k as usize], c as u32);
                }
            }
            println!(
                "S{} {source:?} ({} contacts, fixed nodes in graph: {fixed_in_graph}): greedy {} colors, random {}, Jones–Plassmann {} ({} rounds)",
                copies + 1,
                p.len(),
                greedy.num_colors,
                random.num_colors,
                layout.colors,
                jp_ref.rounds
            );
            // The whole solve with the GPU coloring converges.
            bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
            let rep = solver.solve().unwrap();
            assert!(rep.sweeps > 0 && rep.colors == layout.colors);
        }
    }
    assert_no_validation_errors(&ctx);
}

/// Supple's proximity pairs as contacts on the GPU equal the reference conversion of the same
/// pairs (nodes exactly; weights, normal and gap to f32 accuracy), and solve.
#[test]
fn pair_contacts_match_reference() {
    let ctx = context(false);
    // A cube 0.5 mm above a box: vertex–triangle and edge–edge pairs within 2 mm.
    let slab = box_tets(
        [4, 4, 1],
        [0.1, 0.1, 0.1],
        [0.0, 0.0, -0.1],
        CellSplit::Five,
    );
    let cube = box_tets(
        [2, 2, 2],
        [0.1, 0.1, 0.1],
        [0.1, 0.1, 0.0005],
        CellSplit::Five,
    );
    let mut x: Vec<[f64; 3]> = slab.positions.clone();
    x.extend(&cube.positions);
    let ns = slab.positions.len() as u32;
    let mut tris = slab.boundary_triangles();
    tris.extend(cube.boundary_triangles().iter().map(|t| t.map(|i| i + ns)));
    let body: Vec<u32> = (0..x.len() as u32).map(|i| u32::from(i >= ns)).collect();
    let mesh = ProximityMesh::new(tris, body).unwrap();
    let mut opts = ProximityOptions::new(2e-3);
    opts.filter.within_body = false;
    let mut search = ProximitySearch::new(&ctx, mesh.clone(), &x, opts).unwrap();
    search.run().unwrap();
    let pairs = search.read_pairs().unwrap();
    assert!(!pairs.vertex_triangle.is_empty() && !pairs.edge_edge.is_empty());
    let xv: Vec<Vec3> = x.iter().map(|p| Vec3::from(*p)).collect();
    let want = pairs_to_contacts(&pairs, &mesh, &xv, 0.4);
    let inv_mass: Vec<f64> = (0..x.len())
        .map(|i| if (i as u32) < ns { 0.0 } else { 2.0 })
        .collect();
    let u_free: Vec<Vec3> = inv_mass
        .iter()
        .map(|&w| {
            if w > 0.0 {
                Vec3::new(0.01, 0.0, -0.01)
            } else {
                Vec3::zeros()
            }
        })
        .collect();
    let s = Scene {
        problem: ProxProblem::new(want.clone(), inv_mass, &u_free, &u_free).unwrap(),
        u_free,
    };
    let bufs = Buffers::new(&ctx, &s);
    for scheme in [Scheme::Jacobi, Scheme::ColoredGaussSeidel] {
        let mut solver = ProxSolver::new(
            &ctx,
            tight(settings(scheme, SweepDispatch::Auto)),
            16,
            &bufs.stepper(),
        )
        .unwrap();
        let mut st = *solver.settings();
        st.friction = 0.4;
        solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
        let layout = solver.contacts_from_pairs(&search).unwrap().clone();
        assert_eq!(layout.contacts as usize, want.len());
        let cb = solver.contact_buffers();
        let (nodes, weights, frame, orig) = (
            cb.nodes.read().unwrap(),
            cb.weights.read().unwrap(),
            cb.frame.read().unwrap(),
            cb.orig.read().unwrap(),
        );
        for i in 0..want.len() {
            let c = &want[orig[i] as usize];
            for j in 0..8 {
                assert_eq!(
                    nodes[2 * i + j / 4][j % 4],
                    c.nodes[j],
                    "contact {}",
                    orig[i]
                );
                assert!((weights[2 * i + j / 4][j % 4] as f64 - c.weights[j]).abs() < 1e-4);
            }
            for (r, e) in c.frame().iter().enumerate() {
                for d in 0..3 {
                    assert!(
                        (frame[3 * i + r][d] as f64 - e[d]).abs() < 1e-4,
                        "frame of {}",
                        orig[i]
                    );
                }
            }
            assert!((frame[3 * i][3] - 0.4).abs() < 1e-7);
            assert!((frame[3 * i + 2][3] as f64 - c.gap).abs() < 1e-6);
        }
        bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
        let rep = solver.solve().unwrap();
        assert!(rep.exit != Exit::MaxIterations, "{rep:?}");
        assert!(rep.sweeps > 0 && rep.contacts as usize == want.len());
        let u: Vec<Vec3> = bufs
            .velocity
            .read()
            .unwrap()
            .iter()
            .map(|v| Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64))
            .collect();
        assert!(
            kinetic_energy(&s.problem.inv_mass, &u)
                <= kinetic_energy(&s.problem.inv_mass, &s.u_free) + 1e-9
        );
    }
    assert_no_validation_errors(&ctx);
}

/// Every scheme, dispatch and coloring gives bit-identical impulses and velocities when run
/// again from scratch (spec §B9 #11; the random coloring has a fixed seed).
#[test]
fn reruns_are_bit_identical() {
    let ctx = context(false);
    let s = cube_on_box(1);
    let bufs = Buffers::new(&ctx, &s);
    let mut combos = Vec::new();
    for scheme in Scheme::ALL {
        for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
            combos.push((scheme, dispatch, ColoringMethod::Greedy));
        }
    }
    for coloring in [ColoringMethod::Random, ColoringMethod::JonesPlassmann] {
        combos.push((
            Scheme::ColoredGaussSeidel,
            SweepDispatch::PerColor,
            coloring,
        ));
    }
    for (scheme, dispatch, coloring) in combos {
        let mut results = Vec::new();
        for _ in 0..2 {
            bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
            let mut st = settings(scheme, dispatch);
            st.coloring = coloring;
            let mut solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
            solver.set_contacts(&s.problem.contacts).unwrap();
            let rep = solver.solve().unwrap();
            let lam: Vec<u32> = solver
                .impulses()
                .unwrap()
                .iter()
                .flatten()
                .map(|v| v.to_bits())
                .collect();
            let u: Vec<u32> = bufs
                .velocity
                .read()
                .unwrap()
                .iter()
                .flatten()
                .map(|v| v.to_bits())
                .collect();
            results.push((lam, u, rep.sweeps, rep.rollbacks));
        }
        assert!(
            results[0] == results[1],
            "{scheme:?} {dispatch:?} {coloring:?}: reruns differ"
        );
    }
    assert_no_validation_errors(&ctx);
}

/// Bad input is refused with an error naming what is wrong; nothing panics.
#[test]
fn bad_input_is_refused() {
    let ctx = context(false);
    let s = cube_on_box(1);
    let bufs = Buffers::new(&ctx, &s);
    let mut st = settings(Scheme::Jacobi, SweepDispatch::Auto);
    st.friction = -1.0;
    match ProxSolver::new(&ctx, st, 16, &bufs.stepper()) {
        Err(ProxError::Settings(e)) => assert_eq!(e.field, "prox.friction"),
        other => panic!("negative friction accepted: {:?}", other.err()),
    }
    st = settings(Scheme::Jacobi, SweepDispatch::Auto);
    st.solver.max_iterations = 0;
    let e = ProxSolver::new(&ctx, st, 16, &bufs.stepper())
        .err()
        .unwrap();
    assert!(e.to_string().contains("prox.max_iterations"), "{e}");
    let mut solver = ProxSolver::new(
        &ctx,
        settings(Scheme::Jacobi, SweepDispatch::Auto),
        16,
        &bufs.stepper(),
    )
    .unwrap();
    let n = s.problem.inv_mass.len() as u32;
    let mut bad: Vec<Contact> = s.problem.contacts[..3].to_vec();
    bad[2].nodes[5] = n + 7;
    let e = solver.set_contacts(&bad).err().unwrap();
    assert!(
        e.to_string().contains("contact 2") && e.to_string().contains("nodes[5]"),
        "{e}"
    );
    bad[2] = s.problem.contacts[2];
    bad[1].weights[0] = f64::NAN;
    let e = solver.set_contacts(&bad).err().unwrap();
    assert!(
        e.to_string().contains("contact 1") && e.to_string().contains("weights[0]"),
        "{e}"
    );
    bad[1] = s.problem.contacts[1];
    bad[0].restitution = 2.0;
    assert!(solver
        .set_contacts(&bad)
        .err()
        .unwrap()
        .to_string()
        .contains("restitution"));
    // Inverse masses that are not finite.
    let st_buf = BufferUsage::STORAGE;
    let m = ctx
        .upload_buffer("test.bad_mass", &[1.0f32, f32::NAN], st_buf)
        .unwrap();
    let v: GpuBuffer<[f32; 4]> = ctx.create_buffer("test.v", 2, st_buf).unwrap();
    let b = StepperBuffers {
        inv_mass: &m,
        velocity: &v,
        start_velocity: &v,
    };
    let e = ProxSolver::new(&ctx, ProxSettings::default(), 4, &b)
        .err()
        .unwrap();
    assert!(e.to_string().contains("node 1"), "{e}");
    // No contacts: a trivial solve.
    solver.set_contacts(&[]).unwrap();
    let rep = solver.solve().unwrap();
    assert_eq!(rep.contacts, 0);
    assert_no_validation_errors(&ctx);
}

/// Measurements on S2 and S3 (printed, not asserted beyond convergence): sweeps, rollbacks,
/// wall ms and dispatches per solve for every scheme and dispatch mode, with RAINBOW's default
/// tolerances and with tight ones.
#[test]
fn scheme_measurements() {
    let ctx = context(false);
    for (copies, source) in [(1, Source::Sdf), (2, Source::Sdf), (1, Source::Pairs)] {
        let s = cube_on_box_with(copies, source);
        let bufs = Buffers::new(&ctx, &s);
        for tolerances in ["rainbow", "tight"] {
            for scheme in Scheme::ALL {
                for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
                    let mut st = settings(scheme, dispatch);
                    if tolerances == "tight" {
                        st = tight(st);
                    }
                    let mut solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
                    solver.set_contacts(&s.problem.contacts).unwrap();
                    let mut ms = Vec::new();
                    let mut rep = None;
                    for _ in 0..3 {
                        bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
                        let r = solver.solve().unwrap();
                        ms.push(r.ms);
                        rep = Some(r);
                    }
                    let r = rep.unwrap();
                    ms.sort_by(f64::total_cmp);
                    println!(
                        "{{\"scene\": \"S{}\", \"contacts_from\": \"{source:?}\", \"tolerances\": \"{tolerances}\", \"scheme\": \"{}\", \"dispatch\": \"{}\", \"contacts\": {}, \"colors\": {}, \"sweeps\": {}, \"rollbacks\": {}, \"exit\": \"{:?}\", \"residual\": {:e}, \"ms_median\": {:.3}, \"dispatches\": {}, \"dispatches_per_sweep\": {}, \"batches\": {}}}",
                        copies + 1,
                        scheme.name(),
                        if solver.fused() { "fused" } else { "per-color" },
                        r.contacts,
                        r.colors,
                        r.sweeps,
                        r.rollbacks,
                        r.exit,
                        r.residual,
                        ms[1],
                        r.dispatches.total(),
                        r.dispatches.per_sweep,
                        r.batches
                    );
                    assert!(r.sweeps >= 1);
                }
            }
        }
    }
    assert_no_validation_errors(&ctx);
}

/// splitmix64 numbers in [lo, hi).
struct Rng(u64);

impl Rng {
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// A small stack: 3 × 2 × 2 free nodes on a fixed floor triangle, floor contacts, vertical and
/// tilted side node–node contacts, μ in [0.1, 1], gravity over 1 ms plus tangential velocities
/// (sliding and sticking contacts). Values rounded to f32.
fn stack_scene(seed: u64) -> Scene {
    let mut rng = Rng(seed);
    let (nx, ny, nz) = (3, 2, 2);
    let idx = |x: usize, y: usize, z: usize| (3 + x + nx * (y + ny * z)) as u32;
    let mut inv_mass = vec![0.0; 3];
    for _ in 0..nx * ny * nz {
        inv_mass.push(round(rng.range(0.5, 2.0)));
    }
    let mut contacts = Vec::new();
    let mut push = |nodes: &[u32], w: &[f64], n: Vec3, rng: &mut Rng| {
        let mut c = Contact::new(nodes, w, n, round(rng.range(0.1, 1.0)), 0.0);
        c.weights = c.weights.map(round);
        c.normal = round3(c.normal);
        c.tangents = c.tangents.map(round3);
        contacts.push(c);
    };
    for y in 0..ny {
        for x in 0..nx {
            let (b1, b2) = ((0.1 * x as f64 + 1.0) / 4.0, (0.1 * y as f64 + 1.0) / 4.0);
            push(
                &[idx(x, y, 0), 0, 1, 2],
                &[1.0, b1 + b2 - 1.0, -b1, -b2],
                Vec3::z(),
                &mut rng,
            );
            let n = Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), 1.0);
            push(&[idx(x, y, 0), idx(x, y, 1)], &[-1.0, 1.0], n, &mut rng);
        }
    }
    for z in 0..nz {
        for y in 0..ny {
            for x in 1..nx {
                let n = Vec3::new(1.0, 0.0, rng.range(-0.3, 0.3));
                push(&[idx(x - 1, y, z), idx(x, y, z)], &[-1.0, 1.0], n, &mut rng);
            }
        }
    }
    let u_free: Vec<Vec3> = inv_mass
        .iter()
        .map(|&w| {
            if w == 0.0 {
                Vec3::zeros()
            } else {
                let s = if rng.range(0.0, 1.0) < 0.5 {
                    0.05
                } else {
                    0.002
                };
                round3(Vec3::new(
                    rng.range(-s, s),
                    rng.range(-s, s),
                    -9.81e-3 - rng.range(0.0, 0.01),
                ))
            }
        })
        .collect();
    let problem = ProxProblem::new(contacts, inv_mass, &u_free, &u_free).expect("problem");
    Scene { problem, u_free }
}

/// Spec §B9 #5 on the GPU: after every scheme's solve (per kernel and fused, tight tolerances)
/// the velocities equal the reference solution's, the NCP residuals are within bounds (Jacobi's
/// cone: within its last merit, see below), and the impulses add no kinetic energy (§B9 #6).
#[test]
fn ncp_bounds_and_energy_on_a_small_problem() {
    let ctx = context(false);
    for seed in [200, 201] {
        let s = stack_scene(seed);
        let p = &s.problem;
        let bufs = Buffers::new(&ctx, &s);
        let before = kinetic_energy(&p.inv_mass, &s.u_free);
        let groups = {
            let g = ContactGraph::of_contacts(&p.contacts, p.inv_mass.len(), None);
            ColorGroups::new(&greedy_largest_first(&g))
        };
        for scheme in Scheme::ALL {
            let mut ref_params = tight(settings(scheme, SweepDispatch::Auto)).solver;
            ref_params.max_iterations = 20_000;
            let (want, _) = solve(p, scheme, Some(&groups), &ref_params, None).unwrap();
            for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
                let label = format!("seed {seed} {scheme:?} {dispatch:?}");
                bufs.velocity.write(&vec4s(&s.u_free)).unwrap();
                let mut st = tight(settings(scheme, dispatch));
                st.solver.max_iterations = 20_000;
                let mut solver = ProxSolver::new(&ctx, st, 16, &bufs.stepper()).unwrap();
                solver.set_contacts(&p.contacts).unwrap();
                let rep = solver.solve().unwrap();
                check_report_against_replay(&solver, &rep, &label);
                let got: Vec<[f64; 3]> = solver
                    .impulses()
                    .unwrap()
                    .iter()
                    .map(|l| l.map(|v| v as f64))
                    .collect();
                let mut res = ncp_residuals(p, &got);
                if scheme == Scheme::Jacobi {
                    // Jacobi projects the friction onto the cone of the previous normal impulse,
                    // which differs from the returned one by at most the last merit.
                    for (c, l) in p.contacts.iter().zip(&got) {
                        let excess =
                            ((l[1] * l[1] + l[2] * l[2]).sqrt() - c.friction * l[0]).max(0.0);
                        assert!(
                            excess <= c.friction * rep.merit as f64 * 1.001 + 1e-12,
                            "{label}: cone excess {excess:e} with merit {:e}",
                            rep.merit
                        );
                    }
                    res.cone = 0.0;
                }
                res.check()
                    .unwrap_or_else(|e| panic!("{label}: {e}; {res:?} {rep:?}"));
                assert!(res.sliding > 0 && res.sticking > 0, "{label}: {res:?}");
                let u: Vec<Vec3> = bufs
                    .velocity
                    .read()
                    .unwrap()
                    .iter()
                    .map(|v| Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64))
                    .collect();
                // The velocities equal the reference solution's up to the NCP bounds both meet
                // (a sticking contact may slip 1e-4 m/s; the impulses need not be equal: the
                // stack has more contact rows than degrees of freedom).
                let u_ref = p.apply(&s.u_free, &want);
                let du = u
                    .iter()
                    .zip(&u_ref)
                    .map(|(a, b)| (a - b).amax())
                    .fold(0.0, f64::max);
                assert!(
                    du < 2.0 * supple::cpu_reference::prox::ncp::SLIDING_SPEED,
                    "{label}: velocities differ from the reference by {du:e} m/s"
                );
                let after = kinetic_energy(&p.inv_mass, &u);
                assert!(after <= before + 1e-9, "{label}: {before} -> {after} J");
            }
        }
    }
    assert_no_validation_errors(&ctx);
}

/// PROX-S2 over 1 s (spec §B8, §B9 #8): the reference semi-implicit stepper (SVK, E = 1e6 Pa,
/// ν = 0.3, ρ = 1000, μ = 0.5, h = 1 ms, RAINBOW's tolerances) advances with its own
/// Gauss–Seidel solve; every step's contact problem is also solved on the GPU with every scheme,
/// per kernel and fused, with RAINBOW's tolerances and with them scaled to the scene's impulses.
/// Prints per scheme the median sweeps, mean ms and dispatches per solve, rollbacks, the median
/// residual, and the generation's cost. Contacts from RAINBOW's generation (64 grid nodes per
/// axis, envelope 0.1 m), or with `PROX_MEASURE_CONTACTS=pairs` from proximity pairs closer than
/// 4 mm (brute force). A measurement (minutes on lavapipe), run with
/// `cargo test --release -p supple-gpu-tests --test prox_kernels -- --ignored --nocapture`.
#[test]
#[ignore = "measurement, minutes on lavapipe: PROX-S2 scheme ordering over 1 s"]
fn measure_scheme_ordering_on_s2() {
    use std::time::Instant;
    use supple::cpu_reference::fem::{lame, Material};
    use supple::cpu_reference::prox::stepper::{ContactSource, CpuStepper, StepperBody};
    let ctx = context(false);
    let (lm, ll) = lame(1e6, 0.3);
    let material = Material::StVenantKirchhoff { mu: lm, lambda: ll };
    let params = SdfParams::default();
    let slab = box_tets(
        [5, 5, 2],
        [0.4, 0.4, 0.25],
        [0.0, 0.0, -0.5],
        CellSplit::Five,
    );
    let cube = box_tets([3; 3], [0.5 / 3.0; 3], [0.75, 0.75, 0.001], CellSplit::Five);
    let to = |m: &supple::mesh::TetMesh| {
        m.positions
            .iter()
            .map(|p| Vec3::from(*p))
            .collect::<Vec<_>>()
    };
    let t = Instant::now();
    let a = SdfBody::new(0, to(&slab), slab.tets.clone(), &params).unwrap();
    let b = SdfBody::new(
        slab.positions.len() as u32,
        to(&cube),
        cube.tets.clone(),
        &params,
    )
    .unwrap();
    let grid_ms = t.elapsed().as_secs_f64() * 1e3;
    let bodies = [
        StepperBody {
            rest: to(&slab),
            tets: slab.tets.clone(),
            material,
            density: 1000.0,
            fixed: vec![true; slab.positions.len()],
        },
        StepperBody {
            rest: to(&cube),
            tets: cube.tets.clone(),
            material,
            density: 1000.0,
            fixed: vec![false; cube.positions.len()],
        },
    ];
    let from_pairs = std::env::var("PROX_MEASURE_CONTACTS").is_ok_and(|v| v == "pairs");
    let source = if from_pairs {
        let ns = slab.positions.len() as u32;
        let mut triangles = a.surface.clone();
        triangles.extend(b.surface.iter().map(|t| t.map(|i| i + ns)));
        let body = (0..ns + cube.positions.len() as u32)
            .map(|i| u32::from(i >= ns))
            .collect();
        let edges = supple::cpu_reference::proximity::unique_edges(&triangles);
        ContactSource::Pairs {
            triangles,
            edges,
            body,
            distance: 4e-3,
        }
    } else {
        ContactSource::Sdf(SdfContactGenerator::new(vec![a, b], params))
    };
    let mut st = CpuStepper::new(&bodies, Vec3::new(0.0, 0.0, -9.81), 1e-3, source).unwrap();
    st.friction = 0.5;
    let n = st.x.len();
    let stub = Scene {
        problem: ProxProblem::new(
            Vec::new(),
            st.inv_mass.iter().map(|&w| round(w)).collect(),
            &st.u,
            &st.u,
        )
        .unwrap(),
        u_free: st.u.clone(),
    };
    let bufs = Buffers::new(&ctx, &stub);
    // RAINBOW's tolerances, and the same scaled to this scene's impulses (~5e-3 N·s per
    // contact, 1e-3 of RAINBOW's absolute values): absolute 1e-6 N·s, too-small change 1e-5.
    let mut solvers = Vec::new();
    for tolerances in ["rainbow", "scaled"] {
        for scheme in Scheme::ALL {
            for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
                let mut s = settings(scheme, dispatch);
                if tolerances == "scaled" {
                    s.solver.absolute_tolerance = 1e-6;
                    s.solver.too_small_merit_change = 1e-5;
                }
                let solver = ProxSolver::new(&ctx, s, 512, &bufs.stepper()).unwrap();
                solvers.push((
                    tolerances,
                    scheme,
                    solver,
                    Vec::<(u32, f64, u32, u32, f32)>::new(),
                ));
            }
        }
    }
    let (mut gen_ms, mut contacts, mut colors) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..1000 {
        let u_free = st.free_velocities();
        let t = Instant::now();
        let p = st.problem(&u_free).unwrap();
        gen_ms.push(t.elapsed().as_secs_f64() * 1e3);
        contacts.push(p.len() as f64);
        for (_, scheme, solver, stats) in solvers.iter_mut() {
            bufs.velocity.write(&vec4s(&u_free)).unwrap();
            let ncolors = solver.set_contacts(&p.contacts).unwrap().colors;
            if *scheme == Scheme::ColoredGaussSeidel && !solver.fused() {
                colors.push(ncolors as f64);
            }
            let r = solver.solve().unwrap();
            stats.push((
                r.sweeps,
                r.ms,
                r.dispatches.total(),
                r.rollbacks,
                r.residual,
            ));
        }
        let (lambda, _) = solve(
            &p,
            Scheme::GaussSeidel,
            None,
            &SolverParams::default(),
            None,
        )
        .unwrap();
        st.advance(&p, &u_free, &lambda);
    }
    assert_eq!(st.x.len(), n);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{{\"scene\": \"PROX-S2\", \"contacts_from\": \"{}\", \"steps\": 1000, \"grid_build_ms\": {grid_ms:.1}, \"generation_ms_median\": {:.3}, \"contacts_median\": {}, \"colors_median\": {}}}",
        if from_pairs { "pairs" } else { "sdf" },
        median(&mut gen_ms),
        median(&mut contacts),
        median(&mut colors)
    );
    for (tolerances, scheme, solver, stats) in &solvers {
        let mut sweeps: Vec<f64> = stats.iter().map(|s| s.0 as f64).collect();
        let mut residual: Vec<f64> = stats.iter().map(|s| s.4 as f64).collect();
        let ms = stats.iter().map(|s| s.1).sum::<f64>() / stats.len() as f64;
        let dispatches = stats.iter().map(|s| s.2 as f64).sum::<f64>() / stats.len() as f64;
        let rollbacks: u32 = stats.iter().map(|s| s.3).sum();
        println!(
            "{{\"tolerances\": \"{tolerances}\", \"scheme\": \"{}\", \"dispatch\": \"{}\", \"sweeps_median\": {}, \"ms_mean\": {ms:.3}, \"dispatches_mean\": {dispatches:.1}, \"rollbacks\": {rollbacks}, \"residual_median\": {:e}}}",
            scheme.name(),
            if solver.fused() { "fused" } else { "per-color" },
            median(&mut sweeps),
            median(&mut residual)
        );
    }
    assert_no_validation_errors(&ctx);
}
