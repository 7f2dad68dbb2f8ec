//! Shared fixtures of the CLI tests.

/// A 2×2×2-cell soft cube above a ground plane, 3 frames: the smallest scene that exercises
/// Newton, contact and export.
pub const TINY: &str = r#"
[simulation]
frame_rate = 60.0
frames = 3

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.1]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;
