//! GLSL compute-shader compilation for Supple (used by the engine's build script and by the
//! optional runtime recompilation path).
//!
//! Every kernel is a `.comp` file under `kernels/`; `#include "x.glsl"` resolves relative to the
//! including file first, then to `kernels/include/`. Errors carry `file:line: message`.

#![deny(missing_docs)]

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A compile failure with shaderc's diagnostics rewritten as `file:line: message` lines.
#[derive(Debug, Clone)]
pub struct CompileError {
    /// The kernel source that failed.
    pub file: PathBuf,
    /// One or more diagnostics, each `file:line: message`.
    pub message: String,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "failed to compile {}:\n{}",
            self.file.display(),
            self.message
        )
    }
}

impl std::error::Error for CompileError {}

/// The result of compiling one kernel: SPIR-V words and every file it included.
#[derive(Debug, Clone)]
pub struct CompiledKernel {
    /// SPIR-V words.
    pub spirv: Vec<u32>,
    /// Absolute paths of every `#include`d file (for `rerun-if-changed`).
    pub includes: Vec<PathBuf>,
}

/// Compiles one GLSL compute shader to SPIR-V (Vulkan 1.3 target, optimised for performance).
///
/// `include_root` is the directory searched for `#include <...>` and as a fallback for
/// `#include "..."`; `defines` are `(name, value)` macro definitions.
pub fn compile_compute(
    path: &Path,
    include_root: &Path,
    defines: &[(&str, &str)],
) -> Result<CompiledKernel, CompileError> {
    let err = |message: String| CompileError {
        file: path.to_path_buf(),
        message,
    };
    let source = std::fs::read_to_string(path)
        .map_err(|e| err(format!("{}: cannot read: {e}", path.display())))?;
    let compiler =
        shaderc::Compiler::new().map_err(|e| err(format!("shaderc unavailable: {e}")))?;
    let mut options =
        shaderc::CompileOptions::new().map_err(|e| err(format!("shaderc options: {e}")))?;
    options.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_3 as u32,
    );
    options.set_target_spirv(shaderc::SpirvVersion::V1_6);
    options.set_optimization_level(shaderc::OptimizationLevel::Performance);
    options.set_generate_debug_info();
    for (k, v) in defines {
        options.add_macro_definition(k, Some(v));
    }
    let includes: Rc<RefCell<Vec<PathBuf>>> = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&includes);
    let root = include_root.to_path_buf();
    options.set_include_callback(move |requested, kind, requester, _depth| {
        let requester_dir = Path::new(requester)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let candidates = match kind {
            shaderc::IncludeType::Relative => {
                vec![requester_dir.join(requested), root.join(requested)]
            }
            shaderc::IncludeType::Standard => vec![root.join(requested)],
        };
        for c in candidates {
            if let Ok(content) = std::fs::read_to_string(&c) {
                let resolved = c.canonicalize().unwrap_or(c);
                sink.borrow_mut().push(resolved.clone());
                return Ok(shaderc::ResolvedInclude {
                    resolved_name: resolved.to_string_lossy().into_owned(),
                    content,
                });
            }
        }
        Err(format!(
            "cannot find include \"{requested}\" (searched next to {requester} and in {})",
            root.display()
        ))
    });
    let name = path.to_string_lossy().into_owned();
    let artifact = compiler
        .compile_into_spirv(
            &source,
            shaderc::ShaderKind::Compute,
            &name,
            "main",
            Some(&options),
        )
        .map_err(|e| err(rewrite_diagnostics(&e.to_string())))?;
    drop(options);
    let mut includes = includes.borrow().clone();
    includes.sort();
    includes.dedup();
    Ok(CompiledKernel {
        spirv: artifact.as_binary().to_vec(),
        includes,
    })
}

/// shaderc prints `name:LINE: error: ...`; keep that and drop noise lines.
fn rewrite_diagnostics(raw: &str) -> String {
    raw.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.strip_prefix("compilation error: ")
                .unwrap_or(l)
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_file_and_line_of_errors() {
        let dir = std::env::temp_dir().join(format!("supple-shc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("broken.comp");
        std::fs::write(&file, "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  undefined_thing = 1;\n}\n").unwrap();
        let e = compile_compute(&file, &dir, &[]).unwrap_err();
        assert!(e.message.contains("broken.comp:4"), "{}", e.message);
        let ok = dir.join("ok.comp");
        std::fs::write(&dir.join("inc.glsl"), "const uint K = 3u;\n").unwrap();
        std::fs::write(&ok, "#version 450\n#include \"inc.glsl\"\nlayout(local_size_x = 1) in;\nlayout(std430, binding=0) buffer B { uint v[]; };\nvoid main() { v[0] = K; }\n").unwrap();
        let k = compile_compute(&ok, &dir, &[]).unwrap();
        assert_eq!(k.spirv[0], 0x0723_0203);
        assert_eq!(k.includes.len(), 1);
    }
}
