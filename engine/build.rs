//! Compiles every GLSL compute kernel under `kernels/` (the workspace's top-level folder) to
//! SPIR-V with shaderc and writes a generated table (`$OUT_DIR/kernel_table.rs`) that embeds
//! them. Every source and every file it includes is a `rerun-if-changed` dependency; a compile
//! error fails the build with `file:line: message`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => panic!("cannot read kernel folder {}: {e}", dir.display()),
    };
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "comp") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernels = manifest
        .parent()
        .expect("engine/ has a parent")
        .join("kernels");
    let include_root = kernels.join("include");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", kernels.display());
    println!(
        "cargo:rustc-env=SUPPLE_KERNEL_SOURCE_DIR={}",
        kernels.display()
    );

    let mut sources = Vec::new();
    collect(&kernels, &mut sources);
    // Folders are watched too so that a new kernel file triggers a rebuild.
    let mut dirs: Vec<PathBuf> = sources
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    dirs.push(include_root.clone());
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        println!("cargo:rerun-if-changed={}", d.display());
    }

    let mut table = String::new();
    let mut ids = String::new();
    let mut statics = String::new();
    let mut failures = Vec::new();
    writeln!(
        table,
        "/// Every kernel compiled at build time, in `KernelId` order."
    )
    .unwrap();
    writeln!(table, "pub static KERNELS: &[KernelSource] = &[").unwrap();
    for (index, src) in sources.iter().enumerate() {
        println!("cargo:rerun-if-changed={}", src.display());
        let rel = src
            .strip_prefix(&kernels)
            .expect("source under kernels/")
            .with_extension("");
        let name = rel.to_string_lossy().replace('\\', "/");
        match supple_shader_compiler::compile_compute(src, &include_root, &[]) {
            Ok(k) => {
                for inc in &k.includes {
                    println!("cargo:rerun-if-changed={}", inc.display());
                }
                let spv_path = out_dir.join(format!("kernel_{index}.spv"));
                let bytes: Vec<u8> = k.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
                std::fs::write(&spv_path, bytes).expect("write SPIR-V to OUT_DIR");
                writeln!(
                    statics,
                    "static SPIRV_{index}: AlignedSpirv<{}> = AlignedSpirv(*include_bytes!({:?}));",
                    k.spirv.len() * 4,
                    spv_path.display().to_string()
                )
                .unwrap();
                let shape = supple_shader_compiler::workgroup_dependence(&k.spirv);
                writeln!(
                    table,
                    "    KernelSource {{ name: {name:?}, source: {:?}, spirv: &SPIRV_{index}.0, workgroup_dependence: {shape:?} }},",
                    src.display().to_string(),
                )
                .unwrap();
                let ident = name.to_uppercase().replace(['/', '-', '.'], "_");
                writeln!(ids, "    /// `kernels/{name}.comp`\n    pub const {ident}: KernelId = KernelId({index});").unwrap();
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    writeln!(table, "];\n\n/// Named ids of the built-in kernels.\npub mod ids {{\n    use super::KernelId;\n{ids}}}").unwrap();
    if !failures.is_empty() {
        for f in &failures {
            for line in f.lines() {
                println!("cargo:warning={line}");
            }
        }
        eprintln!("{}", failures.join("\n"));
        std::process::exit(1);
    }
    std::fs::write(out_dir.join("kernel_table.rs"), statics + &table).expect("write kernel table");
}
