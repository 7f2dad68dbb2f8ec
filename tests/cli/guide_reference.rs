//! The user guide's scene file reference (docs/guide.md, "Scene file reference") documents
//! every field the scene parser accepts and every named value of its enumerations: a
//! fully-populated scene is parsed, serialized back, and each key and enum value must appear
//! in that section. A field added to `engine/src/scene.rs` fails this test until documented.
use serde_json::Value;
use supple::scene::Scene;

/// Every table, field and enum value of the scene format, with optional fields set.
const FULL: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 2
frames = 10
gravity = [0.0, 0.0, -9.81]
solver = "symplectic-euler"

[solver]
newton_max_iterations = 20
newton_tolerance = 1e-5
pcg_tolerance = 1e-4
pcg_max_iterations = 100
pcg_stagnation_window = 10
stiffness_group_warm_start = false
warm_start_max_iterations = 20
warm_start_tolerance = 1e-2
friction_slip_velocity = 1e-2
friction_per_iteration = true

[xpbd]
substeps = 10
iterations = 2
damping = 0.5
tet_solve = "sequential"

[collision]
method = "two-way"
self_collision = false
d_min = 0.002
d_max = 0.004
delta = 0.001
sigma = 1.1
gamma = 0.9
epsilon = 1e-4
max_steps = 512
min_separation = 1e-5
bound = "ogc"
ogc_relaxation = 0.45
steps_per_batch = 8
edge_constraints = true

[[body]]
name = "solid"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
translation = [0.0, 0.0, 0.1]
rotation_deg = [0.0, 0.0, 10.0]
scale = 1.0
velocity = [0.0, 0.0, 0.0]
fixed = [{ region = { min = [-1.0, -1.0, -1.0], max = [1.0, 1.0, 0.06] } }, { indices = [0] }]
motion = [{ vertices = { indices = [1] }, velocity = [0.0, 0.0, 0.1], axis = [0.0, 0.0, 1.0], center = [0.0, 0.0, 0.0], angular_velocity = 1.0 }]
force = [{ vertices = { indices = [2] }, total = [0.0, 0.0, -1.0] }, { vertices = { indices = [3] }, traction = [0.0, 0.0, -1.0] }]
material_region = [{ region = { min = [-1.0, -1.0, -1.0], max = [1.0, 1.0, 0.1] }, youngs_modulus = 1e7 }]

[[body]]
name = "sheet"
mesh = { generator = "cloth", size = [0.5, 0.5, 0.0], cells = [4, 4, 1] }
material = { model = "cloth", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }

[[body]]
name = "ball"
mesh = { generator = "sphere", size = [0.1, 0.0, 0.0], cells = [4, 1, 1] }
material = { model = "stvk", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[body]]
name = "block"
mesh = { generator = "box6", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
material = { model = "corotated", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[body]]
name = "pipe"
mesh = { generator = "tube", size = [0.1, 0.5, 0.0], cells = [8, 4, 1] }
material = { model = "cloth", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }

[[body]]
name = "cone"
mesh = { generator = "funnel", size = [0.3, 0.1, 0.2], cells = [8, 4, 1] }
material = { model = "cloth", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }

[[body]]
name = "knot"
mesh = { generator = "knot-tube", size = [0.04, 0.01, 0.1], cells = [6, 60, 1] }
material = { model = "cloth", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }

[[body]]
name = "strand"
mesh = { generator = "rod", size = [0.5, 0.0, 0.0], cells = [10, 1, 1] }
material = { model = "rod", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, bending_stiffness = 1e-4, radius = 0.002 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.3
velocity = [0.0, 0.0, 0.0]

[[collider]]
shape = { sphere = { center = [0.0, 0.0, 1.0], radius = 0.1 } }

[[collider]]
shape = { box = { min = [1.0, 1.0, 0.0], max = [2.0, 2.0, 1.0] } }

[output]
dir = "out"
export = "usd"
preview_frames = [0]
"#;

/// Enum values the file above does not spell out (the others appear in it).
const MORE_VALUES: &[&str] = &[
    "newton",
    "xpbd",
    "coupled",
    "obj",
    "ply",
    "vtu",
    "none",
    "half-distance",
];

fn scene_reference() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/guide.md");
    let guide = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = guide
        .find("## 3. Scene file reference")
        .expect("the guide has a 'Scene file reference' section");
    let rest = &guide[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 3);
    guide[start..start + end].to_string()
}

/// Every object key in `v`, and every string value (enum values and names).
fn walk(v: &Value, keys: &mut Vec<String>, strings: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                keys.push(k.clone());
                walk(x, keys, strings);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, keys, strings)),
        Value::String(s) => strings.push(s.clone()),
        _ => {}
    }
}

#[test]
fn every_scene_field_and_value_is_in_the_guide() {
    let scene = Scene::parse(FULL, "full scene", &[]).expect("the full scene parses");
    let mut keys = Vec::new();
    let mut strings = Vec::new();
    walk(
        &serde_json::to_value(&scene).expect("serializable"),
        &mut keys,
        &mut strings,
    );
    keys.sort();
    keys.dedup();
    assert!(keys.len() > 40, "walked only {keys:?}");
    let section = scene_reference();
    let documented = |k: &str| {
        [format!("`{k}`"), format!("`[{k}]`"), format!("`[[{k}]]`")]
            .iter()
            .any(|p| section.contains(p.as_str()))
    };
    let missing: Vec<&String> = keys.iter().filter(|k| !documented(k)).collect();
    assert!(
        missing.is_empty(),
        "scene fields missing from docs/guide.md's scene file reference: {missing:?}"
    );
    // Enum values (not names, paths or file names) are documented as quoted strings.
    let names = [
        "solid", "sheet", "ball", "block", "strand", "pipe", "cone", "knot", "rod.obj", "out",
    ];
    let values: Vec<String> = strings
        .into_iter()
        .filter(|s| !names.contains(&s.as_str()))
        .chain(MORE_VALUES.iter().map(|s| s.to_string()))
        .collect();
    let undocumented: Vec<&String> = values
        .iter()
        .filter(|v| !section.contains(&format!("\"{v}\"")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "scene values missing from the guide's scene file reference: {undocumented:?}"
    );
}
