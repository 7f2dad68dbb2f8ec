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

/// Why a compute kernel depends on its workgroup shape, found in its SPIR-V: workgroup-shared
/// memory, barriers, subgroup operations, or a use of the workgroup size (specialization
/// constant 0 or `gl_WorkGroupSize`), local/workgroup/subgroup ids or the workgroup count.
/// `None` means every invocation works on its own (it uses at most `gl_GlobalInvocationID`), so
/// the host may change the workgroup size and rescale the group count without changing results.
pub fn workgroup_dependence(spirv: &[u32]) -> Option<&'static str> {
    const OP_NAME: u32 = 5;
    const OP_MEMBER_NAME: u32 = 6;
    const OP_ENTRY_POINT: u32 = 15;
    const OP_EXECUTION_MODE_ID: u32 = 331;
    const OP_DECORATE: u32 = 71;
    const OP_VARIABLE: u32 = 59;
    const OP_CONTROL_BARRIER: u32 = 224;
    const OP_SPEC_CONSTANT: u32 = 50;
    const OP_SPEC_CONSTANT_COMPOSITE: u32 = 51;
    const DECORATION_SPEC_ID: u32 = 1;
    const DECORATION_BUILTIN: u32 = 11;
    const STORAGE_WORKGROUP: u32 = 4;
    // NumWorkgroups, WorkgroupSize, WorkgroupId, LocalInvocationId, LocalInvocationIndex,
    // SubgroupSize, NumSubgroups, SubgroupId, SubgroupLocalInvocationId.
    const SHAPE_BUILTINS: [u32; 9] = [24, 25, 26, 27, 29, 36, 38, 40, 41];
    let words = spirv.get(5..).unwrap_or(&[]);
    let instructions = || {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let head = *words.get(at)?;
            let count = (head >> 16) as usize;
            let ins = words.get(at..at + count.max(1))?;
            at += count.max(1);
            Some((head & 0xffff, ins))
        })
    };
    // Ids that carry the workgroup shape.
    let mut shape_ids = std::collections::HashSet::new();
    for (op, ins) in instructions() {
        match op {
            OP_VARIABLE if ins.get(3) == Some(&STORAGE_WORKGROUP) => {
                return Some("uses workgroup-shared memory")
            }
            OP_CONTROL_BARRIER => return Some("uses barriers"),
            333..=366 => return Some("uses subgroup operations"),
            OP_DECORATE => match (ins.get(1), ins.get(2), ins.get(3)) {
                (Some(&id), Some(&DECORATION_BUILTIN), Some(b)) if SHAPE_BUILTINS.contains(b) => {
                    shape_ids.insert(id);
                }
                (Some(&id), Some(&DECORATION_SPEC_ID), Some(&0)) => {
                    shape_ids.insert(id);
                }
                _ => {}
            },
            _ => {}
        }
    }
    // A use is any other instruction naming one of them as an id operand (definitions, debug
    // information, decorations, types, the entry point's interface and the local-size
    // execution mode are not uses; literal operands are skipped).
    for (op, ins) in instructions() {
        let defines_shape = matches!(
            op,
            OP_VARIABLE | OP_SPEC_CONSTANT | OP_SPEC_CONSTANT_COMPOSITE
        ) && ins.get(2).is_some_and(|id| shape_ids.contains(id));
        if defines_shape
            || matches!(
                op,
                OP_NAME | OP_MEMBER_NAME | OP_ENTRY_POINT | OP_EXECUTION_MODE_ID | OP_DECORATE
            )
        {
            continue;
        }
        if id_operands(op, ins).iter().any(|w| shape_ids.contains(w)) {
            return Some("uses its workgroup size, local or workgroup ids");
        }
    }
    None
}

/// The operand words of a SPIR-V instruction that are ids (conservatively all of them for
/// instructions not listed; none for those whose operands are literals or declarations).
fn id_operands(op: u32, ins: &[u32]) -> &[u32] {
    let from = |k: usize| ins.get(k..).unwrap_or(&[]);
    let range = |a: usize, b: usize| ins.get(a..b.min(ins.len())).unwrap_or(&[]);
    match op {
        // Debug information, extensions, capabilities, memory model, execution modes,
        // annotations, types and constants with literal values.
        1..=8 | 10 | 11 | 14 | 16 | 17 | 19..=39 | 41..=43 | 71..=75 | 317 | 330 | 332 => &[],
        12 => from(5),      // OpExtInst: skip the set's instruction number
        54 => &[],          // OpFunction: control literal and types
        59 => from(4),      // OpVariable: storage class literal; the initializer
        61 => range(3, 4),  // OpLoad: memory-access literals
        62 => range(1, 3),  // OpStore: memory-access literals
        52 => from(4),      // OpSpecConstantOp: skip the opcode literal
        79 => range(3, 5),  // OpVectorShuffle: component literals
        81 => range(3, 4),  // OpCompositeExtract: index literals
        82 => range(3, 5),  // OpCompositeInsert: index literals
        246 | 247 => &[],   // OpLoopMerge, OpSelectionMerge: labels and control literals
        250 => range(1, 2), // OpBranchConditional: branch weights
        251 => range(1, 2), // OpSwitch: case literals
        _ => from(1),
    }
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

    #[test]
    fn finds_what_ties_a_kernel_to_its_workgroup_shape() {
        let dir = std::env::temp_dir().join(format!("supple-shc-wg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let head = "#version 460\n#extension GL_KHR_shader_subgroup_arithmetic : require\n\
                    layout(local_size_x_id = 0) in;\nlayout(constant_id = 0) const uint WG = 64;\n\
                    layout(std430, binding=0) buffer B { float v[]; };\n";
        let cases = [
            ("void main() { uint i = gl_GlobalInvocationID.x; if (i < 100u) v[i] *= 2.0; }", None),
            ("shared float s[64];\nvoid main() { s[gl_LocalInvocationID.x] = 1.0; barrier(); v[0] = s[3]; }", Some("shared")),
            ("void main() { v[gl_GlobalInvocationID.x] = subgroupAdd(1.0); }", Some("subgroup")),
            ("void main() { v[gl_GlobalInvocationID.x] = float(gl_WorkGroupID.x); }", Some("ids")),
            ("void main() { v[gl_GlobalInvocationID.x] = float(WG); }", Some("size")),
            ("void main() { v[gl_GlobalInvocationID.x] = float(gl_LocalInvocationIndex); }", Some("ids")),
        ];
        for (k, (body, want)) in cases.iter().enumerate() {
            let file = dir.join(format!("k{k}.comp"));
            std::fs::write(&file, format!("{head}{body}\n")).unwrap();
            let spv = compile_compute(&file, &dir, &[]).unwrap().spirv;
            let got = workgroup_dependence(&spv);
            match want {
                None => assert_eq!(got, None, "{body}"),
                Some(w) => assert!(got.is_some_and(|g| g.contains(w)), "{body}: {got:?}"),
            }
        }
    }
}
