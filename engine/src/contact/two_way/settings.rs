//! Settings of the two-way method: the solver's own [`TwoWaySettings`] with the paper's Table 3
//! defaults ([`paper`]), and their conversion from the scene's `[collision]` table
//! ([`TwoWaySettings::from_scene`]).

use crate::proximity::BodyFilter;
use crate::scene::{
    CollisionBackward, CollisionBound, CollisionColoring, CollisionSettings, CollisionSweepDispatch,
};

/// The two-way IPM paper's Table 3 (SI units).
pub mod paper {
    /// D_min (m).
    pub const D_MIN: f64 = 2e-3;
    /// D_max (m).
    pub const D_MAX: f64 = 4e-3;
    /// δ (m).
    pub const DELTA: f64 = 1e-3;
    /// σ.
    pub const SIGMA: f64 = 1.1;
    /// γ.
    pub const GAMMA: f64 = 0.9;
    /// ε.
    pub const EPSILON: f64 = 1e-4;
    /// L.
    pub const MAX_STEPS: u32 = 512;
    /// ξ (m): not in the paper; a floor far above f32 rounding (δ / 100).
    pub const MIN_SEPARATION: f64 = 1e-5;
}

/// How far a vertex may move in one forward step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepBound {
    /// The two-way IPM bound (Eq. 20): |Δx_i| ≤ γ D_i / 2 with the damping γ of the settings.
    HalfDistance,
    /// The offset-geometric-contact bound b_v = γ_p min(d_min,v, d^E_min,v, d^T_min,v) (OGC slides,
    /// Eq. 21) with relaxation 0 < γ_p < 0.5. The three minima are the distances of the pairs
    /// holding v as a vertex, an edge end or a triangle corner, i.e. the same D_i; only the
    /// factor differs.
    Ogc {
        /// γ_p.
        relaxation: f64,
    },
}

/// What precedes each forward step: the paper's backward step, or its log-barrier baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Backward {
    /// The two-way backward step (§4): one projected multicolor Gauss–Seidel sweep over the
    /// linearised contact (and edge-length) constraints updates the target y.
    GaussSeidel,
    /// The log-barrier baseline of §3.4 (Eq. 7–8): no backward step and no edge constraints; each
    /// step's target is the dynamics target minus the preconditioned barrier gradient,
    /// t_i = y_i − ½ w_i Σ_ρ ∂B_ρ/∂x_i at x^(l), B_ρ = k (d − d̂)² max(−ln(d / d̂), 0), and the
    /// forward step descends toward it with the same bounded step sizes (gradient descent on
    /// ‖x − y‖² + Σ_ρ B_ρ, as in the paper's comparison).
    LogBarrier {
        /// k relative to m/h² (dimensionless: the paper's k = 20 kg/s² is 20 h² / m̄).
        strength: f64,
        /// d̂ (m): pairs farther apart feel no barrier (at most D_min, so every pair within it
        /// is in the proximity list).
        range: f64,
    },
}

/// Up to this many collision vertices, `Auto` colors contacts on the host and fuses the sweep
/// into one dispatch on GPUs too: on an H100 (docs/measurements.md, 2026-11-26) that was 6x
/// faster at 1,231 vertices and 2.4x at 19,683 than Jones–Plassmann rounds and per-color
/// dispatches (the device idles between hundreds of tiny dispatches and round trips), while at
/// 77,763 vertices the per-color sweep was 3.7x faster than the single-workgroup one.
pub const AUTO_SMALL_VERTICES: usize = 20_000;

/// Where the contact constraints of each proximity search are colored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactColoring {
    /// On the host for CPU Vulkan devices (lavapipe) and for up to [`AUTO_SMALL_VERTICES`]
    /// collision vertices, on the GPU otherwise.
    Auto,
    /// Jones–Plassmann rounds on the GPU (the paper's choice; hundreds of small dispatches
    /// when dense contact needs hundreds of colors). Constraints split over two bindings
    /// (more than the device's `maxStorageBufferRange`, `two_way::split`) are colored on the
    /// host.
    Gpu,
    /// Greedy coloring on the host of the constraints read back (deterministic; on a CPU
    /// device the "GPU" is the same CPU, and one pass beats hundreds of dispatched rounds).
    Host,
}

/// How the backward step's multicolor sweep is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepDispatch {
    /// Fused on CPU Vulkan devices (lavapipe) and for up to [`AUTO_SMALL_VERTICES`] collision
    /// vertices, per color otherwise.
    Auto,
    /// One dispatch per contact color and per edge color (the paper's GPU scheme).
    PerColor,
    /// The whole sweep in one single-workgroup dispatch with a barrier between colors
    /// (`two_way_fused_sweep.comp`; bit-identical results, for CPU devices).
    Fused,
}

/// Settings of the two-way solver (SI units). Defaults: the paper's Table 3.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoWaySettings {
    /// D_min (m): search again when the reuse bound falls below it.
    pub d_min: f64,
    /// D_max (m): proximity search distance.
    pub d_max: f64,
    /// δ (m): separation the contact constraints ask for.
    pub delta: f64,
    /// σ: stretch limit of the edge-length constraints.
    pub sigma: f64,
    /// γ: damping of the forward step (fraction of D_i / 2 a vertex may move).
    pub gamma: f64,
    /// ε: a solve stops when every clock r_i is below it.
    pub epsilon: f64,
    /// L: steps per solve at most.
    pub max_steps: u32,
    /// ξ (m): minimum separation the forward step keeps between any two primitives (a floor far
    /// above f32 rounding, so finite precision never lets surfaces touch; default δ / 100).
    pub min_separation: f64,
    /// Forward-step bound.
    pub bound: StepBound,
    /// Floor release: `Some(θ)` (m) lets a vertex whose D_i is set by a floor pair (closer than
    /// θ) take the larger step of its other pairs, one fraction per connected group of floor
    /// pairs, when every floor pair of the group passes the separating-plane test
    /// (`two_way_release.comp`; proof at
    /// [`crate::cpu_reference::two_way::release_fractions`]); the
    /// distance-bounded step then keeps pairs above 2ξ, a released step above ξ. `None`: the
    /// paper's forward step alone.
    pub floor_release: Option<f64>,
    /// Backward step (or the log-barrier baseline in its place).
    pub backward: Backward,
    /// Where contact constraints are colored.
    pub contact_coloring: ContactColoring,
    /// How the backward step's sweep is dispatched.
    pub sweep_dispatch: SweepDispatch,
    /// Gauss–Seidel sweeps per backward step (the paper: 1).
    pub sweeps: u32,
    /// Steps recorded per graph run (host round trips every this many steps).
    pub steps_per_batch: u32,
    /// Search sections per step batch, each after 2 steps and run only when a step used up
    /// the reuse bound ([`super::TwoWay::set_batch_searches`]; 0: off, the host runs every
    /// search).
    pub batch_searches: u32,
    /// Initial capacity of each proximity pair list (`None`: 4 per vertex and per edge, plus
    /// 64); the lists grow when a search overflows them.
    pub initial_pair_capacity: Option<usize>,
    /// Add the edge-length constraints (Eq. 17) to the backward step.
    pub edge_constraints: bool,
    /// Which pairs collide: within a body (self-collision) and between bodies.
    pub filter: BodyFilter,
    /// Per-node GPU timestamps (backward/forward split in the report; slower on lavapipe).
    pub profile: bool,
}

impl Default for TwoWaySettings {
    fn default() -> Self {
        TwoWaySettings {
            d_min: paper::D_MIN,
            d_max: paper::D_MAX,
            delta: paper::DELTA,
            sigma: paper::SIGMA,
            gamma: paper::GAMMA,
            epsilon: paper::EPSILON,
            max_steps: paper::MAX_STEPS,
            min_separation: paper::MIN_SEPARATION,
            bound: StepBound::HalfDistance,
            floor_release: Some(10.0 * paper::MIN_SEPARATION),
            backward: Backward::GaussSeidel,
            contact_coloring: ContactColoring::Auto,
            sweep_dispatch: SweepDispatch::Auto,
            sweeps: 1,
            steps_per_batch: 8,
            batch_searches: 0,
            initial_pair_capacity: None,
            edge_constraints: true,
            filter: BodyFilter::default(),
            profile: false,
        }
    }
}

impl TwoWaySettings {
    /// Fraction γ_f of D_i a vertex may move per step.
    pub fn step_fraction(&self) -> f64 {
        match self.bound {
            StepBound::HalfDistance => 0.5 * self.gamma,
            StepBound::Ogc { relaxation } => relaxation,
        }
    }

    /// Checks every value; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be positive and finite, got {v}"))
            }
        };
        pos("d_min", self.d_min)?;
        pos("d_max", self.d_max)?;
        pos("delta", self.delta)?;
        pos("epsilon", self.epsilon)?;
        pos("min_separation", self.min_separation)?;
        if self.min_separation >= self.delta {
            return Err(format!(
                "min_separation ({}) must be below delta ({})",
                self.min_separation, self.delta
            ));
        }
        if self.d_max <= self.d_min {
            return Err(format!(
                "d_max ({}) must exceed d_min ({})",
                self.d_max, self.d_min
            ));
        }
        if !(self.sigma.is_finite() && self.sigma > 1.0) {
            return Err(format!("sigma must be > 1, got {}", self.sigma));
        }
        if !(self.gamma > 0.0 && self.gamma < 1.0) {
            return Err(format!("gamma must be in (0, 1), got {}", self.gamma));
        }
        if let Some(theta) = self.floor_release {
            if !(theta.is_finite() && theta > 2.0 * self.min_separation && theta <= self.d_max) {
                return Err(format!(
                    "floor_release_distance must be in (2 min_separation = {}, d_max = {}], \
                     got {theta}",
                    2.0 * self.min_separation,
                    self.d_max
                ));
            }
        }
        if let StepBound::Ogc { relaxation } = self.bound {
            if !(relaxation > 0.0 && relaxation < 0.5) {
                return Err(format!(
                    "ogc relaxation must be in (0, 0.5), got {relaxation}"
                ));
            }
        }
        if let Backward::LogBarrier { strength, range } = self.backward {
            if !(strength.is_finite() && strength > 0.0) {
                return Err(format!(
                    "barrier_strength must be positive and finite, got {strength}"
                ));
            }
            if !(range > 0.0 && range <= self.d_min) {
                return Err(format!(
                    "barrier_range must be in (0, d_min = {}] (pairs within it must be in \
                     the proximity list), got {range}",
                    self.d_min
                ));
            }
        }
        if self.max_steps == 0 || self.steps_per_batch == 0 || self.sweeps == 0 {
            return Err("max_steps, steps_per_batch and sweeps must be at least 1".into());
        }
        Ok(())
    }
}

impl TwoWaySettings {
    /// The solver's settings from the scene's `[collision]` table.
    pub fn from_scene(c: &CollisionSettings) -> TwoWaySettings {
        TwoWaySettings {
            d_min: c.d_min,
            d_max: c.d_max,
            delta: c.delta,
            sigma: c.sigma,
            gamma: c.gamma,
            epsilon: c.epsilon,
            max_steps: c.max_steps,
            min_separation: c.min_separation,
            bound: match c.bound {
                CollisionBound::HalfDistance => StepBound::HalfDistance,
                CollisionBound::Ogc => StepBound::Ogc {
                    relaxation: c.ogc_relaxation,
                },
            },
            floor_release: c.floor_release.then(|| c.floor_release_distance()),
            backward: match c.backward {
                CollisionBackward::GaussSeidel => Backward::GaussSeidel,
                CollisionBackward::LogBarrier => Backward::LogBarrier {
                    strength: c.barrier_strength,
                    range: c.barrier_range,
                },
            },
            contact_coloring: match c.contact_coloring {
                CollisionColoring::Auto => ContactColoring::Auto,
                CollisionColoring::Gpu => ContactColoring::Gpu,
                CollisionColoring::Host => ContactColoring::Host,
            },
            sweep_dispatch: match c.sweep_dispatch {
                CollisionSweepDispatch::Auto => SweepDispatch::Auto,
                CollisionSweepDispatch::PerColor => SweepDispatch::PerColor,
                CollisionSweepDispatch::Fused => SweepDispatch::Fused,
            },
            sweeps: 1,
            steps_per_batch: c.steps_per_batch,
            batch_searches: c.batch_searches,
            initial_pair_capacity: None,
            edge_constraints: c.edge_constraints,
            filter: BodyFilter {
                within_body: c.self_collision,
                between_bodies: true,
            },
            profile: false,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scene::Scene;

    /// A one-body scene for the conversion tests.
    pub(crate) const CUBE: &str = r#"
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.5, 0.5, 0.5], cells = [2, 2, 2] }
material = { model = "stable-neo-hookean", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 1000.0 }
"#;

    fn parse(overrides: &[&str]) -> Scene {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        Scene::parse(CUBE, "cube.toml", &o).unwrap()
    }

    #[test]
    fn parsed_scene_converts() {
        let s = parse(&[
            "collision.method=two-way",
            "collision.backward=log-barrier",
            "collision.barrier_strength=20.0",
            "collision.contact_coloring=gpu",
            "collision.sweep_dispatch=per-color",
        ]);
        let t = TwoWaySettings::from_scene(&s.collision);
        assert_eq!(
            t.backward,
            Backward::LogBarrier {
                strength: 20.0,
                range: 1e-3
            }
        );
        assert_eq!(t.contact_coloring, ContactColoring::Gpu);
        assert_eq!(t.sweep_dispatch, SweepDispatch::PerColor);
    }

    #[test]
    fn floor_release_converts() {
        let two_way = "collision.method=two-way";
        let s = parse(&[two_way]);
        let xi = s.collision.min_separation;
        assert_eq!(
            TwoWaySettings::from_scene(&s.collision).floor_release,
            Some(10.0 * xi)
        );
        let s = parse(&[two_way, "collision.floor_release_distance=0.0005"]);
        assert_eq!(
            TwoWaySettings::from_scene(&s.collision).floor_release,
            Some(5e-4)
        );
        let s = parse(&[two_way, "collision.floor_release=false"]);
        assert_eq!(TwoWaySettings::from_scene(&s.collision).floor_release, None);
    }

    #[test]
    fn scene_validation_agrees_with_the_solver() {
        // Every scene the scene's rules accept, the solver's rules accept too.
        for o in [
            "collision.gamma=0.5",
            "collision.bound=ogc",
            "collision.backward=log-barrier",
            "collision.floor_release=false",
        ] {
            let s = parse(&[o]);
            TwoWaySettings::from_scene(&s.collision)
                .validate()
                .unwrap_or_else(|e| panic!("{o}: {e}"));
        }
    }

    /// Equal but for the searches queued within step batches: scenes turn them on, the bare
    /// solver keeps the paper's schedule (a search exactly when the reuse bound runs out, which
    /// the step-by-step reference tests follow).
    #[test]
    fn scene_defaults_are_the_solver_defaults() {
        let from_scene = TwoWaySettings::from_scene(&CollisionSettings::default());
        assert_eq!(from_scene.batch_searches, 4);
        assert_eq!(TwoWaySettings::default().batch_searches, 0);
        assert_eq!(
            TwoWaySettings {
                batch_searches: 0,
                ..from_scene
            },
            TwoWaySettings::default()
        );
    }

    #[test]
    fn scene_variants_convert() {
        let c = CollisionSettings {
            backward: CollisionBackward::LogBarrier,
            barrier_strength: 7.0,
            barrier_range: 5e-4,
            contact_coloring: CollisionColoring::Gpu,
            sweep_dispatch: CollisionSweepDispatch::PerColor,
            bound: CollisionBound::Ogc,
            ogc_relaxation: 0.3,
            floor_release: false,
            ..Default::default()
        };
        let t = TwoWaySettings::from_scene(&c);
        assert_eq!(
            t.backward,
            Backward::LogBarrier {
                strength: 7.0,
                range: 5e-4
            }
        );
        assert_eq!(t.contact_coloring, ContactColoring::Gpu);
        assert_eq!(t.sweep_dispatch, SweepDispatch::PerColor);
        assert_eq!(t.bound, StepBound::Ogc { relaxation: 0.3 });
        assert_eq!(t.floor_release, None);
    }
}
