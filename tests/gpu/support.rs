//! Shared test support: a validated context per test and a check that no validation error
//! was reported.

use supple::vk::{Context, ContextOptions, Severity};

/// A context on the default device (lavapipe in CI) with the validation layer on.
/// `force_staging` routes uploads/readbacks through staging buffers.
pub fn context(force_staging: bool) -> Context {
    new_context(test_options(force_staging))
}

/// The options of every test context: validation and synchronization validation on, a
/// bounded wait, no pipeline cache.
fn test_options(force_staging: bool) -> ContextOptions {
    let mut o = ContextOptions::from_env();
    o.validation = true;
    o.sync_validation = true;
    o.force_staging = force_staging;
    o.wait_timeout = std::time::Duration::from_secs(120);
    o.pipeline_cache = None;
    o
}

fn new_context(o: ContextOptions) -> Context {
    match Context::new(o) {
        Ok(c) => c,
        Err(e) => panic!("cannot create a Vulkan context with validation (is lavapipe + vulkan-validationlayers installed?): {e}"),
    }
}

/// Panics if the validation layer reported any error on `ctx`.
pub fn assert_no_validation_errors(ctx: &Context) {
    let msgs = ctx.take_validation_messages();
    let errors: Vec<_> = msgs
        .iter()
        .filter(|m| m.severity == Severity::Error)
        .map(|m| m.text.clone())
        .collect();
    assert!(
        errors.is_empty(),
        "validation errors:\n{}",
        errors.join("\n")
    );
}

/// Deterministic random generator for test data.
pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    use rand::SeedableRng;
    rand_pcg::Pcg64::seed_from_u64(seed)
}

/// Readers for the oracle files in `tests/data/oracles/` (JSON from the IPC Toolkit oracle).
pub mod oracles {
    use serde_json::Value;
    use supple::math::Vec3;

    /// Parses `tests/data/oracles/NAME`.
    pub fn oracle(name: &str) -> Value {
        let path = format!("{}/../data/oracles/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The `cases` array of an oracle document.
    pub fn cases(doc: &Value) -> &[Value] {
        doc["cases"]
            .as_array()
            .map(Vec::as_slice)
            .expect("oracle has a `cases` array")
    }

    /// A number field.
    pub fn num(v: &Value) -> f64 {
        v.as_f64()
            .unwrap_or_else(|| panic!("expected a number, got {v}"))
    }

    /// A string field.
    pub fn text(v: &Value) -> String {
        v.as_str()
            .unwrap_or_else(|| panic!("expected a string, got {v}"))
            .to_string()
    }

    /// Four points `[[x, y, z]; 4]`.
    pub fn points4(v: &Value) -> [Vec3; 4] {
        [0, 1, 2, 3].map(|k| Vec3::new(num(&v[k][0]), num(&v[k][1]), num(&v[k][2])))
    }
}

/// The exact checker's surface of every body of `sim` (boundary triangles and rod centreline
/// segments over model vertices).
pub fn body_surface(sim: &supple::simulation::Simulation) -> supple::intersection_check::Surface {
    let model = sim.model();
    let tris: Vec<[u32; 3]> = model
        .bodies
        .iter()
        .flat_map(|b| b.surface.iter().copied())
        .collect();
    supple::intersection_check::Surface::with_curves(
        model.positions.len(),
        &tris,
        &model.curve_segments(),
    )
    .expect("body surfaces")
}

/// Steps one frame of `sim` and checks it with the exact checker: the new frame is
/// intersection-free and the straight motion from `prev` is collision-free. Replaces `prev` by
/// the new positions and returns the frame's statistics; panics naming `label` and the frame.
pub fn step_checked(
    sim: &mut supple::simulation::Simulation,
    surface: &supple::intersection_check::Surface,
    prev: &mut Vec<[f64; 3]>,
    label: &str,
    frame: u32,
) -> supple::simulation::FrameStats {
    use supple::intersection_check::{frame_intersections, trajectory_check};
    let st = sim
        .step_frame()
        .unwrap_or_else(|e| panic!("{label} frame {frame}: {e}"));
    let x = sim.positions().expect("positions");
    assert!(
        frame_intersections(surface, &x).is_empty(),
        "{label} frame {frame}: intersecting"
    );
    let traj = trajectory_check(surface, prev, &x, 1e-9);
    assert!(
        traj.is_clean(),
        "{label} frame {frame}: {} collisions on the frame-to-frame motion",
        traj.collisions.len() + traj.uncertain.len()
    );
    *prev = x;
    st
}

/// The CPU reference's forward step of the two-way settings `st` (floor release when on) from
/// `x` (updated) toward `y` with reuse bound `bound`, every vertex on the collision surface.
/// Returns the reuse bound's decrease (m; `cpu_reference::two_way::bound_decrease`).
pub fn reference_forward(
    st: &supple::contact::two_way::TwoWaySettings,
    x: &mut [supple::math::Vec3],
    y: &[supple::math::Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    bound: f64,
) -> f64 {
    let none = vec![u32::MAX; x.len()];
    let inf = vec![f64::INFINITY; x.len()];
    reference_forward_capped(st, x, y, cons, n_vt, bound, &none, &inf)
}

/// [`reference_forward`] with shared step fractions per vertex group (`u32::MAX`: none) and
/// per-vertex collider bounds (`cap`, `cpu_reference::two_way::collider_bounds`; +∞: none).
#[allow(clippy::too_many_arguments)]
pub fn reference_forward_capped(
    st: &supple::contact::two_way::TwoWaySettings,
    x: &mut [supple::math::Vec3],
    y: &[supple::math::Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    bound: f64,
    groups: &[u32],
    cap: &[f64],
) -> f64 {
    let mut r = vec![1.0; x.len()];
    let on = vec![true; x.len()];
    supple::cpu_reference::two_way::forward_step_capped(
        x,
        y,
        cons,
        n_vt,
        bound,
        st.step_fraction(),
        st.min_separation,
        st.floor_release,
        &mut r,
        &on,
        groups,
        cap,
    )
}

/// A stepper driven on its own (no simulation facade): its state and an empty contact set, as
/// the stepper tests use them.
pub struct Driven<S: supple::stepper::Stepper> {
    /// The state the stepper advances.
    pub state: supple::state::GpuState,
    /// The stepper.
    pub stepper: S,
    /// Contact handlers (none unless a test adds them).
    pub contacts: supple::contact::ContactSet,
}

impl<S: supple::stepper::Stepper> Driven<S> {
    /// One time step.
    pub fn step(&mut self) -> Result<supple::stepper::StepReport, supple::error::SimError> {
        self.stepper.step(&mut self.state, &mut self.contacts)
    }

    /// Current positions (m), one vec4 per vertex.
    pub fn positions(&self) -> &supple::vk::GpuBuffer<[f32; 4]> {
        &self.state.x
    }

    /// Current velocities (m/s), one vec4 per vertex.
    pub fn velocities(&self) -> &supple::vk::GpuBuffer<[f32; 4]> {
        &self.state.v
    }
}

/// A Newton stepper over its own state of `model` with `colliders`.
pub fn newton_driven(
    ctx: &Context,
    model: &supple::model::SimModel,
    colliders: &[supple::contact::colliders::Collider],
    kind: supple::fem::ElementModel,
    settings: supple::stepper::newton::NewtonSettings,
) -> Driven<supple::stepper::newton::NewtonStepper> {
    let state = supple::state::GpuState::upload(ctx, model, colliders, settings.h).expect("state");
    let stepper = supple::stepper::newton::NewtonStepper::new(ctx, model, &state, kind, settings)
        .expect("newton stepper");
    Driven {
        state,
        stepper,
        contacts: supple::contact::ContactSet::empty(),
    }
}

/// An XPBD stepper over its own state of `model` with `colliders`.
pub fn xpbd_driven(
    ctx: &Context,
    model: &supple::model::SimModel,
    colliders: &[supple::contact::colliders::Collider],
    settings: supple::stepper::xpbd::XpbdSettings,
) -> Result<Driven<supple::stepper::xpbd::XpbdStepper>, supple::error::SimError> {
    let state = supple::state::GpuState::upload(ctx, model, colliders, settings.h)?;
    let stepper = supple::stepper::xpbd::XpbdStepper::new(ctx, model, &state, settings)?;
    Ok(Driven {
        state,
        stepper,
        contacts: supple::contact::ContactSet::empty(),
    })
}

/// [`context`] with conditional rendering (skipping the closed sections of gated graphs) on
/// or off for this context only (`ContextOptions::conditional_rendering`; on is used where the
/// device has it).
pub fn context_with_conditional_rendering(force_staging: bool, on: bool) -> Context {
    let mut o = test_options(force_staging);
    o.conditional_rendering = on;
    new_context(o)
}
