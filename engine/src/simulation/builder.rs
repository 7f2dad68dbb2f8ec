//! Building a simulation from code instead of a scene file, and stepping it within a time
//! budget.
//!
//! A [`SimulationBuilder`] assembles the same [`Scene`] a TOML file would describe (bodies,
//! materials, colliders, time stepping, solver settings), checks it with the scene file's
//! rules ([`Scene::validate`]) and builds the [`Simulation`]:
//!
//! ```ignore
//! use supple::scene::{Body, Generator, Material, MaterialModel, MeshSource};
//! use supple::simulation::SimulationBuilder;
//! use std::time::Duration;
//!
//! let ctx = supple::Context::new(supple::ContextOptions::from_env())?;
//! let mut sim = SimulationBuilder::new()
//!     .frame_rate(60.0)
//!     .substeps(2)
//!     .body(
//!         Body::new(
//!             "cube",
//!             MeshSource::generator(Generator::Box, [0.2, 0.2, 0.2], [4, 4, 4]),
//!             Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0),
//!         )
//!         .translated([0.0, 0.0, 0.3]),
//!     )
//!     .ground_plane([0.0, 0.0, 1.0], 0.0)
//!     .build(&ctx)?;
//! // A real-time host: spend at most 16 ms per display frame on simulation.
//! let r = sim.step_for(Duration::from_millis(16))?;
//! println!("{} frames in {:?}", r.frames, r.elapsed);
//! let x = sim.positions()?; // one [x, y, z] per model vertex (m)
//! ```
//!
//! (The same code runs in the test `tests/gpu/simulation_api.rs`.)

use super::{FrameStats, SimError, Simulation};
use crate::scene::{
    Body, Collider, ColliderShape, CollisionSettings, Generator, Material, MaterialModel,
    MeshSource, NewtonConfig, Scene, SceneError, SolverKind, XpbdConfig,
};
use crate::vk::Context;
use std::time::{Duration, Instant};

/// Assembles a [`Scene`] from code and builds a [`Simulation`] from it.
#[derive(Debug, Clone)]
pub struct SimulationBuilder {
    scene: Scene,
}

impl Default for SimulationBuilder {
    fn default() -> Self {
        SimulationBuilder::new()
    }
}

impl SimulationBuilder {
    /// An empty scene with the scene file's defaults (60 frames/s, 1 substep, gravity −9.81 m/s²
    /// along z, Newton solver).
    pub fn new() -> SimulationBuilder {
        // Every Scene field has a serde default: the empty document is the default scene.
        let scene: Scene = toml::from_str("").expect("every Scene field has a default");
        SimulationBuilder { scene }
    }

    /// Starts from an existing scene (e.g. one loaded from a file) to add to it.
    pub fn from_scene(scene: Scene) -> SimulationBuilder {
        SimulationBuilder { scene }
    }

    /// Output frames per second (Hz).
    pub fn frame_rate(mut self, hz: f64) -> Self {
        self.scene.simulation.frame_rate = hz;
        self
    }

    /// Time steps per frame.
    pub fn substeps(mut self, n: u32) -> Self {
        self.scene.simulation.substeps = n;
        self
    }

    /// Gravitational acceleration (m/s²).
    pub fn gravity(mut self, g: [f64; 3]) -> Self {
        self.scene.simulation.gravity = g;
        self
    }

    /// Time integrator.
    pub fn solver(mut self, solver: SolverKind) -> Self {
        self.scene.simulation.solver = solver;
        self
    }

    /// Newton–PCG parameters (`[solver]`).
    pub fn solver_settings(mut self, settings: NewtonConfig) -> Self {
        self.scene.solver = settings;
        self
    }

    /// XPBD parameters (`[xpbd]`).
    pub fn xpbd_settings(mut self, settings: XpbdConfig) -> Self {
        self.scene.xpbd = settings;
        self
    }

    /// Collision handling between deformable surfaces (`[collision]`).
    pub fn collision(mut self, settings: CollisionSettings) -> Self {
        self.scene.collision = settings;
        self
    }

    /// Adds a deformable body.
    pub fn body(mut self, body: Body) -> Self {
        self.scene.bodies.push(body);
        self
    }

    /// Adds an analytic collider.
    pub fn collider(mut self, collider: Collider) -> Self {
        self.scene.colliders.push(collider);
        self
    }

    /// Adds a frictionless static ground plane `normal · x ≥ offset` (m).
    pub fn ground_plane(self, normal: [f64; 3], offset: f64) -> Self {
        self.collider(Collider {
            shape: ColliderShape::Plane { normal, offset },
            friction: 0.0,
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            offset: 0.0,
        })
    }

    /// The scene assembled so far.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The checked scene (the errors a scene file with these values would get).
    pub fn into_scene(self) -> Result<Scene, SceneError> {
        self.scene.validate("SimulationBuilder")?;
        Ok(self.scene)
    }

    /// Checks the scene and builds the simulation on `ctx`.
    pub fn build(self, ctx: &Context) -> Result<Simulation, SimError> {
        let scene = self.into_scene()?;
        Simulation::new(ctx, &scene)
    }
}

impl Body {
    /// A body at the origin, unrotated, unscaled, at rest, with nothing fixed, moved or loaded.
    pub fn new(name: impl Into<String>, mesh: MeshSource, material: Material) -> Body {
        Body {
            name: name.into(),
            mesh,
            material,
            translation: [0.0; 3],
            rotation_deg: [0.0; 3],
            scale: 1.0,
            velocity: [0.0; 3],
            fixed: Vec::new(),
            motion: Vec::new(),
            force: Vec::new(),
            material_region: Vec::new(),
            collider_offset: 0.0,
        }
    }

    /// The body translated by `t` (m).
    pub fn translated(mut self, t: [f64; 3]) -> Body {
        self.translation = t;
        self
    }

    /// The body with initial velocity `v` (m/s).
    pub fn with_velocity(mut self, v: [f64; 3]) -> Body {
        self.velocity = v;
        self
    }
}

impl Material {
    /// A material without cloth/rod parameters: Young's modulus (Pa), Poisson ratio, density
    /// (kg/m³).
    pub fn new(
        model: MaterialModel,
        youngs_modulus: f64,
        poisson_ratio: f64,
        density: f64,
    ) -> Material {
        Material {
            model,
            youngs_modulus,
            poisson_ratio,
            density,
            thickness: None,
            bending_stiffness: None,
            radius: None,
        }
    }
}

impl MeshSource {
    /// A procedural mesh: `size` (m) and `cells` as in the scene file's `mesh` table.
    pub fn generator(generator: Generator, size: [f64; 3], cells: [u32; 3]) -> MeshSource {
        MeshSource::Generator {
            generator,
            size,
            cells,
        }
    }

    /// A mesh given as arrays: vertex positions (m) and 0-based tets (solids), triangles
    /// (cloth) or edges (rods: `[k, k+1]` along one polyline); pass empty vectors for the
    /// others. Checked when the simulation is built (see [`MeshSource::check_arrays`]).
    pub fn arrays(
        vertices: Vec<[f64; 3]>,
        tets: Vec<[u32; 4]>,
        triangles: Vec<[u32; 3]>,
        edges: Vec<[u32; 2]>,
    ) -> MeshSource {
        MeshSource::Arrays {
            vertices,
            tets,
            triangles,
            edges,
        }
    }

    /// Checks arrays as a simulation build would (non-empty, finite, indices in range, no
    /// degenerate or inverted tet), without a GPU; `name` labels the error
    /// (`NAME.vertices`, `NAME.tets`, …). Other sources pass.
    pub fn check_arrays(&self, name: &str) -> Result<(), supple_mesh::MeshError> {
        match self {
            MeshSource::Arrays {
                vertices,
                tets,
                triangles,
                edges,
            } => supple_mesh::check_arrays(name, vertices, tets, triangles, edges),
            _ => Ok(()),
        }
    }

    /// A mesh file (any format `supple mesh info` reads).
    pub fn file(path: impl Into<std::path::PathBuf>) -> MeshSource {
        MeshSource::File { file: path.into() }
    }
}

/// What [`Simulation::step_for`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetReport {
    /// Frames stepped.
    pub frames: u32,
    /// Wall time spent.
    pub elapsed: Duration,
    /// Statistics of each frame, in order.
    pub stats: Vec<FrameStats>,
}

impl Simulation {
    /// Steps whole frames until `budget` (wall time) is spent: a frame is started only while
    /// the time left is at least the longest frame seen so far in this call, so the budget is
    /// overrun by at most one frame's variation; with a non-zero budget at least one frame
    /// runs. Returns how many frames ran and their statistics.
    pub fn step_for(&mut self, budget: Duration) -> Result<BudgetReport, SimError> {
        let start = Instant::now();
        let mut report = BudgetReport::default();
        let mut longest = Duration::ZERO;
        while !budget.is_zero() && start.elapsed() + longest <= budget {
            let t0 = Instant::now();
            report.stats.push(self.step_frame()?);
            report.frames += 1;
            longest = longest.max(t0.elapsed());
        }
        report.elapsed = start.elapsed();
        Ok(report)
    }
}
