//! PROX settings: a plain struct with RAINBOW's defaults, read from a scene's `[prox]` table
//! ([`ProxSettings::from_scene`]), and a validation that names the offending field.

use super::generation::SdfParams;
use super::model::{Scheme, SolverParams};
use super::sdf::MAX_RESOLUTION;
use crate::scene::{
    ProxColoringName, ProxContactsName, ProxDispatchName, ProxModeName, ProxSchemeName, ProxTable,
};

/// Where contacts come from (`prox.contacts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactSource {
    /// RAINBOW's: rest-space signed distance grids, Frank–Wolfe deepest points, tet-embedded
    /// 8-node contacts (`"sdf"`, for parity with the report).
    Sdf,
    /// Supple's proximity pairs (vertex–triangle and edge–edge stencils, 4 nodes) turned into
    /// contacts (`"pairs"`, the fast path).
    Pairs,
}

/// What happens to penetration (`prox.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PenetrationMode {
    /// RAINBOW: `b = J u′`, penetration is only logged (`"faithful"`).
    Faithful,
    /// Frames stay intersection-free: the position update is limited by Supple's conservative
    /// bounds (`"safe"`; applied by the stepper wiring).
    Safe,
}

/// How the contact graph is colored for the colored scheme (`prox.coloring`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColoringMethod {
    /// networkx `greedy_color`, largest first, on the host (RAINBOW's choice, `"greedy"`).
    Greedy,
    /// Vivace's random coloring with a fixed seed, on the host (`"random"`).
    Random,
    /// Random-priority Jones–Plassmann on the GPU, at most 256 colors (`"jones-plassmann"`).
    JonesPlassmann,
}

/// How a sweep is dispatched (`prox.sweep_dispatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepDispatch {
    /// Fused on CPU Vulkan devices (lavapipe), per kernel otherwise (`"auto"`).
    Auto,
    /// One dispatch per phase and per color (`"per-color"`).
    PerColor,
    /// `sweeps_per_batch` whole sweeps in one single-workgroup dispatch (`"fused"`).
    Fused,
}

macro_rules! names {
    ($ty:ty { $($v:ident => $s:literal),* $(,)? }) => {
        impl $ty {
            /// The scene-file name.
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
            /// The value of a scene-file name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($s => Some(Self::$v),)* _ => None }
            }
        }
    };
}
names!(ContactSource { Sdf => "sdf", Pairs => "pairs" });
names!(PenetrationMode { Faithful => "faithful", Safe => "safe" });
names!(ColoringMethod { Greedy => "greedy", Random => "random", JonesPlassmann => "jones-plassmann" });
names!(SweepDispatch { Auto => "auto", PerColor => "per-color", Fused => "fused" });

/// Every PROX setting (SI units). Defaults: RAINBOW's (`prox_soft_bodies/types.py`) where it
/// has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxSettings {
    /// `prox.scheme`: `"gauss-seidel"` (default, RAINBOW's), `"jacobi"`, `"hybrid"`,
    /// `"colored-gauss-seidel"`.
    pub scheme: Scheme,
    /// `prox.contacts`: `"sdf"` (default) or `"pairs"`.
    pub contacts: ContactSource,
    /// `prox.mode`: `"safe"` (default: Supple's frames are intersection-free) or `"faithful"`.
    pub mode: PenetrationMode,
    /// `prox.coloring`: `"greedy"` (default), `"random"` or `"jones-plassmann"`.
    pub coloring: ColoringMethod,
    /// `prox.sweep_dispatch`: `"auto"` (default), `"per-color"` or `"fused"`.
    pub sweep_dispatch: SweepDispatch,
    /// `prox.absolute_tolerance` (N·s, 1e-3), `prox.relative_tolerance` (1e-4),
    /// `prox.max_iterations` (200), `prox.nu_reduce` (0.7), `prox.nu_increase` (1.3),
    /// `prox.too_small_merit_change` (N·s, 0.01), `prox.r_factor` (0.1).
    pub solver: SolverParams,
    /// `prox.friction`: Coulomb μ of every contact (RAINBOW's default 1).
    pub friction: f64,
    /// `prox.restitution`: Newton restitution ε of the normal rows, in [0, 1] (RAINBOW's code: 0).
    pub restitution: f64,
    /// `prox.sdf_resolution` (grid nodes per axis, 64), `prox.envelope` (m, 0.1),
    /// `prox.fw_max_iterations` (8), `prox.fw_tolerance` (0), `prox.sdf_inside_margin` (m, 0).
    pub sdf: SdfParams,
    /// `prox.pair_distance` (m): proximity search distance of the `"pairs"` contacts (0.001).
    pub pair_distance: f64,
    /// `prox.random_seed`: seed of the random coloring (fixed, so reruns are identical).
    pub random_seed: u32,
    /// `prox.random_max_rounds`: rounds of the random coloring before sequential colors (200).
    pub random_max_rounds: u32,
    /// `prox.graph_fixed_nodes`: fixed nodes (inverse mass 0) join the contact graph (RAINBOW:
    /// true; false needs fewer colors and is still exact).
    pub graph_fixed_nodes: bool,
    /// `prox.sweeps_per_batch`: sweeps recorded per graph run (the host reads the state after
    /// each run; 8).
    pub sweeps_per_batch: u32,
}

impl Default for ProxSettings {
    fn default() -> Self {
        ProxSettings {
            scheme: Scheme::GaussSeidel,
            contacts: ContactSource::Sdf,
            mode: PenetrationMode::Safe,
            coloring: ColoringMethod::Greedy,
            sweep_dispatch: SweepDispatch::Auto,
            solver: SolverParams::default(),
            friction: 1.0,
            restitution: 0.0,
            sdf: SdfParams::default(),
            pair_distance: 1e-3,
            random_seed: 0x5eed_0001,
            random_max_rounds: 200,
            graph_fixed_nodes: true,
            sweeps_per_batch: 8,
        }
    }
}

impl ProxSettings {
    /// The settings of a scene's `[prox]` table.
    pub fn from_scene(p: &ProxTable) -> ProxSettings {
        ProxSettings {
            scheme: match p.scheme {
                ProxSchemeName::GaussSeidel => Scheme::GaussSeidel,
                ProxSchemeName::Jacobi => Scheme::Jacobi,
                ProxSchemeName::Hybrid => Scheme::Hybrid,
                ProxSchemeName::ColoredGaussSeidel => Scheme::ColoredGaussSeidel,
            },
            contacts: match p.contacts {
                ProxContactsName::Sdf => ContactSource::Sdf,
                ProxContactsName::Pairs => ContactSource::Pairs,
            },
            mode: match p.mode {
                ProxModeName::Safe => PenetrationMode::Safe,
                ProxModeName::Faithful => PenetrationMode::Faithful,
            },
            coloring: match p.coloring {
                ProxColoringName::Greedy => ColoringMethod::Greedy,
                ProxColoringName::Random => ColoringMethod::Random,
                ProxColoringName::JonesPlassmann => ColoringMethod::JonesPlassmann,
            },
            sweep_dispatch: match p.sweep_dispatch {
                ProxDispatchName::Auto => SweepDispatch::Auto,
                ProxDispatchName::PerColor => SweepDispatch::PerColor,
                ProxDispatchName::Fused => SweepDispatch::Fused,
            },
            solver: SolverParams {
                absolute_tolerance: p.absolute_tolerance,
                relative_tolerance: p.relative_tolerance,
                max_iterations: p.max_iterations,
                nu_reduce: p.nu_reduce,
                nu_increase: p.nu_increase,
                too_small_merit_change: p.too_small_merit_change,
                r_factor: p.r_factor,
            },
            friction: p.friction,
            restitution: p.restitution,
            sdf: SdfParams {
                resolution: p.sdf_resolution as usize,
                envelope: p.envelope,
                max_iterations: p.fw_max_iterations,
                tolerance: p.fw_tolerance,
                inside_margin: p.sdf_inside_margin,
            },
            pair_distance: p.pair_distance,
            random_seed: p.random_seed,
            random_max_rounds: p.random_max_rounds,
            graph_fixed_nodes: p.graph_fixed_nodes,
            sweeps_per_batch: p.sweeps_per_batch,
        }
    }
}

/// A setting out of range: the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// Field path, e.g. `prox.absolute_tolerance`.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SettingsError {}

fn positive(field: &'static str, v: f64) -> Result<(), SettingsError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(SettingsError {
            field,
            message: format!("must be a finite number > 0, got {v}"),
        })
    }
}

fn non_negative(field: &'static str, v: f64) -> Result<(), SettingsError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(SettingsError {
            field,
            message: format!("must be a finite number >= 0, got {v}"),
        })
    }
}

fn count(field: &'static str, v: u32, lo: u32, hi: u32) -> Result<(), SettingsError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(SettingsError {
            field,
            message: format!("must be in {lo}..={hi}, got {v}"),
        })
    }
}

impl ProxSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let s = &self.solver;
        positive("prox.absolute_tolerance", s.absolute_tolerance)?;
        positive("prox.relative_tolerance", s.relative_tolerance)?;
        count("prox.max_iterations", s.max_iterations, 1, 100_000)?;
        if !(s.nu_reduce > 0.0 && s.nu_reduce < 1.0) {
            return Err(SettingsError {
                field: "prox.nu_reduce",
                message: format!("must be in (0, 1), got {}", s.nu_reduce),
            });
        }
        if !(s.nu_increase.is_finite() && s.nu_increase >= 1.0) {
            return Err(SettingsError {
                field: "prox.nu_increase",
                message: format!("must be a finite number >= 1, got {}", s.nu_increase),
            });
        }
        non_negative("prox.too_small_merit_change", s.too_small_merit_change)?;
        positive("prox.r_factor", s.r_factor)?;
        non_negative("prox.friction", self.friction)?;
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(SettingsError {
                field: "prox.restitution",
                message: format!("must be in [0, 1], got {}", self.restitution),
            });
        }
        count(
            "prox.sdf_resolution",
            self.sdf.resolution.min(u32::MAX as usize) as u32,
            2,
            MAX_RESOLUTION as u32,
        )?;
        non_negative("prox.envelope", self.sdf.envelope)?;
        count("prox.fw_max_iterations", self.sdf.max_iterations, 1, 1000)?;
        non_negative("prox.fw_tolerance", self.sdf.tolerance)?;
        non_negative("prox.sdf_inside_margin", self.sdf.inside_margin)?;
        positive("prox.pair_distance", self.pair_distance)?;
        count("prox.random_max_rounds", self.random_max_rounds, 1, 100_000)?;
        count("prox.sweeps_per_batch", self.sweeps_per_batch, 1, 1024)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_rainbows() {
        let s = ProxSettings::default();
        s.validate().unwrap();
        assert_eq!(s.scheme, Scheme::GaussSeidel);
        assert_eq!(s.solver.absolute_tolerance, 1e-3);
        assert_eq!(s.solver.max_iterations, 200);
        assert_eq!(s.sdf.resolution, 64);
        assert_eq!(s.friction, 1.0);
    }

    #[test]
    fn bad_values_name_the_field() {
        type Edit = Box<dyn Fn(&mut ProxSettings)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("prox.friction", Box::new(|s| s.friction = -0.1)),
            ("prox.friction", Box::new(|s| s.friction = f64::NAN)),
            ("prox.restitution", Box::new(|s| s.restitution = 1.5)),
            ("prox.restitution", Box::new(|s| s.restitution = -0.01)),
            (
                "prox.absolute_tolerance",
                Box::new(|s| s.solver.absolute_tolerance = 0.0),
            ),
            (
                "prox.relative_tolerance",
                Box::new(|s| s.solver.relative_tolerance = -1e-4),
            ),
            (
                "prox.max_iterations",
                Box::new(|s| s.solver.max_iterations = 0),
            ),
            ("prox.nu_reduce", Box::new(|s| s.solver.nu_reduce = 1.0)),
            ("prox.nu_increase", Box::new(|s| s.solver.nu_increase = 0.5)),
            ("prox.r_factor", Box::new(|s| s.solver.r_factor = 0.0)),
            ("prox.sdf_resolution", Box::new(|s| s.sdf.resolution = 1)),
            (
                "prox.sdf_resolution",
                Box::new(|s| s.sdf.resolution = 1 << 20),
            ),
            (
                "prox.envelope",
                Box::new(|s| s.sdf.envelope = f64::INFINITY),
            ),
            (
                "prox.fw_max_iterations",
                Box::new(|s| s.sdf.max_iterations = 0),
            ),
            ("prox.pair_distance", Box::new(|s| s.pair_distance = 0.0)),
            (
                "prox.sweeps_per_batch",
                Box::new(|s| s.sweeps_per_batch = 0),
            ),
        ];
        for (field, set) in cases {
            let mut s = ProxSettings::default();
            set(&mut s);
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.to_string().starts_with(field));
        }
    }

    #[test]
    fn scene_defaults_are_the_defaults() {
        assert_eq!(
            ProxSettings::from_scene(&ProxTable::default()),
            ProxSettings::default()
        );
    }

    #[test]
    fn names_round_trip() {
        for s in Scheme::ALL {
            assert_eq!(Scheme::from_name(s.name()), Some(s));
        }
        for c in [ContactSource::Sdf, ContactSource::Pairs] {
            assert_eq!(ContactSource::from_name(c.name()), Some(c));
        }
        for m in [
            ColoringMethod::Greedy,
            ColoringMethod::Random,
            ColoringMethod::JonesPlassmann,
        ] {
            assert_eq!(ColoringMethod::from_name(m.name()), Some(m));
        }
        assert_eq!(
            PenetrationMode::from_name("safe"),
            Some(PenetrationMode::Safe)
        );
        assert_eq!(
            SweepDispatch::from_name("fused"),
            Some(SweepDispatch::Fused)
        );
        assert_eq!(Scheme::from_name("gauss_seidel"), None);
    }
}
