//! `supple view` and `supple run --export html`: the page is written from a run folder (new and
//! older layouts), bad input is refused with exit 2, and headless Chromium (Debian package
//! `chromium`, installed by `scripts/dev.sh test`; SwiftShader WebGL2) loads the page from a
//! file: a screenshot shows the bodies and the sphere collider in the view, the URL hash moves
//! the slider to the last frame, and the bodies have fallen between the first and last frame.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Two 0.1 m cubes (one falling fast, one resting) on the ground beside a sphere collider.
const SCENE: &str = r#"
[simulation]
frame_rate = 60.0
frames = 6

[[body]]
name = "faller"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [-0.12, 0.0, 0.3]
velocity = [0.0, 0.0, -2.0]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[body]]
name = "rester"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [0.12, 0.0, 0.051]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }

[[collider]]
shape = { sphere = { center = [0.0, -0.25, 0.1], radius = 0.1 } }

[output]
export = "obj"
"#;

/// The viewer's first two body colours (tools/src/view/viewer.js PALETTE).
const BLUE: [u8; 3] = [0x4e, 0x79, 0xa7];
const ORANGE: [u8; 3] = [0xf2, 0x8e, 0x2b];
/// The sphere collider's colours.
const COLLIDER: [[u8; 3]; 2] = [[0xc9, 0xc2, 0xb4], [0x9a, 0x92, 0x84]];
/// Window size and the page's layout: a 340 px panel on the right, 46 px controls below.
const WINDOW: (usize, usize) = (1200, 800);
const CANVAS: (usize, usize) = (1200 - 341, 800 - 47);

fn supple(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(args)
        .output()
        .expect("run supple")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-view-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Simulates SCENE into `dir/out` with OBJ frames and `--export html`; returns the run folder.
fn simulate(dir: &Path) -> PathBuf {
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, SCENE).unwrap();
    let out = dir.join("out");
    let o = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--export",
        "html",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out
}

fn chromium_binary() -> String {
    if let Ok(b) = std::env::var("SUPPLE_CHROMIUM") {
        return b;
    }
    for b in ["chromium", "chromium-browser"] {
        if Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return b.to_string();
        }
    }
    panic!(
        "headless Chromium is required for the viewer check and was not found: `scripts/dev.sh \
         test` installs it (apt-get install chromium), or set SUPPLE_CHROMIUM"
    );
}

/// Runs headless Chromium on `url` with `extra` flags (bounded to 180 s); its stdout.
fn chromium(url: &str, extra: &[String]) -> String {
    let profile = tmp(&format!("profile-{}", extra.len()));
    let mut child = Command::new(chromium_binary())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("chromium did not finish within 180 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("chromium output");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "chromium failed on {url}: {}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `data-*` attributes of the page's `#state` element in a `--dump-dom` output.
fn page_state(dom: &str) -> std::collections::BTreeMap<String, String> {
    let start = dom
        .find("<div id=\"state\"")
        .expect("no #state element in the DOM");
    let tag = &dom[start..start + dom[start..].find('>').unwrap()];
    let mut m = std::collections::BTreeMap::new();
    let mut rest = tag;
    while let Some(k) = rest.find(" data-") {
        rest = &rest[k + 6..];
        let eq = rest.find("=\"").unwrap();
        let end = rest[eq + 2..].find('"').unwrap();
        m.insert(
            rest[..eq].to_string(),
            rest[eq + 2..eq + 2 + end].to_string(),
        );
        rest = &rest[eq + 2 + end..];
    }
    m
}

fn dump(page: &Path, hash: &str) -> (std::collections::BTreeMap<String, String>, String) {
    let dom = chromium(
        &format!("file://{}{hash}", page.display()),
        &["--dump-dom".to_string()],
    );
    (page_state(&dom), dom)
}

struct Image {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

fn screenshot(page: &Path, hash: &str, png_path: &Path) -> Image {
    chromium(
        &format!("file://{}{hash}", page.display()),
        &[format!("--screenshot={}", png_path.display())],
    );
    let dec = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).expect("chromium wrote no screenshot"),
    ));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let (w, h) = (info.width as usize, info.height as usize);
    let rgb = buf[..w * h * ch]
        .chunks_exact(ch)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Image { w, h, rgb }
}

/// Whether `p` is `base` under some lighting factor 0.3..1.1 (within a few levels).
fn lit(p: [u8; 3], base: [u8; 3]) -> bool {
    let k = f64::from(p[0].max(p[1]).max(p[2])) / f64::from(base[0].max(base[1]).max(base[2]));
    (0.3..=1.1).contains(&k)
        && (0..3).all(|c| (f64::from(p[c]) - (k * f64::from(base[c])).min(255.0)).abs() <= 10.0)
}

/// Pixels of the canvas lit in `base`: count and centroid.
fn pixels(img: &Image, base: [u8; 3]) -> (usize, f64, f64) {
    let (mut n, mut sx, mut sy) = (0, 0.0, 0.0);
    for y in 0..CANVAS.1.min(img.h) {
        for x in 0..CANVAS.0.min(img.w) {
            let o = 3 * (y * img.w + x);
            if lit([img.rgb[o], img.rgb[o + 1], img.rgb[o + 2]], base) {
                n += 1;
                sx += x as f64;
                sy += y as f64;
            }
        }
    }
    (n, sx / n.max(1) as f64, sy / n.max(1) as f64)
}

#[test]
fn view_page_plays_in_headless_chromium() {
    let dir = tmp("browser");
    let out = simulate(&dir);
    // The run's report carries the bodies and colliders.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let bodies = report["bodies"].as_array().unwrap();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["name"], "faller");
    assert_eq!(bodies[0]["model"], "stable-neo-hookean");
    assert_eq!(bodies[0]["surface_vertices"], serde_json::json!([0, 26]));
    assert_eq!(bodies[1]["surface_vertices"], serde_json::json!([26, 26]));
    assert_eq!(bodies[1]["triangles"], serde_json::json!([48, 48]));
    assert_eq!(report["colliders"][1]["shape"]["sphere"]["radius"], 0.1);
    assert!(out.join("preview.png").exists());

    // `supple view` on the folder writes the same page as the run did.
    let page = dir.join("view.html");
    let o = supple(&["view", out.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("7 frames") && text(&o).contains("kB"),
        "{}",
        text(&o)
    );
    let (a, b) = (
        std::fs::read(&page).unwrap(),
        std::fs::read(out.join("view.html")).unwrap(),
    );
    let at = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        a == b,
        "supple view and supple run --export html wrote different pages ({} and {} bytes, first \
         difference at byte {at:?})",
        a.len(),
        b.len()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains(" src="));

    // The URL hash moves the slider to the last frame; the page reports its state.
    let (state, dom) = dump(&page, "#frame=last");
    assert_eq!(state.get("error"), None, "{state:?}");
    assert_eq!(state["ready"], "1", "{state:?}");
    assert_eq!(
        state["webgl2"], "1",
        "no WebGL2 in headless Chromium: {state:?}"
    );
    assert_eq!(
        (state["frame"].as_str(), state["frames"].as_str()),
        ("6", "7")
    );
    assert_eq!(state["bodies"], "2");
    assert_eq!(state["colliders"], "2");
    assert!(
        dom.contains("value=\"6\"") || dom.contains("(7/7)"),
        "slider not at the end"
    );
    assert!(
        dom.contains("<title>") && dom.contains("(7/7)"),
        "title: {dom:.300}"
    );

    // Screenshots: the bodies and the sphere are drawn in the view, and the faller is lower
    // on the last frame than on the first.
    let first = screenshot(&page, "#frame=0", &dir.join("first.png"));
    let last = screenshot(&page, "#frame=last", &dir.join("last.png"));
    let (n_blue0, _, y_blue0) = pixels(&first, BLUE);
    let (n_blue, x_blue, y_blue) = pixels(&last, BLUE);
    let (n_orange, x_orange, _) = pixels(&last, ORANGE);
    let sphere: usize = COLLIDER.iter().map(|&c| pixels(&last, c).0).sum();
    assert!(
        n_blue0 > 500 && n_blue > 500,
        "faller pixels {n_blue0}, {n_blue}"
    );
    assert!(n_orange > 500, "rester pixels {n_orange}");
    assert!(sphere > 300, "sphere collider pixels {sphere}");
    for (x, y) in [(x_blue, y_blue), (x_orange, y_blue)] {
        assert!(
            x > 0.15 * CANVAS.0 as f64
                && x < 0.85 * CANVAS.0 as f64
                && y > 0.1 * CANVAS.1 as f64
                && y < 0.9 * CANVAS.1 as f64,
            "bodies outside the expected region: ({x}, {y})"
        );
    }
    // Seen from the front-left, the faller (x < 0) is left of the rester.
    assert!(x_blue < x_orange, "{x_blue} {x_orange}");
    assert!(
        y_blue > y_blue0 + 20.0,
        "the faller did not fall: {y_blue0} -> {y_blue}"
    );

    // Quantised, every 4th frame (and the last): smaller, still drawn.
    let q = dir.join("q.html");
    let o = supple(&[
        "view",
        out.to_str().unwrap(),
        "-o",
        q.to_str().unwrap(),
        "--quantize",
        "--every",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("3 frames") && text(&o).contains("16-bit"),
        "{}",
        text(&o)
    );
    assert!(std::fs::metadata(&q).unwrap().len() < std::fs::metadata(&page).unwrap().len());
    let (state, _) = dump(&q, "#frame=4");
    assert_eq!(state.get("error"), None, "{state:?}");
    assert_eq!(
        (state["frame"].as_str(), state["frame-index"].as_str()),
        ("1", "4")
    );
    let img = screenshot(&q, "#frame=last", &dir.join("q.png"));
    let (n, _, y) = pixels(&img, BLUE);
    assert!(
        n > 500 && (y - y_blue).abs() < 3.0,
        "quantised faller: {n} pixels at y {y}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Rewrites the OBJ frames of `out` with one `o NAME` group per body (the per-body export).
/// Rewrites the frames as an older run wrote them: one merged mesh without `o` groups.
fn ungroup_frames(out: &Path) {
    for e in std::fs::read_dir(out.join("frames")).unwrap() {
        let p = e.unwrap().path();
        let t = std::fs::read_to_string(&p).unwrap();
        let kept: Vec<&str> = t.lines().filter(|l| !l.starts_with("o ")).collect();
        std::fs::write(&p, kept.join("\n") + "\n").unwrap();
    }
}

fn group_frames(out: &Path, names: &[&str], split: usize) {
    for e in std::fs::read_dir(out.join("frames")).unwrap() {
        let p = e.unwrap().path();
        let t = std::fs::read_to_string(&p).unwrap();
        let mut v = 0;
        let mut lines = Vec::new();
        for l in t.lines() {
            if l.starts_with("v ") {
                if v == 0 || v == split {
                    lines.push(format!("o {}", names[usize::from(v == split)]));
                }
                v += 1;
            }
            lines.push(l.to_string());
        }
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    }
}

#[test]
fn view_reads_older_and_grouped_folders_and_refuses_bad_input() {
    let dir = tmp("layouts");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, SCENE.replace("frames = 6", "frames = 2")).unwrap();
    let out = dir.join("out");
    let o = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let page = |name: &str| dir.join(name);
    let meta = |p: &Path| {
        let h = std::fs::read_to_string(p).unwrap();
        let start = h.find(",\"meta\":").unwrap() + 8;
        let end = h[start..].find("}</script>").unwrap();
        serde_json::from_str::<serde_json::Value>(&h[start..start + end]).unwrap()
    };

    // An older report without `bodies`/`colliders`: one colour, no colliders, a note.
    let report_path = out.join("report.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let full = report.clone();
    report.as_object_mut().unwrap().remove("bodies");
    report.as_object_mut().unwrap().remove("colliders");
    // Older runs wrote no frame times and one merged mesh per frame.
    for f in report["frames"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("time");
    }
    ungroup_frames(&out);
    std::fs::write(&report_path, report.to_string()).unwrap();
    let o = supple(&[
        "view",
        out.to_str().unwrap(),
        "-o",
        page("old.html").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let m = meta(&page("old.html"));
    assert_eq!(m["bodies"].as_array().unwrap().len(), 1);
    assert_eq!(m["colliders"].as_array().unwrap().len(), 0);
    assert!(
        m["notes"].to_string().contains("one colour"),
        "{}",
        m["notes"]
    );
    // Frame k of an older run is the state after k + 1 frames.
    let h = std::fs::read_to_string(page("old.html")).unwrap();
    assert!(h.contains("\"index\":0,\"time\":0.01666"), "{h:.2000}");

    // Per-body `o` groups without a report: bodies named by the groups.
    group_frames(&out, &["faller", "rester"], 26);
    std::fs::remove_file(&report_path).unwrap();
    let o = supple(&[
        "view",
        &out.join("frames").display().to_string(),
        "-o",
        page("grouped.html").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let m = meta(&page("grouped.html"));
    let names: Vec<_> = m["bodies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].clone())
        .collect();
    assert_eq!(names, ["faller", "rester"]);
    assert!(
        m["notes"].to_string().contains("no report.json"),
        "{}",
        m["notes"]
    );

    // A report whose body ranges do not fit the frames.
    let mut bad = full.clone();
    bad["bodies"][1]["surface_vertices"] = serde_json::json!([26, 27]);
    std::fs::write(&report_path, bad.to_string()).unwrap();
    let o = supple(&["view", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bodies[1].surface_vertices"),
        "{}",
        text(&o)
    );
    std::fs::write(&report_path, full.to_string()).unwrap();

    // Bad arguments and folders: exit 2 with one line naming the problem.
    let o = supple(&["view", out.to_str().unwrap(), "--every", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--every"), "{}", text(&o));
    let o = supple(&["view", dir.join("missing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a folder"), "{}", text(&o));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = supple(&["view", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no frame_NNNN.obj"), "{}", text(&o));
    // A malformed frame is named with its line.
    let f1 = out.join("frames").join("frame_0001.obj");
    let t = std::fs::read_to_string(&f1).unwrap();
    std::fs::write(&f1, t.replacen("\nv ", "\nv 0 nan-ish 0\nv ", 1)).unwrap();
    let o = supple(&["view", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("frame_0001.obj:"), "{}", text(&o));
    // A frame with a different topology.
    std::fs::write(&f1, t.replacen("\nf ", "\nf 1 2 3\nf ", 1)).unwrap();
    let o = supple(&["view", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("topology"), "{}", text(&o));
    // A malformed report.json.
    std::fs::write(&f1, t).unwrap();
    std::fs::write(&report_path, "{\"frames\": 3").unwrap();
    let o = supple(&["view", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("report.json"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}
