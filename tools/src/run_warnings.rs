//! Start-up warnings of `supple run`, from the scene and the built model
//! (`Simulation::model()`): a body that starts inside a collider, a body whose size suggests
//! the wrong unit, an empty body name. They do not stop the run.

use crate::colliders;
use supple::scene::Scene;
use supple::simulation::Simulation;

/// Sizes (largest side of a body's bounding box, m) outside this range get a warning.
pub const PLAUSIBLE_SIZE_M: (f64, f64) = (1e-4, 1e3);

/// The warnings for `scene` as built into `sim`, one line each without the `warning: ` prefix.
pub fn warnings(scene: &Scene, sim: &Simulation) -> Vec<String> {
    let model = sim.model();
    let mut out = Vec::new();
    for (i, b) in model.bodies.iter().enumerate() {
        // Names are unique (the scene checks that), but one may be empty.
        let label = if b.name.trim().is_empty() {
            out.push(format!(
                "body[{i}] has an empty name (exports call it 'body_{i}')"
            ));
            format!("body[{i}]")
        } else {
            format!("body '{}'", b.name)
        };
        let x = &model.positions[b.vertices.start as usize..b.vertices.end as usize];
        if x.is_empty() {
            continue;
        }
        out.extend(size_warning(&label, x));
        for (c_index, c) in scene.colliders.iter().enumerate() {
            let (inside, deepest) = x
                .iter()
                .map(|&p| colliders::signed_distance(c, p, 0.0))
                .filter(|d| *d < 0.0)
                .fold((0usize, 0.0f64), |(n, m), d| (n + 1, m.min(d)));
            if inside > 0 {
                out.push(format!(
                    "{label} starts inside collider[{c_index}] ({}): {inside} of its {} vertices, the deepest {:.3e} m inside",
                    colliders::shape_name(c),
                    x.len(),
                    -deepest
                ));
            }
        }
    }
    out
}

/// A warning when the largest side of the bounding box of `x` is outside [`PLAUSIBLE_SIZE_M`].
fn size_warning(label: &str, x: &[[f64; 3]]) -> Option<String> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in x {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    let (min, max) = PLAUSIBLE_SIZE_M;
    if size > max {
        Some(format!(
            "{label} is {size:.3e} m across (its bounding box), above {max:e} m: scene units are metres (a mesh in millimetres needs scale = 0.001)"
        ))
    } else if size < min && x.len() > 1 {
        Some(format!(
            "{label} is {size:.3e} m across (its bounding box), below {min:e} m: scene units are metres"
        ))
    } else {
        None
    }
}
