//! Scene fuzzing in the suite (no GPU): every input of the scene fuzz corpus
//! (`engine/fuzz/corpus/scene/`, grown by `cargo fuzz run scene`) and a bounded, seeded set of
//! mutations of the repository's scenes (numbers → NaN, ±inf, huge, negative, wrong types;
//! deleted, duplicated and unknown lines; overrides) go through parsing, checking and model
//! building (`engine/fuzz/scene_case.rs`): never a panic, and every error names a line, a
//! field path or the override at fault.

#[path = "../fuzz/scene_case.rs"]
mod scene_case;

use std::path::Path;

/// Values a number is replaced with.
const VALUES: [&str; 14] = [
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1",
    "0",
    "4294967296",
    "100000",
    "-0.0",
    "\"x\"",
    "[1, 2]",
    "[1.0, 2.0, 3.0, 4.0]",
    "{ a = 1 }",
    "true",
];

/// Overrides appended to some inputs (valid and invalid paths and values).
const OVERRIDES: [&str; 10] = [
    "simulation.substeps=100000",
    "simulation.frames=0",
    "body[0].material.density=nan",
    "body[0].mesh.cells=[100000, 100000, 100000]",
    "body[9].name=\"x\"",
    "collision.method=\"sideways\"",
    "simulation.gravity=[0, 0]",
    "xpbd.iterations=4294967295",
    "body.0.velocity=[1, 2, 3]",
    "collider[0].offset=-1",
];

/// A small deterministic generator (no dependency): 64-bit LCG.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

/// Byte ranges of the numbers in `text` (not parts of names).
fn numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = (b[i].is_ascii_digit()
            || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if starts {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b"._eE+-".contains(&b[i])) {
                i += 1;
            }
            out.push(s..i);
        } else {
            i += 1;
        }
    }
    out
}

/// One mutation of `seed`.
fn mutate(seed: &str, rng: &mut Lcg) -> String {
    let lines: Vec<&str> = seed.lines().collect();
    let mut text = match rng.below(5) {
        0 | 1 => {
            let nums = numbers(seed);
            if nums.is_empty() {
                seed.to_string()
            } else {
                let r = nums[rng.below(nums.len())].clone();
                format!(
                    "{}{}{}",
                    &seed[..r.start],
                    VALUES[rng.below(VALUES.len())],
                    &seed[r.end..]
                )
            }
        }
        2 => {
            let k = rng.below(lines.len());
            let mut l = lines.clone();
            l.remove(k.min(l.len().saturating_sub(1)));
            l.join("\n")
        }
        3 => {
            let k = rng.below(lines.len());
            let mut l = lines.clone();
            if let Some(&line) = lines.get(k) {
                l.insert(k, line);
            }
            l.join("\n")
        }
        _ => {
            let k = rng.below(lines.len() + 1);
            let mut l = lines.clone();
            l.insert(k.min(l.len()), "unknown_field = 1");
            l.join("\n")
        }
    };
    if rng.below(3) == 0 {
        text.push('\0');
        text.push_str(OVERRIDES[rng.below(OVERRIDES.len())]);
    }
    text
}

#[test]
fn scene_fuzz_corpus_and_seeded_mutations_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("fuzz/corpus/scene");
    let mut replayed = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&corpus)
        .expect("scene fuzz corpus folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let r = std::panic::catch_unwind(|| scene_case::run(&data));
        assert!(r.is_ok(), "{}: a finding", path.display());
        replayed += 1;
    }
    assert!(
        replayed >= 20,
        "the scene corpus has only {replayed} inputs"
    );

    // Seeded mutations of the repository's scenes.
    let mut seeds: Vec<_> = std::fs::read_dir(root.join("../scenes"))
        .expect("scenes folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    seeds.sort();
    let mut rng = Lcg(0x5eed);
    let (mut valid, mut refused) = (0, 0);
    for path in &seeds {
        let seed = std::fs::read_to_string(path).unwrap();
        for _ in 0..40 {
            let input = mutate(&seed, &mut rng);
            let r = std::panic::catch_unwind(|| scene_case::run(input.as_bytes()));
            match r {
                Ok(true) => valid += 1,
                Ok(false) => refused += 1,
                Err(_) => panic!("{}: a finding on the mutation\n{input}", path.display()),
            }
        }
    }
    // Both outcomes occur: the mutations are neither all harmless nor all refused.
    assert!(valid > 0 && refused > 0, "valid {valid}, refused {refused}");
}
