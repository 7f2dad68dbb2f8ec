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

/// The Python interpreter that has Pixar's USD library (`pxr`, pip `usd-core`):
/// `SUPPLE_PYTHON` (set by `scripts/dev.sh test`) or `python3`. `None` when it has no `pxr`
/// on a developer's machine; where the tests must check USD (`CI` or `SUPPLE_REQUIRE_USD` set,
/// as `scripts/dev.sh test` does), a missing `pxr` fails the test instead.
#[allow(dead_code)]
pub fn usd_python() -> Option<String> {
    let python = std::env::var("SUPPLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_pxr = std::process::Command::new(&python)
        .args(["-c", "import pxr"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var_os("SUPPLE_REQUIRE_USD").is_some_and(|v| v != "0");
    if has_pxr {
        Some(python)
    } else if required {
        panic!("{python} has no `pxr` module: install usd-core (scripts/dev.sh test does)");
    } else {
        println!("USD check NOT RUN: {python} has no `pxr` module (pip install usd-core)");
        None
    }
}

/// Runs `tests/usd/check_usd.py STAGE ARGS...` with [`usd_python`] and asserts that it passes;
/// returns its output, or `None` when `pxr` is not available here (see [`usd_python`]).
#[allow(dead_code)]
pub fn check_usd(stage: &std::path::Path, args: &[String]) -> Option<String> {
    let python = usd_python()?;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/usd/check_usd.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(stage)
        .args(args)
        .output()
        .expect("run python");
    let so = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success() && so.contains("USD check OK"),
        "check_usd.py {args:?} failed:\n{so}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(so)
}
