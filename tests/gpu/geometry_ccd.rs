//! Conservative CCD (point–triangle, edge–edge): the f64 and f32 plain-Rust references and the
//! GPU batch kernel against the IPC Toolkit oracle's exact first-contact reference
//! (`tests/data/oracles/ccd.json`, see NOTICE.md there). Zero false negatives are required, the
//! time of impact must not exceed the exact one, and the false-positive rate is printed. The
//! minimum-separation variant is checked against dense sampling of the distance.
use supple::cpu_reference::ccd::{ccd, CcdKind, CcdResult, CCD_FLAG_CAPPED, CCD_FLAG_HIT};
use supple::cpu_reference::distance::{edge_edge, point_triangle, Real};
use supple::geometry::{CcdBatch, CcdOutputs};
use supple::math::Vec3;
use supple::vk::{BufferUsage, CompileOptions, Context, Graph};
use supple_gpu_tests::oracles::{cases, num, oracle, points4, text};
use supple_gpu_tests::{assert_no_validation_errors, context};

/// One oracle CCD case.
struct Case {
    id: u64,
    kind: CcdKind,
    category: String,
    x0: [Vec3; 4],
    x1: [Vec3; 4],
    ref_collide: bool,
    ref_toi: Option<f64>,
    /// ipctk TightInclusionCCD with min_distance = 1e-3 (None: timed out).
    ti_md_collide: Option<bool>,
}

fn load() -> Vec<Case> {
    let doc = oracle("ccd.json");
    cases(&doc)
        .iter()
        .map(|c| Case {
            id: num(&c["id"]) as u64,
            kind: if c["kind"].as_str() == Some("edge_edge") {
                CcdKind::EdgeEdge
            } else {
                CcdKind::PointTriangle
            },
            category: text(&c["category"]),
            x0: points4(&c["x_t0"]),
            x1: points4(&c["x_t1"]),
            ref_collide: c["ref_collide"].as_bool() == Some(true),
            ref_toi: c["ref_toi"].as_f64(),
            ti_md_collide: c["ipctk_ti_md1e-3_collide"].as_bool(),
        })
        .collect()
}

/// A case relative to its first vertex at t = 0 (in f64), as the f32 paths take it.
fn centred(c: &Case) -> ([Vec3; 4], [Vec3; 4]) {
    let o = c.x0[0];
    (c.x0.map(|v| v - o), c.x1.map(|v| v - o))
}

fn ccd_in<T: Real>(c: &Case, delta: f64, centre: bool) -> CcdResult<f64> {
    let (x0, x1) = if centre { centred(c) } else { (c.x0, c.x1) };
    let r = ccd(
        c.kind,
        &x0.map(|v| v.map(T::of)),
        &x1.map(|v| v.map(T::of)),
        T::of(delta),
    );
    CcdResult {
        hit: r.hit,
        toi: r.toi.to_f64(),
        capped: r.capped,
    }
}

/// Tally of one CCD implementation against the oracle.
#[derive(Default, Debug)]
struct Tally {
    ref_hits: usize,
    ref_misses: usize,
    false_positives: usize,
    /// False positives whose sampled distance never drops below 1e-6 of the case's size.
    clear_false_positives: usize,
    capped: usize,
    /// toi / exact toi over the reference collisions with a toi.
    toi_ratios: Vec<f64>,
}

impl Tally {
    fn fp_rate(&self) -> f64 {
        self.false_positives as f64 / self.ref_misses.max(1) as f64
    }
}

/// Asserts zero false negatives and toi ≤ reference toi; returns the tally.
fn check(label: &str, cases: &[Case], results: &[CcdResult<f64>]) -> Tally {
    let mut t = Tally::default();
    for (c, r) in cases.iter().zip(results) {
        assert!(
            (0.0..=1.0).contains(&r.toi),
            "{label}: case {} toi {} outside [0, 1]",
            c.id,
            r.toi
        );
        t.capped += r.capped as usize;
        if c.ref_collide {
            t.ref_hits += 1;
            assert!(
                r.hit,
                "{label}: FALSE NEGATIVE on case {} ({:?}, {}): reference toi {:?}",
                c.id, c.kind, c.category, c.ref_toi
            );
            if let Some(rt) = c.ref_toi {
                assert!(
                    r.toi <= rt,
                    "{label}: case {} ({}): toi {} after the exact first contact {rt}",
                    c.id,
                    c.category,
                    r.toi
                );
                if rt > 0.0 {
                    t.toi_ratios.push(r.toi / rt);
                }
            }
        } else {
            t.ref_misses += 1;
            t.false_positives += r.hit as usize;
            if r.hit {
                t.clear_false_positives += (min_distance(c) > 1e-6 * case_size(c)) as usize;
            }
        }
    }
    t.toi_ratios.sort_by(f64::total_cmp);
    let median = t
        .toi_ratios
        .get(t.toi_ratios.len() / 2)
        .copied()
        .unwrap_or(1.0);
    println!(
        "{label}: {} reference collisions all found (toi / exact toi: median {median:.4}, \
         min {:.4}); false positives {}/{} = {:.1}% ({} of them stay farther than 1e-6·size, \
         the rest touch within 1e-6·size); advancement capped {}",
        t.ref_hits,
        t.toi_ratios.first().copied().unwrap_or(1.0),
        t.false_positives,
        t.ref_misses,
        100.0 * t.fp_rate(),
        t.clear_false_positives,
        t.capped
    );
    t
}

/// Smallest distance over [0, 1] (f64): dense sampling refined by ternary search.
fn min_distance(c: &Case) -> f64 {
    let n = 2000;
    let d = |t: f64| sq_dist_at(c, t).sqrt();
    let best = (0..=n).min_by(|&a, &b| d(a as f64 / n as f64).total_cmp(&d(b as f64 / n as f64)));
    let tb = best.unwrap_or(0) as f64 / n as f64;
    let (mut lo, mut hi) = (
        (tb - 1.0 / n as f64).max(0.0),
        (tb + 1.0 / n as f64).min(1.0),
    );
    for _ in 0..100 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if d(m1) < d(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    d(tb).min(d(0.5 * (lo + hi)))
}

/// Largest coordinate offset from the first vertex at t = 0 over both configurations.
fn case_size(c: &Case) -> f64 {
    c.x0.iter()
        .chain(&c.x1)
        .map(|v| (v - c.x0[0]).amax())
        .fold(0.0, f64::max)
}

#[test]
fn cpu_reference_f64_has_no_false_negatives() {
    let cases = load();
    assert!(cases.len() > 300);
    let res: Vec<_> = cases.iter().map(|c| ccd_in::<f64>(c, 0.0, false)).collect();
    check("f64 reference", &cases, &res);
}

#[test]
fn cpu_reference_f32_has_no_false_negatives() {
    let cases = load();
    let res: Vec<_> = cases.iter().map(|c| ccd_in::<f32>(c, 0.0, true)).collect();
    check("f32 reference", &cases, &res);
}

/// Runs every case through the GPU batch kernel (point–triangle and edge–edge batches).
fn gpu_ccd(ctx: &Context, cases: &[Case], delta: f32) -> Vec<CcdResult<f64>> {
    let batch = CcdBatch::new(ctx);
    let mut out = vec![
        CcdResult {
            hit: false,
            toi: 1.0,
            capped: false
        };
        cases.len()
    ];
    for kind in [CcdKind::PointTriangle, CcdKind::EdgeEdge] {
        let idx: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].kind == kind)
            .collect();
        let pack = |pick: &dyn Fn(&Case) -> [Vec3; 4]| -> Vec<[f32; 4]> {
            idx.iter()
                .flat_map(|&i| pick(&cases[i]).map(|v| [v.x as f32, v.y as f32, v.z as f32, 0.0]))
                .collect()
        };
        let x0 = ctx
            .upload_buffer("x0", &pack(&|c| centred(c).0), BufferUsage::STORAGE)
            .unwrap();
        let x1 = ctx
            .upload_buffer("x1", &pack(&|c| centred(c).1), BufferUsage::STORAGE)
            .unwrap();
        let o = CcdOutputs::new(ctx, idx.len()).unwrap();
        let mut g = Graph::new("ccd");
        batch.record(&mut g, kind, &x0, &x1, idx.len(), delta, &o);
        g.compile(ctx, CompileOptions::default())
            .unwrap()
            .run()
            .unwrap();
        let (toi, flags) = (o.toi.read().unwrap(), o.flags.read().unwrap());
        for (j, &i) in idx.iter().enumerate() {
            out[i] = CcdResult {
                hit: flags[j] & CCD_FLAG_HIT != 0,
                toi: toi[j] as f64,
                capped: flags[j] & CCD_FLAG_CAPPED != 0,
            };
        }
    }
    out
}

#[test]
fn gpu_ccd_has_no_false_negatives() {
    let ctx = context(false);
    let cases = load();
    let gpu = gpu_ccd(&ctx, &cases, 0.0);
    check("GPU (f32)", &cases, &gpu);
    // Same branch structure as the f32 reference: hits agree (FMA contraction may move a
    // borderline case; report it).
    let agree = cases
        .iter()
        .zip(&gpu)
        .filter(|(c, g)| ccd_in::<f32>(c, 0.0, true).hit == g.hit)
        .count();
    println!(
        "GPU vs f32 reference: hit flags agree on {agree}/{}",
        cases.len()
    );
    assert!(agree * 100 >= cases.len() * 99);
    assert_no_validation_errors(&ctx);
}

fn sq_dist_at(c: &Case, t: f64) -> f64 {
    let x: [Vec3; 4] = [0, 1, 2, 3].map(|k| c.x0[k] + (c.x1[k] - c.x0[k]) * t);
    match c.kind {
        CcdKind::PointTriangle => point_triangle(&x[0], &x[1], &x[2], &x[3]).sq_dist,
        CcdKind::EdgeEdge => edge_edge(&x[0], &x[1], &x[2], &x[3]).sq_dist,
    }
}

/// Minimum-separation variant: on [0, toi) the distance stays above δ (dense sampling), a
/// reported miss never comes within δ, and the hits of the ipctk TightInclusion run with the
/// same minimum distance are found.
fn check_min_separation(label: &str, cases: &[Case], res: &[CcdResult<f64>], delta: f64) {
    let n = 2000;
    let (mut hits, mut ti_agree, mut ti_known, mut sampled_hits) = (0, 0, 0, 0);
    for (c, r) in cases.iter().zip(res) {
        let tol = 1e-5 * case_size(c); // f32 rounding of the inputs and of the distance
        let end = if r.hit { r.toi } else { 1.0 };
        let first_within = (0..=n)
            .map(|i| i as f64 / n as f64)
            .find(|&t| sq_dist_at(c, t).sqrt() <= delta);
        sampled_hits += first_within.is_some() as usize;
        for i in 0..=n {
            let t = end * i as f64 / n as f64;
            if t >= end && r.hit {
                break;
            }
            let d = sq_dist_at(c, t).sqrt();
            assert!(
                d >= delta - tol,
                "{label}: case {} ({}): distance {d:e} < δ at t = {t} before toi {} (hit {})",
                c.id,
                c.category,
                r.toi,
                r.hit
            );
        }
        if let Some(tf) = first_within {
            assert!(
                r.hit && r.toi <= tf,
                "{label}: case {} reaches δ at {tf}",
                c.id
            );
        }
        hits += r.hit as usize;
        if let Some(ti) = c.ti_md_collide {
            ti_known += 1;
            ti_agree += (ti == r.hit) as usize;
            assert!(!ti || r.hit || first_within.is_none(), "case {}", c.id);
        }
    }
    println!(
        "{label} δ = {delta}: {hits}/{} hits ({sampled_hits} reach δ on a 2001-point sampling); \
         agrees with ipctk TightInclusion(min_distance = 1e-3) on {ti_agree}/{ti_known}",
        cases.len()
    );
}

#[test]
fn min_separation_variant_is_conservative() {
    let cases = load();
    let delta = 1e-3;
    let res: Vec<_> = cases
        .iter()
        .map(|c| ccd_in::<f64>(c, delta, false))
        .collect();
    check_min_separation("f64 reference", &cases, &res, delta);
    // Every plain collision is also a δ-collision, no later.
    for (c, r) in cases.iter().zip(&res) {
        let plain = ccd_in::<f64>(c, 0.0, false);
        assert!(
            !plain.hit || (r.hit && r.toi <= plain.toi + 1e-12),
            "case {}",
            c.id
        );
    }
    let ctx = context(false);
    let gpu = gpu_ccd(&ctx, &cases, delta as f32);
    check_min_separation("GPU (f32)", &cases, &gpu, delta);
    assert_no_validation_errors(&ctx);
}
