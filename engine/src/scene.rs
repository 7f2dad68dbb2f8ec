//! Scene files (TOML): bodies, materials, boundary conditions, colliders, solver and output
//! settings, in SI units. Unknown fields, wrong types and impossible values are refused with a
//! message naming the file, the field path (e.g. `body[1].material.poisson_ratio`) and, for
//! syntax and type errors, the line. `--set path.to.field=value` overrides are applied to the
//! TOML document before it is checked, so they are validated exactly like the file.
//!
//! ```toml
//! [simulation]
//! frame_rate = 60.0          # frames per second
//! substeps = 2               # time steps per frame
//! gravity = [0.0, 0.0, -9.81]
//! solver = "newton"          # or "symplectic-euler", "xpbd"
//!
//! [[body]]
//! name = "cube"
//! mesh = { generator = "box", size = [0.5, 0.5, 0.5], cells = [10, 10, 10] }
//! translation = [0.0, 0.0, 0.35]
//! material = { model = "stable-neo-hookean", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 1000.0 }
//!
//! [[collider]]
//! shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
//! friction = 0.3
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with a scene: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneError {
    /// The scene file (or `<inline>` / `--set`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field path, when known (e.g. `body[0].material.density`).
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SceneError {}

/// A whole scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Time stepping, gravity and solver choice.
    #[serde(default)]
    pub simulation: Simulation,
    /// Solver parameters.
    #[serde(default)]
    pub solver: SolverSettings,
    /// XPBD parameters (used with `simulation.solver = "xpbd"`).
    #[serde(default)]
    pub xpbd: XpbdSettings,
    /// Collision handling between deformable surfaces.
    #[serde(default)]
    pub collision: CollisionSettings,
    /// Deformable bodies.
    #[serde(default, rename = "body")]
    pub bodies: Vec<Body>,
    /// Analytic colliders.
    #[serde(default, rename = "collider")]
    pub colliders: Vec<Collider>,
    /// What to write.
    #[serde(default)]
    pub output: Output,
}

/// Time stepping and global forces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Simulation {
    /// Frames per second of the output (Hz).
    pub frame_rate: f64,
    /// Time steps per frame.
    pub substeps: u32,
    /// Number of frames to simulate.
    pub frames: u32,
    /// Gravitational acceleration (m/s²).
    pub gravity: [f64; 3],
    /// Time integrator.
    pub solver: SolverKind,
}

impl Default for Simulation {
    fn default() -> Self {
        Simulation {
            frame_rate: 60.0,
            substeps: 1,
            frames: 120,
            gravity: [0.0, 0.0, -9.81],
            solver: SolverKind::Newton,
        }
    }
}

impl Simulation {
    /// Time step (s): one frame divided by the substeps.
    pub fn time_step(&self) -> f64 {
        1.0 / (self.frame_rate * self.substeps as f64)
    }
}

/// Time integrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverKind {
    /// Implicit Euler as incremental-potential minimisation with Newton–PCG.
    Newton,
    /// Semi-implicit (symplectic) Euler, the RAINBOW baseline.
    SymplecticEuler,
    /// XPBD with substeps and multicolor constraint sweeps ([`crate::stepper::xpbd`]).
    Xpbd,
}

/// Parameters of the XPBD solver (`[xpbd]`; defaults in [`XpbdSettings::default`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpbdSettings {
    /// Substeps per time step (default 20): each predicts, sweeps the constraints and updates
    /// velocities. Stiff solids need short substeps (see [`crate::stepper::xpbd::TetSolve`]).
    pub substeps: u32,
    /// Constraint sweeps over all colors per substep (default 1).
    pub iterations: u32,
    /// Velocity damping rate (1/s, default 0): free velocities scale by `1 − damping · h_sub`
    /// per substep.
    pub damping: f64,
    /// How each tet's deviatoric and hydrostatic constraints are solved (default coupled).
    pub tet_solve: crate::stepper::xpbd::TetSolve,
}

impl Default for XpbdSettings {
    fn default() -> Self {
        XpbdSettings {
            substeps: 20,
            iterations: 1,
            damping: 0.0,
            tet_solve: crate::stepper::xpbd::TetSolve::Coupled,
        }
    }
}

/// Parameters of the Newton–PCG solver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverSettings {
    /// Newton iterations per time step at most.
    pub newton_max_iterations: u32,
    /// Newton stops when a step's largest vertex displacement falls below this (m).
    pub newton_tolerance: f64,
    /// Newton also stops when the largest per-vertex gradient of the incremental potential falls
    /// to this (N).
    pub newton_gradient_tolerance: f64,
    /// PCG stops at this relative residual.
    pub pcg_tolerance: f64,
    /// PCG iterations per Newton step at most.
    pub pcg_max_iterations: u32,
    /// PCG stops when the residual has not improved over this many iterations.
    pub pcg_stagnation_window: u32,
    /// Warm-start PCG with block-Jacobi solves of stiffness groups.
    pub stiffness_group_warm_start: bool,
    /// Iterations of the grouped warm-start PCG at most.
    pub warm_start_max_iterations: u32,
    /// The grouped warm-start PCG stops at this relative residual.
    pub warm_start_tolerance: f64,
    /// Friction slip velocity ε_v (m/s): slower tangential motion is treated as sticking
    /// (IPC's smoothing; larger converges faster, smaller sticks better).
    pub friction_slip_velocity: f64,
    /// Re-lag friction normals and forces at every Newton iteration (fully implicit) instead of
    /// once per time step (semi-implicit).
    pub friction_per_iteration: bool,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            newton_max_iterations: 20,
            newton_tolerance: 1e-5,
            newton_gradient_tolerance: 1e-6,
            pcg_tolerance: 1e-4,
            pcg_max_iterations: 1000,
            pcg_stagnation_window: 100,
            stiffness_group_warm_start: true,
            warm_start_max_iterations: 30,
            warm_start_tolerance: 1e-2,
            friction_slip_velocity: 1e-2,
            friction_per_iteration: false,
        }
    }
}

/// Collision handling method between deformable surfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionMethod {
    /// No surface–surface collision handling (analytic colliders still act).
    None,
    /// The two-way interior point method after every Newton iteration (two-way IPM paper).
    TwoWay,
    /// Discrete detection of tet-mesh vertices and boundary edges inside tets, shortest paths
    /// to the boundary, as XPBD collision constraints or as the Newton solver's penalty energy
    /// (shortest-path paper).
    ShortestPath,
}

/// Forward-step bound of the two-way method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionBound {
    /// |Δx_i| ≤ γ D_i / 2 (two-way IPM Eq. 20).
    HalfDistance,
    /// |Δx_i| ≤ γ_p D_i (offset-geometric-contact bound, `ogc_relaxation` = γ_p).
    Ogc,
}

/// What precedes each forward step of the two-way method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionBackward {
    /// The paper's backward step: projected multicolor Gauss–Seidel (§4).
    GaussSeidel,
    /// The paper's log-barrier baseline (§3.4, Eq. 7–8): gradient descent on the barrier
    /// objective with the same forward steps (for comparison).
    LogBarrier,
}

/// Where the two-way method colors its contact constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionColoring {
    /// Host on CPU Vulkan devices (lavapipe) and up to 20,000 collision vertices, GPU otherwise.
    Auto,
    /// Jones–Plassmann on the GPU.
    Gpu,
    /// Greedy on the host.
    Host,
}

/// How the two-way backward step's multicolor sweep is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionSweepDispatch {
    /// Fused on CPU Vulkan devices (lavapipe) and up to 20,000 collision vertices, per color
    /// otherwise.
    Auto,
    /// One dispatch per color.
    PerColor,
    /// One single-workgroup dispatch per sweep.
    Fused,
}

/// Parameters of surface–surface collision handling (SI units; defaults: the two-way IPM
/// paper's Table 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollisionSettings {
    /// Method.
    pub method: CollisionMethod,
    /// Collide a body with itself (cloth folding onto itself).
    pub self_collision: bool,
    /// D_min (m): a new proximity search when the reuse bound falls below it.
    pub d_min: f64,
    /// D_max (m): proximity search distance.
    pub d_max: f64,
    /// δ (m): separation the contact constraints ask for.
    pub delta: f64,
    /// σ: stretch limit of the edge-length constraints.
    pub sigma: f64,
    /// γ: damping of the forward step.
    pub gamma: f64,
    /// ε: the handling stops when every vertex clock is below it.
    pub epsilon: f64,
    /// L: steps per collision solve at most.
    pub max_steps: u32,
    /// ξ (m): minimum separation kept between primitives (above f32 rounding).
    pub min_separation: f64,
    /// Forward-step bound.
    pub bound: CollisionBound,
    /// Two-way method: floor release (vertices held by pairs squeezed to the minimum
    /// separation may take the larger step of their other pairs when a separating-plane test
    /// proves it safe).
    pub floor_release: bool,
    /// Two-way method: pairs closer than this are floor pairs (m; default:
    /// `10 min_separation`, at most `d_max`); in (2 `min_separation`, `d_max`].
    pub floor_release_distance: Option<f64>,
    /// γ_p of the OGC bound (0 < γ_p < 0.5).
    pub ogc_relaxation: f64,
    /// Backward step, or the log-barrier baseline in its place.
    pub backward: CollisionBackward,
    /// Log-barrier baseline: strength k relative to m̄/h² (dimensionless; the paper's
    /// k = 20 kg/s² is 20 h²/m̄).
    pub barrier_strength: f64,
    /// Log-barrier baseline: range d̂ (m; at most d_min).
    pub barrier_range: f64,
    /// Where the contact constraints of each proximity search are colored.
    pub contact_coloring: CollisionColoring,
    /// How the backward step's sweep is dispatched.
    pub sweep_dispatch: CollisionSweepDispatch,
    /// Steps recorded per GPU graph run (host round trips every this many steps).
    pub steps_per_batch: u32,
    /// Edge-length constraints in the backward step (Eq. 17).
    pub edge_constraints: bool,
    /// Coulomb friction coefficient of self and inter-body contact: the shortest-path method's
    /// position-based friction, and the two-way method's velocity filtering of its targets
    /// (0: off).
    pub friction: f64,
    /// Separation a resolved point keeps from the boundary (m; shortest-path method).
    pub contact_offset: f64,
    /// Query every tet vertex, not only boundary vertices (shortest-path method; for
    /// recovering deep pre-existing overlaps).
    pub query_all_vertices: bool,
    /// Also query boundary edges through tets (shortest-path method).
    pub query_edges: bool,
    /// Infeasible-region culling of shortest-path candidates (changes no answer).
    pub infeasible_region_culling: bool,
    /// Over-relaxation ω of the shortest-path method's Jacobi constraint projection (0 < ω < 2).
    pub relaxation: f64,
    /// Shortest-path method: largest part of a violation one projection closes (m).
    pub max_correction: f64,
    /// Shortest-path method: Jacobi projections of the collision constraints after each XPBD
    /// iteration (1..=64).
    pub response_passes: u32,
    /// Shortest-path method: detect (and query) again before every XPBD constraint iteration
    /// after the first, not only once per substep; catches the penetrations that the
    /// iterations themselves create (the paper detects once per substep and adds CCD).
    pub detect_every_iteration: bool,
    /// Simulated time (s) before which shortest-path collision handling is off (to create
    /// intersections for it to recover from, as in the paper's Fig. 17).
    pub start_time: f64,
    /// Shortest-path method: which collisions are detected, `"hybrid"` (CCD for new
    /// collisions, DCD with the shortest path at the start of each substep; the paper's
    /// recommendation), `"dcd"` or `"ccd"` only (the paper's Fig. 9 comparison).
    pub detection: crate::contact::shortest_path::DetectionMode,
    /// Shortest-path method: proximity search distance of the CCD candidate pairs (m); a
    /// search is reused while every vertex moved less than half of it.
    pub ccd_distance: f64,
    /// Shortest-path method with CCD: at the end of each substep, pairs the response left
    /// colliding send their vertices back to the start of the substep (repeated until none
    /// does), so CCD never lets a collision through. Off by default: rolling single vertices
    /// back distorts elements, and in dense piles the rollbacks can freeze the simulation.
    pub ccd_failsafe: bool,
    /// Shortest-path method with the Newton solver: stiffness k of the penalty energy
    /// ½ k min((p − s)·n − offset, 0)², relative to m̄/h² (m̄: mean mass of the free vertices).
    pub penalty_stiffness: f64,
    /// Two-way method: stiffness k_r of the quadratic repulsion energy ½ k_r (d_r − d)² of its
    /// proximity pairs in the Newton dynamics (two-way IPM §6.2), relative to m̄/h² (0: off).
    pub repulsion_stiffness: f64,
    /// Two-way method: repulsion distance d_r (m; default: `delta`); at most `d_min`.
    pub repulsion_distance: Option<f64>,
}

impl Default for CollisionSettings {
    fn default() -> Self {
        let d = crate::contact::two_way::TwoWaySettings::default();
        CollisionSettings {
            method: CollisionMethod::None,
            self_collision: true,
            d_min: d.d_min,
            d_max: d.d_max,
            delta: d.delta,
            sigma: d.sigma,
            gamma: d.gamma,
            epsilon: d.epsilon,
            max_steps: d.max_steps,
            min_separation: d.min_separation,
            bound: CollisionBound::HalfDistance,
            floor_release: true,
            floor_release_distance: None,
            ogc_relaxation: 0.45,
            backward: CollisionBackward::GaussSeidel,
            barrier_strength: 10.0,
            barrier_range: 1e-3,
            contact_coloring: CollisionColoring::Auto,
            sweep_dispatch: CollisionSweepDispatch::Auto,
            steps_per_batch: d.steps_per_batch,
            edge_constraints: d.edge_constraints,
            friction: 0.0,
            contact_offset: 1e-4,
            query_all_vertices: false,
            query_edges: true,
            infeasible_region_culling: true,
            relaxation: 1.5,
            max_correction: 2e-3,
            response_passes: 4,
            detect_every_iteration: true,
            start_time: 0.0,
            detection: crate::contact::shortest_path::DetectionMode::Hybrid,
            ccd_distance: 0.01,
            ccd_failsafe: false,
            penalty_stiffness: 10.0,
            repulsion_stiffness: 0.0,
            repulsion_distance: None,
        }
    }
}

impl CollisionSettings {
    /// The shortest-path recovery settings.
    pub fn recovery(&self) -> crate::contact::shortest_path::ShortestPathSettings {
        let mut r = crate::contact::shortest_path::ShortestPathSettings {
            offset: self.contact_offset as f32,
            friction: self.friction as f32,
            all_vertices: self.query_all_vertices,
            edges: self.query_edges,
            relaxation: self.relaxation as f32,
            max_correction: self.max_correction as f32,
            passes: self.response_passes,
            detection: self.detection,
            ccd_distance: self.ccd_distance,
            ccd_failsafe: self.ccd_failsafe,
            ..Default::default()
        };
        r.query.cull = self.infeasible_region_culling;
        r
    }

    /// The two-way repulsion distance d_r (m): `repulsion_distance`, else `delta`.
    pub fn repulsion_distance(&self) -> f64 {
        self.repulsion_distance.unwrap_or(self.delta)
    }

    /// The floor-release distance θ (m): `floor_release_distance`, else
    /// `min(10 min_separation, d_max)`.
    pub fn floor_release_distance(&self) -> f64 {
        self.floor_release_distance
            .unwrap_or((10.0 * self.min_separation).min(self.d_max))
    }

    /// The two-way solver's settings.
    pub fn two_way(&self) -> crate::contact::two_way::TwoWaySettings {
        crate::contact::two_way::TwoWaySettings {
            d_min: self.d_min,
            d_max: self.d_max,
            delta: self.delta,
            sigma: self.sigma,
            gamma: self.gamma,
            epsilon: self.epsilon,
            max_steps: self.max_steps,
            min_separation: self.min_separation,
            bound: match self.bound {
                CollisionBound::HalfDistance => crate::contact::two_way::StepBound::HalfDistance,
                CollisionBound::Ogc => crate::contact::two_way::StepBound::Ogc {
                    relaxation: self.ogc_relaxation,
                },
            },
            floor_release: self.floor_release.then(|| self.floor_release_distance()),
            backward: match self.backward {
                CollisionBackward::GaussSeidel => crate::contact::two_way::Backward::GaussSeidel,
                CollisionBackward::LogBarrier => crate::contact::two_way::Backward::LogBarrier {
                    strength: self.barrier_strength,
                    range: self.barrier_range,
                },
            },
            contact_coloring: match self.contact_coloring {
                CollisionColoring::Auto => crate::contact::two_way::ContactColoring::Auto,
                CollisionColoring::Gpu => crate::contact::two_way::ContactColoring::Gpu,
                CollisionColoring::Host => crate::contact::two_way::ContactColoring::Host,
            },
            sweep_dispatch: match self.sweep_dispatch {
                CollisionSweepDispatch::Auto => crate::contact::two_way::SweepDispatch::Auto,
                CollisionSweepDispatch::PerColor => {
                    crate::contact::two_way::SweepDispatch::PerColor
                }
                CollisionSweepDispatch::Fused => crate::contact::two_way::SweepDispatch::Fused,
            },
            sweeps: 1,
            steps_per_batch: self.steps_per_batch,
            edge_constraints: self.edge_constraints,
            filter: crate::proximity::BodyFilter {
                within_body: self.self_collision,
                between_bodies: true,
            },
            profile: false,
        }
    }
}

/// One deformable body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    /// Name used in reports.
    pub name: String,
    /// Where the geometry comes from.
    pub mesh: MeshSource,
    /// Constitutive model and parameters.
    pub material: Material,
    /// Translation applied after scaling and rotation (m).
    #[serde(default)]
    pub translation: [f64; 3],
    /// Rotation as XYZ Euler angles (degrees).
    #[serde(default)]
    pub rotation_deg: [f64; 3],
    /// Uniform scale.
    #[serde(default = "one")]
    pub scale: f64,
    /// Initial velocity (m/s).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Vertex sets held fixed.
    #[serde(default)]
    pub fixed: Vec<VertexSet>,
    /// Scripted kinematic motion of vertex sets.
    #[serde(default)]
    pub motion: Vec<ScriptedMotion>,
    /// External forces.
    #[serde(default)]
    pub force: Vec<Force>,
    /// Regions of a solid with their own Young's modulus (tets whose centroid lies inside; the
    /// last matching region wins): heterogeneous bodies bonded in one mesh.
    #[serde(default)]
    pub material_region: Vec<MaterialRegion>,
}

/// A region of a solid body with its own stiffness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialRegion {
    /// Axis-aligned box (m, after the body transform).
    pub region: Aabb,
    /// Young's modulus inside it (Pa).
    pub youngs_modulus: f64,
}

fn one() -> f64 {
    1.0
}

/// Geometry of a body: a file or a procedural generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum MeshSource {
    /// A mesh file (any format `supple mesh info` reads), relative to the scene file.
    File {
        /// Path of the mesh file.
        file: PathBuf,
    },
    /// A procedural mesh.
    Generator {
        /// Which generator.
        generator: Generator,
        /// Overall size (m): box/beam extents, `[radius, _, _]` for spheres; see [`Generator`]
        /// for the others.
        size: [f64; 3],
        /// Cells per axis (boxes and beams) or resolution (sphere: `[n, _, _]`).
        #[serde(default = "default_cells")]
        cells: [u32; 3],
    },
}

fn default_cells() -> [u32; 3] {
    [4, 4, 4]
}

/// Procedural mesh generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// Tetrahedralized box with 5 tets per cell, centred on the body origin.
    Box,
    /// Tetrahedralized box with 6 tets per cell, centred on the body origin.
    Box6,
    /// Tetrahedralized ball centred on the body origin.
    Sphere,
    /// Rectangular cloth grid in the XY plane, centred on the body origin.
    Cloth,
    /// Straight rod along X of length `size[0]` with `cells[0]` segments, centred on the body
    /// origin.
    Rod,
    /// Squishy ball (sphere with tentacles): `size = [radius, tentacle_length,
    /// tentacle_radius]`, `cells = [resolution, tentacles, _]`, centred on the body origin.
    SquishyBall,
    /// Coiled noodle: a square beam `size = [length, thickness, coil_radius]` with
    /// `cells = [cells across the thickness, _, _]`, coiled about the body's z axis as a helix
    /// rising 1.5 thicknesses per turn (no self-intersection at rest).
    Coil,
    /// Open cloth cylinder along x centred on the body origin: `size = [radius, length, _]`,
    /// `cells = [around (≥ 3), along, _]`.
    Tube,
    /// Open cloth truncated cone about z centred on the body origin: `size = [top radius,
    /// bottom radius, height]` (bottom at z = −height/2), `cells = [around (≥ 3), along, _]`.
    Funnel,
    /// Open cloth tube along an overhand knot (a trefoil opened at one lobe, with straight tails):
    /// `size = [knot scale, tube radius (< scale/2), tail length]`, `cells = [around (≥ 3),
    /// segments along the centre line (≥ 8), _]`; the knot spans about 6 scales.
    KnotTube,
    /// Two open cloth tubes tied in a loose reef knot (interlocked bights, straight arms along
    /// ±x): `size = [knot scale, tube radius (< 0.4 scale), arm length beyond the knot]`,
    /// `cells = [around (≥ 3), segments along each tube (≥ 8), _]`; the first tube's vertices
    /// first, each tube's first and last rings ending its arms.
    ReefKnot,
    /// Two open cloth tubes tied in a bow-knot-like knot: the reef knot's arms widened into ears
    /// whose two ends face each other across a gap at the ear's tip; `size` and `cells` as for
    /// `"reef-knot"`, `size[2]` the length of the ears' straight part.
    BowKnot,
}

impl Generator {
    /// Whether the generator makes a cloth surface (used with the `"cloth"` material).
    pub fn is_cloth(self) -> bool {
        matches!(
            self,
            Generator::Cloth
                | Generator::Tube
                | Generator::Funnel
                | Generator::KnotTube
                | Generator::ReefKnot
                | Generator::BowKnot
        )
    }
}

/// Constitutive model and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// The model.
    pub model: MaterialModel,
    /// Young's modulus (Pa).
    pub youngs_modulus: f64,
    /// Poisson ratio (dimensionless, in (-1, 0.5)).
    pub poisson_ratio: f64,
    /// Mass density (kg/m³; for cloth, of the sheet material).
    pub density: f64,
    /// Cloth thickness (m).
    #[serde(default)]
    pub thickness: Option<f64>,
    /// Bending stiffness: cloth N·m (default E t³ / 12(1 − ν²)), rods N·m² (default E π r⁴/4).
    #[serde(default)]
    pub bending_stiffness: Option<f64>,
    /// Rod cross-section radius (m).
    #[serde(default)]
    pub radius: Option<f64>,
}

/// Constitutive models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaterialModel {
    /// Stable Neo-Hookean solid.
    StableNeoHookean,
    /// St. Venant–Kirchhoff solid.
    Stvk,
    /// Corotated linear solid.
    Corotated,
    /// Membrane + bending shell.
    Cloth,
    /// Stretch + bend rod.
    Rod,
}

/// A set of vertices: by region or by index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VertexSet {
    /// Vertices inside this axis-aligned box (m, after the body transform).
    #[serde(default)]
    pub region: Option<Aabb>,
    /// Vertex indices.
    #[serde(default)]
    pub indices: Option<Vec<u32>>,
}

/// An axis-aligned box (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aabb {
    /// Lower corner (m).
    pub min: [f64; 3],
    /// Upper corner (m).
    pub max: [f64; 3],
}

/// Scripted motion of a vertex set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedMotion {
    /// The moved vertices.
    pub vertices: VertexSet,
    /// Constant velocity (m/s).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Rotation axis direction (normalised on use).
    #[serde(default)]
    pub axis: Option<[f64; 3]>,
    /// A point on the rotation axis (m).
    #[serde(default)]
    pub center: [f64; 3],
    /// Angular velocity about the axis (rad/s).
    #[serde(default)]
    pub angular_velocity: f64,
    /// Simulated time (s) at which the motion stops: the set then stays where it got (none:
    /// never stops).
    #[serde(default)]
    pub until: Option<f64>,
}

/// An external force on a vertex set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Force {
    /// The loaded vertices.
    pub vertices: VertexSet,
    /// Total force spread evenly over the set (N).
    #[serde(default)]
    pub total: Option<[f64; 3]>,
    /// Traction over the set's boundary area (Pa).
    #[serde(default)]
    pub traction: Option<[f64; 3]>,
}

/// A collider's spin is finite and only spheres spin.
pub(crate) fn check_spin(c: &Collider) -> Result<(), String> {
    if !c.angular_velocity.iter().all(|w| w.is_finite()) {
        return Err("must be finite (rad/s)".into());
    }
    if !matches!(c.shape, ColliderShape::Sphere { .. })
        && c.angular_velocity.iter().any(|&w| w != 0.0)
    {
        return Err("only sphere colliders spin".into());
    }
    Ok(())
}

/// An analytic collider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collider {
    /// Geometry.
    pub shape: ColliderShape,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Constant velocity of a scripted collider (m/s).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Spin of a sphere collider about its centre (rad/s, axis × rate): its surface drags what
    /// rests on it through friction. Spheres only.
    #[serde(default)]
    pub angular_velocity: [f64; 3],
}

/// Collider geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum ColliderShape {
    /// Half-space `n·x ≥ offset`.
    Plane {
        /// Outward normal (normalised on use).
        normal: [f64; 3],
        /// Signed distance of the plane from the origin along the normal (m).
        offset: f64,
    },
    /// Solid sphere.
    Sphere {
        /// Centre (m).
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// Solid axis-aligned box.
    Box {
        /// Lower corner (m).
        min: [f64; 3],
        /// Upper corner (m).
        max: [f64; 3],
    },
}

/// Output settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Output {
    /// Output folder.
    pub dir: PathBuf,
    /// Per-frame export format.
    pub export: Option<ExportFormat>,
    /// Frames rendered into the PNG preview.
    pub preview_frames: Vec<u32>,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            dir: PathBuf::from("out"),
            export: None,
            preview_frames: Vec::new(),
        }
    }
}

/// Per-frame export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportFormat {
    /// Wavefront OBJ surfaces.
    Obj,
    /// Binary PLY surfaces.
    Ply,
    /// One time-sampled USD stage.
    Usd,
    /// VTK unstructured grids.
    Vtu,
}

/// 1-based line of byte offset `pos` in `text`.
fn line_of(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Splits `body[1].material.density` / `body.1.material.density` into path segments.
fn path_segments(path: &str) -> Vec<String> {
    path.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Applies one `path=value` override to a TOML document.
fn apply_override(doc: &mut toml::Table, spec: &str) -> Result<(), SceneError> {
    let err = |field: Option<String>, message: String| SceneError {
        file: "--set".into(),
        line: None,
        field,
        message,
    };
    let (path, value) = spec.split_once('=').ok_or_else(|| {
        err(
            None,
            format!("'{spec}' is not of the form path.to.field=value"),
        )
    })?;
    let segs = path_segments(path.trim());
    let Some((last, parents)) = segs.split_last() else {
        return Err(err(None, format!("'{spec}' names no field")));
    };
    // Parse the value as TOML (numbers, booleans, arrays, inline tables); bare words as strings.
    let value: toml::Value = match format!("v = {}", value.trim()).parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(value.trim().into())),
        Err(_) => toml::Value::String(value.trim().to_string()),
    };
    let Some((first, rest)) = parents.split_first() else {
        doc.insert(last.clone(), value);
        return Ok(());
    };
    let mut cur = doc
        .entry(first.clone())
        .or_insert_with(|| toml::Value::Table(Default::default()));
    for seg in rest {
        cur = match cur {
            toml::Value::Table(t) => t
                .entry(seg.clone())
                .or_insert_with(|| toml::Value::Table(Default::default())),
            toml::Value::Array(a) => {
                let i: usize = seg.parse().map_err(|_| {
                    err(Some(path.into()), format!("'{seg}' is not an array index"))
                })?;
                let len = a.len();
                a.get_mut(i).ok_or_else(|| {
                    err(
                        Some(path.into()),
                        format!("index {i} out of range (have {len})"),
                    )
                })?
            }
            _ => {
                return Err(err(
                    Some(path.into()),
                    format!("'{seg}' is not a table or array"),
                ))
            }
        };
    }
    match cur {
        toml::Value::Table(t) => {
            t.insert(last.clone(), value);
        }
        toml::Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| err(Some(path.into()), format!("'{last}' is not an array index")))?;
            let len = a.len();
            *a.get_mut(i).ok_or_else(|| {
                err(
                    Some(path.into()),
                    format!("index {i} out of range (have {len})"),
                )
            })? = value;
        }
        _ => {
            return Err(err(
                Some(path.into()),
                "its parent is not a table or array".into(),
            ))
        }
    }
    Ok(())
}

/// The key of the first `--set` override after which the document no longer deserializes (the
/// field to name in an error), if the file alone does.
fn failing_override(text: &str, overrides: &[String]) -> Option<String> {
    let mut doc: toml::Table = text.parse().ok()?;
    let ok = |d: &toml::Table| {
        toml::to_string(d)
            .ok()
            .is_some_and(|t| toml::from_str::<Scene>(&t).is_ok())
    };
    if !ok(&doc) {
        return None;
    }
    for o in overrides {
        apply_override(&mut doc, o).ok()?;
        if !ok(&doc) {
            return o.split_once('=').map(|(k, _)| k.trim().to_string());
        }
    }
    None
}

impl Scene {
    /// Reads and checks a scene file, applying `--set` overrides first.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|e| SceneError {
            file: path.display().to_string(),
            line: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        let mut scene = Scene::parse(&text, &path.display().to_string(), overrides)?;
        // Mesh files are relative to the scene file.
        let base = path.parent().unwrap_or(Path::new("."));
        for b in &mut scene.bodies {
            if let MeshSource::File { file } = &mut b.mesh {
                if file.is_relative() {
                    *file = base.join(&*file);
                }
            }
        }
        Ok(scene)
    }

    /// Parses and checks scene text; `name` labels errors.
    pub fn parse(text: &str, name: &str, overrides: &[String]) -> Result<Scene, SceneError> {
        let syntax = |e: toml::de::Error| SceneError {
            file: name.to_string(),
            line: e.span().map(|s| line_of(text, s.start)),
            field: None,
            message: e.message().trim().to_string(),
        };
        let mut doc: toml::Table = text.parse().map_err(syntax)?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let merged = if overrides.is_empty() {
            text.to_string()
        } else {
            toml::to_string(&doc).unwrap_or_default()
        };
        let scene: Scene = toml::from_str(&merged).map_err(|e| {
            let mut err = syntax(e);
            if !overrides.is_empty() {
                // Lines refer to the merged document, not the file: do not report them.
                err.line = None;
                err.message = format!("{} (after --set overrides)", err.message);
                err.field = failing_override(text, overrides);
            }
            err
        })?;
        scene.validate(name)?;
        Ok(scene)
    }

    /// Checks values that the types cannot express (positive moduli, ranges, references).
    pub fn validate(&self, name: &str) -> Result<(), SceneError> {
        let bad = |field: String, message: String| {
            Err(SceneError {
                file: name.into(),
                line: None,
                field: Some(field),
                message,
            })
        };
        let finite3 = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
        let s = &self.simulation;
        if !(s.frame_rate.is_finite() && s.frame_rate > 0.0) {
            return bad(
                "simulation.frame_rate".into(),
                format!(
                    "must be a positive number of frames per second, got {}",
                    s.frame_rate
                ),
            );
        }
        if s.substeps == 0 {
            return bad("simulation.substeps".into(), "must be at least 1".into());
        }
        if !finite3(&s.gravity) {
            return bad("simulation.gravity".into(), "must be finite (m/s²)".into());
        }
        let sv = &self.solver;
        if !(sv.friction_slip_velocity.is_finite() && sv.friction_slip_velocity > 0.0) {
            return bad(
                "solver.friction_slip_velocity".into(),
                format!(
                    "must be a positive speed in m/s, got {}",
                    sv.friction_slip_velocity
                ),
            );
        }
        if !(sv.warm_start_tolerance > 0.0 && sv.warm_start_tolerance < 1.0) {
            return bad(
                "solver.warm_start_tolerance".into(),
                format!("must be in (0, 1), got {}", sv.warm_start_tolerance),
            );
        }
        if !(sv.pcg_tolerance > 0.0 && sv.pcg_tolerance < 1.0) {
            return bad(
                "solver.pcg_tolerance".into(),
                format!("must be in (0, 1), got {}", sv.pcg_tolerance),
            );
        }
        if !(sv.newton_tolerance > 0.0 && sv.newton_tolerance.is_finite()) {
            return bad(
                "solver.newton_tolerance".into(),
                format!("must be positive, got {}", sv.newton_tolerance),
            );
        }
        if !(sv.newton_gradient_tolerance >= 0.0 && sv.newton_gradient_tolerance.is_finite()) {
            return bad(
                "solver.newton_gradient_tolerance".into(),
                format!(
                    "must be a force >= 0 in N, got {}",
                    sv.newton_gradient_tolerance
                ),
            );
        }
        if sv.newton_max_iterations == 0 || sv.pcg_max_iterations == 0 {
            return bad(
                "solver".into(),
                "iteration limits must be at least 1".into(),
            );
        }
        let x = &self.xpbd;
        if x.substeps == 0 || x.substeps > 10_000 {
            return bad(
                "xpbd.substeps".into(),
                format!("must be in 1..=10000, got {}", x.substeps),
            );
        }
        if x.iterations == 0 || x.iterations > 1000 {
            return bad(
                "xpbd.iterations".into(),
                format!("must be in 1..=1000, got {}", x.iterations),
            );
        }
        if !(x.damping.is_finite() && x.damping >= 0.0) {
            return bad(
                "xpbd.damping".into(),
                format!("must be a non-negative rate in 1/s, got {}", x.damping),
            );
        }
        let c = &self.collision;
        for (key, v) in [
            ("friction", c.friction),
            ("contact_offset", c.contact_offset),
            ("start_time", c.start_time),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(
                    format!("collision.{key}"),
                    format!("must be finite and >= 0, got {v}"),
                );
            }
        }
        if !(c.ccd_distance.is_finite() && c.ccd_distance > c.contact_offset) {
            return bad(
                "collision.ccd_distance".into(),
                format!(
                    "must be a length in m larger than collision.contact_offset ({}), got {}",
                    c.contact_offset, c.ccd_distance
                ),
            );
        }
        if !(c.penalty_stiffness.is_finite() && c.penalty_stiffness > 0.0) {
            return bad(
                "collision.penalty_stiffness".into(),
                format!(
                    "must be a positive multiple of m/h², got {}",
                    c.penalty_stiffness
                ),
            );
        }
        if !(c.repulsion_stiffness.is_finite() && c.repulsion_stiffness >= 0.0) {
            return bad(
                "collision.repulsion_stiffness".into(),
                format!(
                    "must be a non-negative multiple of m/h², got {}",
                    c.repulsion_stiffness
                ),
            );
        }
        if c.repulsion_stiffness > 0.0 && c.method != CollisionMethod::TwoWay {
            return bad(
                "collision.repulsion_stiffness".into(),
                "the repulsion energy needs collision.method = \"two-way\"".into(),
            );
        }
        if let Some(d) = c.repulsion_distance {
            if !(d.is_finite() && d > 0.0 && d <= c.d_min) {
                return bad(
                    "collision.repulsion_distance".into(),
                    format!(
                        "must be a positive length in m, at most collision.d_min ({}) so every \
                         pair within it is in the proximity list, got {d}",
                        c.d_min
                    ),
                );
            }
        }
        if !(c.max_correction.is_finite() && c.max_correction > 0.0) {
            return bad(
                "collision.max_correction".into(),
                format!("must be a positive length in m, got {}", c.max_correction),
            );
        }
        if !(1..=64).contains(&c.response_passes) {
            return bad(
                "collision.response_passes".into(),
                format!("must be in 1..=64, got {}", c.response_passes),
            );
        }
        if !(c.relaxation > 0.0 && c.relaxation < 2.0) {
            return bad(
                "collision.relaxation".into(),
                format!("must be in (0, 2), got {}", c.relaxation),
            );
        }
        if let Err(m) = self.collision.two_way().validate() {
            // Messages start with the field's name.
            let key = m.split_whitespace().next().unwrap_or("collision");
            let key = key.trim_end_matches(',').to_string();
            let key = if key == "ogc" {
                "ogc_relaxation".to_string()
            } else {
                key
            };
            return bad(format!("collision.{key}"), m);
        }
        let mut names = std::collections::HashSet::new();
        for (i, b) in self.bodies.iter().enumerate() {
            let f = |k: &str| format!("body[{i}].{k}");
            if !names.insert(b.name.as_str()) {
                return bad(f("name"), format!("'{}' is used by another body", b.name));
            }
            let m = &b.material;
            if !(m.youngs_modulus.is_finite() && m.youngs_modulus > 0.0) {
                return bad(
                    f("material.youngs_modulus"),
                    format!(
                        "must be a positive stiffness in Pa, got {}",
                        m.youngs_modulus
                    ),
                );
            }
            if !(m.poisson_ratio > -1.0 && m.poisson_ratio < 0.5) {
                return bad(
                    f("material.poisson_ratio"),
                    format!("must be in (-1, 0.5), got {}", m.poisson_ratio),
                );
            }
            if !(m.density.is_finite() && m.density > 0.0) {
                return bad(
                    f("material.density"),
                    format!("must be a positive density in kg/m³, got {}", m.density),
                );
            }
            if m.model == MaterialModel::Cloth
                && !m.thickness.is_some_and(|t| t > 0.0 && t.is_finite())
            {
                return bad(
                    f("material.thickness"),
                    "cloth needs a positive thickness in m".into(),
                );
            }
            if m.model == MaterialModel::Rod && !m.radius.is_some_and(|r| r > 0.0 && r.is_finite())
            {
                return bad(
                    f("material.radius"),
                    "a rod needs a positive cross-section radius in m".into(),
                );
            }
            if let Some(kb) = m.bending_stiffness {
                if !(kb.is_finite() && kb >= 0.0) {
                    return bad(
                        f("material.bending_stiffness"),
                        format!("must be a non-negative stiffness, got {kb}"),
                    );
                }
            }
            let rod_geometry = matches!(
                b.mesh,
                MeshSource::Generator {
                    generator: Generator::Rod,
                    ..
                }
            );
            if rod_geometry != (m.model == MaterialModel::Rod) {
                return bad(
                    f("material.model"),
                    "rod bodies use the \"rod\" generator and the \"rod\" material together".into(),
                );
            }
            if let MeshSource::Generator { generator, .. } = &b.mesh {
                if generator.is_cloth() != (m.model == MaterialModel::Cloth) {
                    return bad(
                        f("material.model"),
                        "cloth bodies use a cloth generator (\"cloth\", \"tube\", \"funnel\", \
                         \"knot-tube\", \"reef-knot\", \"bow-knot\") or a surface mesh file, and the \"cloth\" material together"
                            .into(),
                    );
                }
            }
            if let MeshSource::Generator {
                generator,
                size,
                cells,
            } = &b.mesh
            {
                let needs = match generator {
                    Generator::Sphere | Generator::Rod | Generator::Coil => 1,
                    Generator::Cloth | Generator::Tube => 2,
                    Generator::Funnel
                    | Generator::KnotTube
                    | Generator::ReefKnot
                    | Generator::BowKnot => 2,
                    _ => 3,
                };
                let size_needs = match generator {
                    Generator::Coil
                    | Generator::SquishyBall
                    | Generator::Funnel
                    | Generator::KnotTube
                    | Generator::ReefKnot
                    | Generator::BowKnot => 3,
                    _ => needs,
                };
                if !size[..size_needs].iter().all(|x| x.is_finite() && *x > 0.0) {
                    return bad(
                        f("mesh.size"),
                        format!(
                            "{generator:?} needs {size_needs} positive size(s) in m, got {size:?}"
                        ),
                    );
                }
                if *generator == Generator::Coil && size[2] <= size[1] {
                    return bad(
                        f("mesh.size"),
                        format!(
                            "a coil's radius ({} m) must exceed its thickness ({} m)",
                            size[2], size[1]
                        ),
                    );
                }
                if *generator == Generator::KnotTube && size[1] >= 0.5 * size[0] {
                    return bad(
                        f("mesh.size"),
                        format!(
                            "a knot tube's radius ({} m) must be below half its knot scale ({} m)",
                            size[1], size[0]
                        ),
                    );
                }
                let two_tubes = matches!(generator, Generator::ReefKnot | Generator::BowKnot);
                if two_tubes && size[1] >= 0.4 * size[0] {
                    return bad(
                        f("mesh.size"),
                        format!(
                            "a {generator:?}'s tube radius ({} m) must be below 0.4 times its knot \
                             scale ({} m)",
                            size[1], size[0]
                        ),
                    );
                }
                if cells[..needs].iter().any(|&c| c == 0 || c > 1000) {
                    return bad(
                        f("mesh.cells"),
                        format!("cells must be in 1..=1000, got {cells:?}"),
                    );
                }
                let tubular = matches!(
                    generator,
                    Generator::Tube
                        | Generator::Funnel
                        | Generator::KnotTube
                        | Generator::ReefKnot
                        | Generator::BowKnot
                );
                if tubular && cells[0] < 3 {
                    return bad(
                        f("mesh.cells"),
                        format!(
                            "a {generator:?} needs at least 3 cells around, got {}",
                            cells[0]
                        ),
                    );
                }
                if (*generator == Generator::KnotTube || two_tubes) && cells[1] < 8 {
                    return bad(
                        f("mesh.cells"),
                        format!(
                            "a {generator:?} needs at least 8 segments along, got {}",
                            cells[1]
                        ),
                    );
                }
            }
            if !(b.scale.is_finite() && b.scale > 0.0) {
                return bad(f("scale"), format!("must be positive, got {}", b.scale));
            }
            if !finite3(&b.translation) || !finite3(&b.velocity) || !finite3(&b.rotation_deg) {
                return bad(
                    f("translation/velocity/rotation_deg"),
                    "must be finite".into(),
                );
            }
            for (k, v) in b.fixed.iter().enumerate() {
                check_set(v).or_else(|m| bad(f(&format!("fixed[{k}]")), m))?;
            }
            for (k, r) in b.material_region.iter().enumerate() {
                if !(r.youngs_modulus.is_finite() && r.youngs_modulus > 0.0) {
                    return bad(
                        f(&format!("material_region[{k}].youngs_modulus")),
                        format!(
                            "must be a positive stiffness in Pa, got {}",
                            r.youngs_modulus
                        ),
                    );
                }
                if (0..3).any(|c| !(r.region.min[c] <= r.region.max[c])) {
                    return bad(
                        f(&format!("material_region[{k}].region")),
                        "min must not exceed max".into(),
                    );
                }
            }
            for (k, mo) in b.motion.iter().enumerate() {
                check_set(&mo.vertices).or_else(|m| bad(f(&format!("motion[{k}].vertices")), m))?;
                if let Some(a) = mo.axis {
                    if !finite3(&a) || a.iter().all(|x| *x == 0.0) {
                        return bad(
                            f(&format!("motion[{k}].axis")),
                            "must be a non-zero finite direction".into(),
                        );
                    }
                }
                if !finite3(&mo.velocity)
                    || !finite3(&mo.center)
                    || !mo.angular_velocity.is_finite()
                {
                    return bad(
                        f(&format!("motion[{k}]")),
                        "velocity, center and angular_velocity must be finite".into(),
                    );
                }
                if let Some(t) = mo.until {
                    if !(t >= 0.0) || t.is_infinite() {
                        return bad(
                            f(&format!("motion[{k}].until")),
                            format!("must be a finite time >= 0 s, got {t}"),
                        );
                    }
                }
            }
            for (k, fo) in b.force.iter().enumerate() {
                check_set(&fo.vertices).or_else(|m| bad(f(&format!("force[{k}].vertices")), m))?;
                if fo.total.is_none() == fo.traction.is_none() {
                    return bad(
                        f(&format!("force[{k}]")),
                        "give exactly one of `total` (N) or `traction` (Pa)".into(),
                    );
                }
            }
        }
        for (i, c) in self.colliders.iter().enumerate() {
            let f = |k: &str| format!("collider[{i}].{k}");
            if !(c.friction.is_finite() && c.friction >= 0.0) {
                return bad(
                    f("friction"),
                    format!("must be a non-negative coefficient, got {}", c.friction),
                );
            }
            if let Err(m) = check_spin(c) {
                return bad(f("angular_velocity"), m);
            }
            match &c.shape {
                ColliderShape::Plane { normal, .. }
                    if normal.iter().all(|x| *x == 0.0) || !finite3(normal) =>
                {
                    return bad(
                        f("shape.plane.normal"),
                        "must be a non-zero finite direction".into(),
                    );
                }
                ColliderShape::Sphere { radius, .. } if !(radius.is_finite() && *radius > 0.0) => {
                    return bad(
                        f("shape.sphere.radius"),
                        format!("must be positive (m), got {radius}"),
                    );
                }
                ColliderShape::Box { min, max } if (0..3).any(|k| !(min[k] < max[k])) => {
                    return bad(
                        f("shape.box"),
                        format!("min {min:?} must be below max {max:?} on every axis"),
                    );
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn check_set(v: &VertexSet) -> Result<(), String> {
    match (&v.region, &v.indices) {
        (None, None) | (Some(_), Some(_)) => {
            Err("give exactly one of `region` or `indices`".into())
        }
        (Some(r), None) if (0..3).any(|k| !(r.min[k] <= r.max[k])) => Err(format!(
            "region min {:?} must not exceed max {:?}",
            r.min, r.max
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUBE: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 2
gravity = [0.0, 0.0, -9.81]

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.5, 0.5, 0.5], cells = [10, 10, 10] }
translation = [0.0, 0.0, 0.35]
material = { model = "stable-neo-hookean", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 1000.0 }

[[body]]
name = "sheet"
mesh = { file = "sheet.obj" }
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }
fixed = [{ region = { min = [-1.0, -1.0, -1.0], max = [1.0, -0.49, 1.0] } }]

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.3
"#;

    #[test]
    fn parses_a_scene_with_defaults() {
        let s = Scene::parse(CUBE, "cube.toml", &[]).unwrap();
        assert_eq!(s.bodies.len(), 2);
        assert!((s.simulation.time_step() - 1.0 / 120.0).abs() < 1e-15);
        assert_eq!(s.simulation.solver, SolverKind::Newton);
        assert_eq!(s.bodies[0].scale, 1.0);
        assert!(matches!(
            s.bodies[0].mesh,
            MeshSource::Generator {
                generator: Generator::Box,
                ..
            }
        ));
        assert!(matches!(s.bodies[1].mesh, MeshSource::File { .. }));
        assert!(matches!(s.colliders[0].shape, ColliderShape::Plane { .. }));
        assert_eq!(s.solver.pcg_tolerance, 1e-4);
    }

    #[test]
    fn unknown_fields_and_wrong_types_name_the_line() {
        let text = CUBE.replace("substeps = 2", "substeps = 2\ntime_stepp = 0.01");
        let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
        assert!(e.message.contains("time_stepp"), "{e}");
        assert_eq!(e.line, Some(5), "{e}");
        let text = CUBE.replace("substeps = 2", "substeps = \"two\"");
        let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.to_string().starts_with("cube.toml:4: "), "{e}");
        let text = CUBE.replace("model = \"cloth\"", "model = \"jelly\"");
        assert!(Scene::parse(&text, "cube.toml", &[])
            .unwrap_err()
            .message
            .contains("jelly"));
    }

    #[test]
    fn impossible_values_name_the_field() {
        let cases = [
            (
                "poisson_ratio = 0.3, density = 1000.0",
                "poisson_ratio = 0.5, density = 1000.0",
                "body[0].material.poisson_ratio",
            ),
            (
                "youngs_modulus = 5e5",
                "youngs_modulus = -5e5",
                "body[0].material.youngs_modulus",
            ),
            (
                "density = 1000.0",
                "density = 0.0",
                "body[0].material.density",
            ),
            (", thickness = 0.001", "", "body[1].material.thickness"),
            ("substeps = 2", "substeps = 0", "simulation.substeps"),
            ("friction = 0.3", "friction = -1.0", "collider[0].friction"),
            (
                "friction = 0.3",
                "friction = 0.3\nangular_velocity = [0.0, 0.0, 1.0]",
                "collider[0].angular_velocity",
            ),
            (
                "cells = [10, 10, 10]",
                "cells = [10, 0, 10]",
                "body[0].mesh.cells",
            ),
            ("name = \"sheet\"", "name = \"cube\"", "body[1].name"),
            (
                "max = [1.0, -0.49, 1.0]",
                "max = [1.0, -2.0, 1.0]",
                "body[1].fixed[0]",
            ),
        ];
        for (from, to, field) in cases {
            let text = CUBE.replacen(from, to, 1);
            assert_ne!(text, CUBE, "{from}");
            let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
        }
        let e = Scene::parse(
            &CUBE.replace("frame_rate = 60.0", "frame_rate = nan"),
            "c",
            &[],
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("simulation.frame_rate"), "{e}");
    }

    #[test]
    fn overrides_are_applied_and_checked() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                "simulation.substeps=4",
                "body[0].material.density=2000",
                "body.1.velocity=[0, 1, 0]",
                "simulation.solver=symplectic-euler",
            ]),
        )
        .unwrap();
        assert_eq!(s.simulation.substeps, 4);
        assert_eq!(s.bodies[0].material.density, 2000.0);
        assert_eq!(s.bodies[1].velocity, [0.0, 1.0, 0.0]);
        assert_eq!(s.simulation.solver, SolverKind::SymplecticEuler);
        let e = Scene::parse(CUBE, "cube.toml", &set(&["simulation.substepz=4"])).unwrap_err();
        assert!(
            e.message.contains("substepz") && e.message.contains("--set"),
            "{e}"
        );
        let e = Scene::parse(CUBE, "cube.toml", &set(&["body[7].name=x"])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body[7].name"), "{e}");
        let e = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&["body[0].material.poisson_ratio=0.7"]),
        )
        .unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("body[0].material.poisson_ratio"),
            "{e}"
        );
        assert!(Scene::parse(CUBE, "cube.toml", &set(&["no-equals-sign"])).is_err());
    }

    #[test]
    fn xpbd_settings_parse_and_are_checked() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                "simulation.solver=xpbd",
                "xpbd.iterations=3",
                "xpbd.tet_solve=sequential",
            ]),
        )
        .unwrap();
        assert_eq!(s.simulation.solver, SolverKind::Xpbd);
        assert_eq!(s.xpbd.iterations, 3);
        assert_eq!(s.xpbd.substeps, 20, "default");
        assert_eq!(s.xpbd.tet_solve, crate::stepper::xpbd::TetSolve::Sequential);
        for (o, field) in [
            ("xpbd.substeps=0", "xpbd.substeps"),
            ("xpbd.iterations=0", "xpbd.iterations"),
            ("xpbd.damping=-1.0", "xpbd.damping"),
        ] {
            let e = Scene::parse(CUBE, "cube.toml", &set(&[o])).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
        }
        let e = Scene::parse(CUBE, "cube.toml", &set(&["xpbd.iteratons=2"])).unwrap_err();
        assert!(e.message.contains("iteratons"), "{e}");
        let e = Scene::parse(CUBE, "cube.toml", &set(&["xpbd.tet_solve=jacobi"])).unwrap_err();
        assert!(e.message.contains("jacobi"), "{e}");
    }

    #[test]
    fn two_way_fields_are_validated() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                "collision.method=two-way",
                "collision.backward=log-barrier",
                "collision.barrier_strength=20.0",
                "collision.contact_coloring=gpu",
                "collision.sweep_dispatch=per-color",
            ]),
        )
        .unwrap();
        assert_eq!(
            s.collision.two_way().backward,
            crate::contact::two_way::Backward::LogBarrier {
                strength: 20.0,
                range: 1e-3
            }
        );
        for (o, field) in [
            ("collision.d_max=0.001", "collision.d_max"),
            ("collision.gamma=1.5", "collision.gamma"),
            (
                "collision.barrier_strength=-1.0",
                "collision.barrier_strength",
            ),
            (
                "collision.barrier_strength=nan",
                "collision.barrier_strength",
            ),
            ("collision.barrier_range=0.0", "collision.barrier_range"),
            ("collision.barrier_range=0.01", "collision.barrier_range"),
        ] {
            let e = Scene::parse(
                CUBE,
                "cube.toml",
                &set(&[
                    "collision.method=two-way",
                    "collision.backward=log-barrier",
                    o,
                ]),
            )
            .unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
        }
        assert_eq!(
            s.collision.two_way().contact_coloring,
            crate::contact::two_way::ContactColoring::Gpu
        );
        assert_eq!(
            s.collision.two_way().sweep_dispatch,
            crate::contact::two_way::SweepDispatch::PerColor
        );
        let e =
            Scene::parse(CUBE, "cube.toml", &set(&["collision.contact_coloring=cpu"])).unwrap_err();
        assert!(e.message.contains("cpu"), "{e}");
        let e = Scene::parse(CUBE, "cube.toml", &set(&["collision.backward=newton"])).unwrap_err();
        assert!(e.message.contains("newton"), "{e}");
    }

    #[test]
    fn two_way_friction_and_repulsion_fields_are_validated() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let two_way = "collision.method=two-way";
        let s = Scene::parse(CUBE, "cube.toml", &set(&[two_way])).unwrap();
        assert_eq!(s.collision.friction, 0.0, "friction off by default");
        assert_eq!(
            s.collision.repulsion_stiffness, 0.0,
            "repulsion off by default"
        );
        assert_eq!(s.collision.repulsion_distance(), s.collision.delta);
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                two_way,
                "collision.friction=0.3",
                "collision.repulsion_stiffness=2.0",
                "collision.repulsion_distance=0.0015",
            ]),
        )
        .unwrap();
        assert_eq!(s.collision.friction, 0.3);
        assert_eq!(s.collision.repulsion_stiffness, 2.0);
        assert_eq!(s.collision.repulsion_distance(), 0.0015);
        for (o, field) in [
            ("collision.friction=-0.5", "collision.friction"),
            ("collision.friction=nan", "collision.friction"),
            (
                "collision.repulsion_stiffness=-1.0",
                "collision.repulsion_stiffness",
            ),
            (
                "collision.repulsion_stiffness=nan",
                "collision.repulsion_stiffness",
            ),
            (
                "collision.repulsion_distance=-0.001",
                "collision.repulsion_distance",
            ),
            (
                "collision.repulsion_distance=nan",
                "collision.repulsion_distance",
            ),
            (
                "collision.repulsion_distance=0.0",
                "collision.repulsion_distance",
            ),
            // Above d_min (0.002): pairs within it could be missing from the proximity list.
            (
                "collision.repulsion_distance=0.003",
                "collision.repulsion_distance",
            ),
        ] {
            let e = Scene::parse(CUBE, "cube.toml", &set(&[two_way, o])).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
        }
        // Repulsion is a two-way feature.
        let e = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&["collision.repulsion_stiffness=1.0"]),
        )
        .unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("collision.repulsion_stiffness"),
            "{e}"
        );
    }

    #[test]
    fn floor_release_fields_are_validated() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let two_way = "collision.method=two-way";
        let s = Scene::parse(CUBE, "cube.toml", &set(&[two_way])).unwrap();
        assert!(s.collision.floor_release, "floor release on by default");
        let xi = s.collision.min_separation;
        assert_eq!(s.collision.two_way().floor_release, Some(10.0 * xi));
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[two_way, "collision.floor_release_distance=0.0005"]),
        )
        .unwrap();
        assert_eq!(s.collision.two_way().floor_release, Some(5e-4));
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[two_way, "collision.floor_release=false"]),
        )
        .unwrap();
        assert_eq!(s.collision.two_way().floor_release, None);
        for o in [
            // At most 2 min_separation (the distance-bounded step's floor), above d_max, nan.
            "collision.floor_release_distance=0.00002",
            "collision.floor_release_distance=0.0",
            "collision.floor_release_distance=0.005",
            "collision.floor_release_distance=nan",
        ] {
            let e = Scene::parse(CUBE, "cube.toml", &set(&[two_way, o])).unwrap_err();
            assert_eq!(
                e.field.as_deref(),
                Some("collision.floor_release_distance"),
                "{o}: {e}"
            );
        }
    }

    #[test]
    fn shortest_path_fields_and_generators_are_validated() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                "collision.method=shortest-path",
                "collision.friction=0.4",
                "collision.max_correction=0.001",
                "collision.query_all_vertices=true",
            ]),
        )
        .unwrap();
        assert_eq!(s.collision.method, CollisionMethod::ShortestPath);
        let r = s.collision.recovery();
        assert_eq!((r.friction, r.max_correction), (0.4, 0.001));
        assert!(r.all_vertices && r.edges && r.query.cull, "defaults");
        for (o, field) in [
            ("collision.friction=-0.1", "collision.friction"),
            ("collision.contact_offset=-1.0", "collision.contact_offset"),
            ("collision.start_time=-1.0", "collision.start_time"),
            ("collision.max_correction=0.0", "collision.max_correction"),
            (
                "collision.penalty_stiffness=0.0",
                "collision.penalty_stiffness",
            ),
            (
                "collision.penalty_stiffness=nan",
                "collision.penalty_stiffness",
            ),
            (
                "solver.newton_gradient_tolerance=-1.0",
                "solver.newton_gradient_tolerance",
            ),
            ("collision.relaxation=2.0", "collision.relaxation"),
            ("collision.ccd_distance=0.0", "collision.ccd_distance"),
            ("collision.response_passes=0", "collision.response_passes"),
            ("collision.detection=\"sometimes\"", "collision.detection"),
        ] {
            let e = Scene::parse(CUBE, "cube.toml", &set(&[o])).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
        }
        let coil = |size: &str| {
            format!(
                "[[body]]\nname = \"c\"\nmesh = {{ generator = \"coil\", size = {size}, cells = [2, 1, 1] }}\n\
                 material = {{ model = \"stable-neo-hookean\", youngs_modulus = 1e4, poisson_ratio = 0.4, density = 1000.0 }}\n"
            )
        };
        Scene::parse(&coil("[1.0, 0.04, 0.1]"), "coil.toml", &[]).unwrap();
        let e = Scene::parse(&coil("[1.0, 0.04, 0.03]"), "coil.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body[0].mesh.size"), "{e}");
        assert!(e.message.contains("radius"), "{e}");
    }

    #[test]
    fn motion_stop_times_are_validated() {
        let body = |extra: &str| {
            format!(
                "[[body]]\nname = \"c\"\nmesh = {{ generator = \"cloth\", size = [0.1, 0.1, 0.0], cells = [2, 2, 1] }}\n\
                 material = {{ model = \"cloth\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }}\n\
                 motion = [{{ vertices = {{ indices = [0] }}, velocity = [0.1, 0.0, 0.0]{extra} }}]\n"
            )
        };
        let s = Scene::parse(&body(", until = 0.5"), "m.toml", &[]).unwrap();
        assert_eq!(s.bodies[0].motion[0].until, Some(0.5));
        for (extra, field) in [
            (", until = -0.5", "body[0].motion[0].until"),
            (", until = nan", "body[0].motion[0].until"),
            (", until = inf", "body[0].motion[0].until"),
            (", angular_velocity = inf", "body[0].motion[0]"),
        ] {
            let e = Scene::parse(&body(extra), "m.toml", &[]).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{extra}: {e}");
        }
    }

    #[test]
    fn tube_funnel_and_knot_tube_generators_are_validated() {
        let body = |generator: &str, size: &str, cells: &str, model: &str| {
            format!(
                "[[body]]\nname = \"t\"\nmesh = {{ generator = \"{generator}\", size = {size}, cells = {cells} }}\n\
                 material = {{ model = \"{model}\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }}\n"
            )
        };
        for (g, size, cells) in [
            ("tube", "[0.1, 0.6, 0.0]", "[16, 10, 1]"),
            ("funnel", "[0.3, 0.05, 0.2]", "[24, 6, 1]"),
            ("knot-tube", "[0.05, 0.02, 0.1]", "[8, 120, 1]"),
            ("reef-knot", "[0.03, 0.01, 0.1]", "[8, 80, 1]"),
            ("bow-knot", "[0.03, 0.01, 0.1]", "[8, 112, 1]"),
        ] {
            let s = Scene::parse(&body(g, size, cells, "cloth"), "t.toml", &[]).unwrap();
            let MeshSource::Generator { generator, .. } = s.bodies[0].mesh else {
                panic!("generator")
            };
            assert!(generator.is_cloth(), "{g}");
            let e = Scene::parse(&body(g, size, cells, "stable-neo-hookean"), "t.toml", &[])
                .unwrap_err();
            assert_eq!(
                e.field.as_deref(),
                Some("body[0].material.model"),
                "{g}: {e}"
            );
        }
        for (g, size, cells, field, says) in [
            (
                "tube",
                "[0.0, 0.6, 0.0]",
                "[16, 10, 1]",
                "body[0].mesh.size",
                "positive",
            ),
            (
                "tube",
                "[0.1, 0.6, 0.0]",
                "[2, 10, 1]",
                "body[0].mesh.cells",
                "around",
            ),
            (
                "tube",
                "[0.1, 0.6, 0.0]",
                "[16, 0, 1]",
                "body[0].mesh.cells",
                "1..=1000",
            ),
            (
                "funnel",
                "[0.3, 0.0, 0.2]",
                "[24, 6, 1]",
                "body[0].mesh.size",
                "positive",
            ),
            (
                "funnel",
                "[0.3, 0.05, -0.2]",
                "[24, 6, 1]",
                "body[0].mesh.size",
                "positive",
            ),
            (
                "funnel",
                "[0.3, 0.05, 0.2]",
                "[24, 0, 1]",
                "body[0].mesh.cells",
                "1..=1000",
            ),
            (
                "knot-tube",
                "[0.05, 0.03, 0.1]",
                "[8, 120, 1]",
                "body[0].mesh.size",
                "half",
            ),
            (
                "knot-tube",
                "[0.05, 0.02, 0.0]",
                "[8, 120, 1]",
                "body[0].mesh.size",
                "positive",
            ),
            (
                "knot-tube",
                "[0.05, 0.02, 0.1]",
                "[8, 4, 1]",
                "body[0].mesh.cells",
                "segments",
            ),
            (
                "reef-knot",
                "[0.03, 0.012, 0.1]",
                "[8, 80, 1]",
                "body[0].mesh.size",
                "0.4 times",
            ),
            (
                "bow-knot",
                "[0.03, 0.01, -0.1]",
                "[8, 80, 1]",
                "body[0].mesh.size",
                "positive",
            ),
            (
                "bow-knot",
                "[0.03, 0.01, 0.1]",
                "[2, 80, 1]",
                "body[0].mesh.cells",
                "around",
            ),
            (
                "reef-knot",
                "[0.03, 0.01, 0.1]",
                "[8, 7, 1]",
                "body[0].mesh.cells",
                "segments",
            ),
        ] {
            let e = Scene::parse(&body(g, size, cells, "cloth"), "t.toml", &[]).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{g} {size} {cells}: {e}");
            assert!(e.message.contains(says), "{g} {size} {cells}: {e}");
        }
    }

    #[test]
    fn load_reports_missing_files_and_resolves_mesh_paths() {
        let e = Scene::load(Path::new("/nonexistent/scene.toml"), &[]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/scene.toml: cannot read"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("supple-scene-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s.toml"), CUBE).unwrap();
        let s = Scene::load(&dir.join("s.toml"), &[]).unwrap();
        let MeshSource::File { file } = &s.bodies[1].mesh else {
            panic!("file mesh")
        };
        assert_eq!(file, &dir.join("sheet.obj"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn repository_scenes_are_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                Scene::load(&p, &[]).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(
            n >= 6,
            "expected the scenes of the simulation issue, found {n}"
        );
    }
}
