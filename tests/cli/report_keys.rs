//! report.json is documented key by key (issue 27, item 4): scenes of every stepper (Newton,
//! XPBD, symplectic Euler) and contact method (none, two-way, BAL, shortest-path with XPBD and with
//! Newton), a failed run (its `error` key), rods and every collider shape are run for a frame or
//! two; every key they write, at any depth, must appear in the guide's section 5. Blocks that do
//! not apply are absent: the Newton statistics without Newton, each contact method's block
//! without that method.
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// A soft cube on the ground (with a sphere and a box collider when `all_colliders`).
fn cube(y: f64, z: f64) -> String {
    format!(
        r#"
[[body]]
name = "cube_{y}"
mesh = {{ generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }}
translation = [0.0, {y}, {z}]
material = {{ model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}
"#
    )
}

const GROUND: &str = r#"
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

const MORE_COLLIDERS: &str = r#"
[[collider]]
shape = { sphere = { center = [1.0, 0.0, 0.2], radius = 0.1 } }
friction = 0.2

[[collider]]
shape = { box = { min = [-2.0, -1.0, 0.0], max = [-1.5, 1.0, 0.3] } }
"#;

const CLOTH_AND_ROD: &str = r#"
[[body]]
name = "cloth"
mesh = { generator = "cloth", size = [0.3, 0.3, 0.0], cells = [4, 4, 1] }
translation = [0.0, 0.0, 0.3]
material = { model = "cloth", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }

[[body]]
name = "rod"
mesh = { generator = "rod", size = [0.3, 0.0, 0.0], cells = [6, 1, 1] }
translation = [0.0, 0.6, 0.5]
material = { model = "rod", youngs_modulus = 5e7, poisson_ratio = 0.3, density = 1100.0, radius = 0.003 }
fixed = [{ indices = [0] }]
"#;

fn header(solver: &str, method: &str) -> String {
    format!(
        "[simulation]\nframe_rate = 60.0\nframes = 2\nsolver = \"{solver}\"\n\n[collision]\nmethod = \"{method}\"\n"
    )
}

/// The scenes: name, TOML, whether it is stepped by Newton, its contact block (if any).
fn scenes() -> Vec<(&'static str, String, bool, Option<&'static str>)> {
    let two_cubes = format!("{}{}", cube(0.0, 0.1), cube(0.3, 0.1));
    vec![
        (
            "newton",
            format!("{}{}{CLOTH_AND_ROD}{GROUND}{MORE_COLLIDERS}", header("newton", "none"), cube(0.0, 0.1)),
            true,
            None,
        ),
        (
            "newton_two_way",
            format!("{}{}{CLOTH_AND_ROD}{GROUND}", header("newton", "two-way"), cube(0.0, 0.1)),
            true,
            Some("two_way"),
        ),
        (
            "newton_shortest_path",
            format!("{}{two_cubes}{GROUND}", header("newton", "shortest-path")),
            true,
            Some("shortest_path"),
        ),
        (
            // Two cubes 0.5 mm apart (closer than d̂ = 1 mm): active pairs from the start.
            "newton_bal",
            format!(
                "{}friction = 0.3\n{}{}",
                header("newton", "bal"),
                cube(0.0, 0.1),
                cube(0.05, 0.2005)
            ),
            true,
            Some("bal"),
        ),
        (
            "xpbd_shortest_path",
            format!("{}{two_cubes}{GROUND}{MORE_COLLIDERS}", header("xpbd", "shortest-path")),
            false,
            Some("shortest_path"),
        ),
        (
            "symplectic",
            format!("{}{}{GROUND}", header("symplectic-euler", "none"), cube(0.0, 0.1)),
            false,
            None,
        ),
        (
            // Bottom fixed, top driven through it: diverges at frame 2 (the `error` key).
            "failed",
            r#"
[simulation]
frame_rate = 60.0
frames = 3

[[body]]
name = "crushed"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
translation = [0.0, 0.0, 0.5]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
fixed = [{ region = { min = [-1.0, -1.0, 0.0], max = [1.0, 1.0, 0.46] } }]
motion = [{ vertices = { region = { min = [-1.0, -1.0, 0.54], max = [1.0, 1.0, 1.0] } }, velocity = [0.0, 0.0, -4.0] }]
"#
            .to_string(),
            true,
            None,
        ),
    ]
}

/// Every object key in `v` at any depth.
fn keys(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.insert(k.clone());
                keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

/// The text of the guide's section 5.
fn section_5() -> String {
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/guide.md"),
    )
    .expect("read docs/guide.md");
    let start = guide
        .find("## 5. Reading `report.json`")
        .expect("section 5");
    let end = guide[start..]
        .find("\n## 6.")
        .map_or(guide.len(), |e| start + e);
    guide[start..end].to_string()
}

/// Whether `key` appears in `text` as a whole word (not part of a longer identifier).
fn mentions(text: &str, key: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(key).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !word(c));
        let after = text[i + key.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
}

#[test]
fn every_key_of_every_report_is_in_the_guide() {
    let guide = section_5();
    let mut all = BTreeSet::new();
    let base = std::env::temp_dir().join(format!("supple-report-keys-{}", std::process::id()));
    for (name, scene, newton, block) in scenes() {
        let dir = base.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("scene.toml");
        std::fs::write(&path, &scene).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_supple"))
            .args([
                "run",
                path.to_str().unwrap(),
                "--out",
                dir.join("out").to_str().unwrap(),
            ])
            .output()
            .expect("run supple");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = if name == "failed" { Some(3) } else { Some(0) };
        assert_eq!(out.status.code(), expected, "{name}: {stderr}");
        let text = std::fs::read_to_string(dir.join("out/report.json")).expect("report.json");
        let report: Value = serde_json::from_str(&text).expect("report.json parses");
        assert_eq!(report.get("error").is_some(), name == "failed", "{name}");
        let frames = report["frames"].as_array().expect("frames");
        assert!(frames.len() >= 2, "{name}: {report}");
        for f in &frames[1..] {
            for k in [
                "newton_iterations",
                "pcg_iterations",
                "pcg_warm_iterations",
                "energy",
                "pcg_residual",
                "gradient_norm",
            ] {
                assert_eq!(f.get(k).is_some(), newton, "{name}: {k} in {f}");
            }
            for b in ["two_way", "shortest_path", "bal"] {
                assert_eq!(
                    f.get(b).is_some(),
                    block == Some(b),
                    "{name}: block {b} in {f}"
                );
            }
        }
        keys(&report, &mut all);
    }
    let missing: Vec<&String> = all.iter().filter(|k| !mentions(&guide, k)).collect();
    assert!(
        missing.is_empty(),
        "report.json keys missing from docs/guide.md section 5: {missing:?}"
    );
    // The run covered the blocks and nested keys it is meant to cover.
    for k in [
        "two_way",
        "shortest_path",
        "bal",
        "augmented_per_step",
        "counters",
        "error",
        "curves",
        "sphere",
        "box",
        "gradient_norm",
    ] {
        assert!(all.contains(k), "no run wrote {k}");
    }
}
