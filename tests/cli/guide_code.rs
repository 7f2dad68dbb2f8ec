//! The code in docs/guide.md and README.md is tested (issue 27, item 1). Every ```` ```rust ````
//! block is a complete program that `cargo test -p supple --doc` compiles and runs
//! (engine/src/lib.rs includes both files as doc comments under `cfg(doctest)`); this test
//! checks the conventions that make that true: every block says its language, a Rust block
//! that is deliberately a fragment is ```` ```rust,ignore ```` with a `// fragment: why` first
//! line, both files stay included, and the Python blocks run once the Python bindings exist
//! (the hook below).
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fenced block: file, line of the opening fence, info string, body.
struct Block {
    file: &'static str,
    line: usize,
    info: String,
    body: String,
}

fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    for file in ["docs/guide.md", "README.md"] {
        let text = std::fs::read_to_string(root().join(file)).expect("read markdown");
        let mut open: Option<Block> = None;
        for (i, l) in text.lines().enumerate() {
            let Some(info) = l.trim_start().strip_prefix("```") else {
                if let Some(b) = open.as_mut() {
                    b.body.push_str(l);
                    b.body.push('\n');
                }
                continue;
            };
            match open.take() {
                Some(b) => out.push(b),
                None => {
                    open = Some(Block {
                        file,
                        line: i + 1,
                        info: info.trim().to_string(),
                        body: String::new(),
                    })
                }
            }
        }
        assert!(open.is_none(), "{file}: a code block is not closed");
    }
    out
}

#[test]
fn every_block_says_what_it_is_and_rust_blocks_are_programs() {
    let mut rust = 0;
    for b in blocks() {
        let at = format!("{}:{}", b.file, b.line);
        assert!(
            !b.info.is_empty(),
            "{at}: a code block without a language (rustdoc would compile it as Rust)"
        );
        let tags: Vec<&str> = b.info.split(',').map(str::trim).collect();
        if tags[0] != "rust" {
            continue;
        }
        rust += 1;
        if tags.contains(&"ignore") {
            assert!(
                b.body.trim_start().starts_with("// fragment:"),
                "{at}: a ```rust,ignore block must start with `// fragment: why`"
            );
        } else {
            assert!(
                b.body.contains("fn main()"),
                "{at}: a tested Rust block is a whole program"
            );
            assert!(
                b.body.contains("use supple"),
                "{at}: a tested Rust block has its use lines"
            );
        }
    }
    assert!(rust >= 2, "the guide's Rust examples were found ({rust})");
    let lib = std::fs::read_to_string(root().join("engine/src/lib.rs")).unwrap();
    for f in ["../../docs/guide.md", "../../README.md"] {
        assert!(
            lib.contains(&format!("include_str!(\"{f}\")")),
            "engine/src/lib.rs no longer includes {f} as a doc test"
        );
    }
}

/// The hook for the Python blocks: once `import supple` works in `SUPPLE_PYTHON` (or
/// `python3`), every ```` ```python ```` block runs as a script from the repository root;
/// with `SUPPLE_REQUIRE_PYTHON` set (the test command sets it) a missing package fails.
#[test]
fn python_blocks_run_when_the_bindings_exist() {
    let python = std::env::var("SUPPLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let py: Vec<Block> = blocks()
        .into_iter()
        .filter(|b| b.info.split(',').next() == Some("python"))
        .collect();
    let has_supple = std::process::Command::new(&python)
        .args(["-c", "import supple"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_supple {
        // The test command installs the bindings first and requires them.
        assert!(
            std::env::var_os("SUPPLE_REQUIRE_PYTHON").is_none(),
            "SUPPLE_REQUIRE_PYTHON is set but {python} cannot `import supple`: the guide's {} \
             Python blocks cannot run",
            py.len()
        );
        println!(
            "Python blocks NOT RUN ({} found): {python} cannot `import supple`",
            py.len()
        );
        return;
    }
    for b in py {
        let o = std::process::Command::new(&python)
            .args(["-c", &b.body])
            .current_dir(root())
            .output()
            .expect("run python");
        assert!(
            o.status.success(),
            "{}:{}: the Python block failed:\n{}",
            b.file,
            b.line,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
