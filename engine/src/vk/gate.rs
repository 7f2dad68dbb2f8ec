//! Gated sections of a command graph: parts that run only while a condition word, written by an
//! earlier kernel of the same graph (or of an earlier submission), holds. The host records the
//! whole loop body once; the device decides which parts launch, without a host round trip (a
//! device-driven loop: the Newton stepper's iterations, line search and stop test).
//!
//! [`GatedGraph::build`] rewrites each gated section: every direct dispatch becomes an indirect
//! one with its own argument slot, fills and copies become dispatches of
//! `kernels/primitives/fill_u32.comp` and `copy_u32.comp`, and one dispatch of
//! `kernels/primitives/gate_args.comp` before the section writes the slots: the recorded
//! workgroup counts while `flags[word] & mask != 0`, zero workgroups otherwise. Indirect
//! dispatches inside a section keep their own arguments (a solver that decides its own
//! iterations). Barriers follow from the declared accesses as for any graph: the gate writes
//! the slots its section reads as indirect arguments. Reference: `cpu_reference::gate`.
//!
//! Where the context has conditional rendering ([`Context::conditional_rendering`]), a
//! closed section is skipped rather than launched empty: each section gets one more slot
//! first, its predicate, whose recorded value is `[1, 0, 0, 0]` and whose closed value is the
//! gate's `[0, 1, 1, 0]`, so its first word is non-zero iff the section is open; the
//! rewritten dispatches are predicated on that word ([`Dispatch::only_if`]; indirect
//! dispatches that keep their own arguments are not, as without it). The argument buffer is
//! then host-visible, so that after a run the host can count the skipped dispatches
//! ([`super::CompiledGraph::count_skipped_dispatches`]).

use super::buffer::{BufferUsage, GpuBuffer};
use super::context::Context;
use super::error::{VkError, VkResult};
use super::graph::{Access, BufferSlice, Dispatch, Graph, Groups, NodeKind};
use super::kernel::ids;

/// Workgroup size of the gate, fill and copy kernels.
const WG: u32 = 64;

/// One part of a [`GatedGraph`].
enum Part {
    Always(Graph),
    Gated {
        section: Graph,
        flags: BufferSlice,
        word: u32,
        mask: u32,
    },
}

/// A part with its gated section rewritten: the gate's name, condition and push constants
/// (word, mask, first slot, slot count) and the section's dispatches.
enum Rewritten {
    Always(Graph),
    Gated {
        name: String,
        flags: BufferSlice,
        push: [u32; 4],
        nodes: Vec<Dispatch>,
    },
}

/// A graph assembled from parts that always run and sections gated by a device-written word.
pub struct GatedGraph {
    name: String,
    parts: Vec<Part>,
}

impl GatedGraph {
    /// An empty graph named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GatedGraph {
            name: name.into(),
            parts: Vec::new(),
        }
    }

    /// Appends nodes that always run.
    pub fn always(&mut self, g: Graph) {
        self.parts.push(Part::Always(g));
    }

    /// Appends a section that runs only while `flags[word] & mask` is non-zero when the
    /// section is reached (the word is read once, by the section's gate dispatch).
    pub fn gated(&mut self, section: Graph, flags: &GpuBuffer<u32>, word: u32, mask: u32) {
        self.parts.push(Part::Gated {
            section,
            flags: flags.into(),
            word,
            mask,
        });
    }

    /// Direct dispatches, fills and copies of the gated sections (argument slots needed).
    fn gated_nodes(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Gated { section, .. } => section
                    .nodes
                    .iter()
                    .filter(|n| {
                        !matches!(&n.kind, NodeKind::Dispatch(d) if matches!(d.groups, Groups::Indirect(_)))
                    })
                    .count(),
                Part::Always(_) => 0,
            })
            .sum()
    }

    /// The graph to compile: the gated sections rewritten as described in the module
    /// documentation. Allocates the argument slots and uploads the recorded workgroup counts
    /// (the returned graph keeps both buffers alive).
    pub fn build(self, ctx: &Context) -> VkResult<Graph> {
        let align = ctx.shared.caps.min_storage_offset_alignment.max(16);
        let sections = self
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Gated { .. }))
            .count();
        let pad = (align / 16) as usize;
        let conditional = ctx.conditional_rendering();
        let slots = self.gated_nodes().max(1) + sections * (pad + conditional as usize);
        let mut usage = BufferUsage::STORAGE | BufferUsage::INDIRECT;
        if conditional {
            usage |= BufferUsage::CONDITION | BufferUsage::HOST_READ;
        }
        let args =
            ctx.create_buffer::<[u32; 4]>(&format!("{}.gate_args", self.name), slots, usage)?;
        // First the rewritten sections and every slot's recorded counts, then the nodes.
        let mut counts: Vec<[u32; 4]> = Vec::with_capacity(slots);
        let mut rewritten = Vec::with_capacity(self.parts.len());
        for part in self.parts {
            rewritten.push(match part {
                Part::Always(g) => Rewritten::Always(g),
                Part::Gated {
                    section,
                    flags,
                    word,
                    mask,
                } => {
                    // The section's slots are bound from its first: aligned for the binding.
                    while !((counts.len() * 16) as u64).is_multiple_of(align) {
                        counts.push([0, 1, 1, 0]);
                    }
                    let first = counts.len();
                    // The predicate slot: word 0 is 1 while open, 0 once the gate closes it.
                    let predicate = conditional.then(|| {
                        counts.push([1, 0, 0, 0]);
                        args.slice(first..first + 1)
                    });
                    let name = section.name().to_string();
                    let mut nodes = Vec::with_capacity(section.nodes.len());
                    for node in section.nodes {
                        let d = match node.kind {
                            NodeKind::Dispatch(d) => d,
                            NodeKind::Fill { dst, value } => fill_dispatch(&node.name, dst, value)?,
                            NodeKind::Copy { src, dst } => copy_dispatch(&node.name, src, dst)?,
                        };
                        nodes.push(match d.groups {
                            Groups::Indirect(_) => d,
                            Groups::Direct(g) => {
                                let slot = counts.len();
                                counts.push([g[0], g[1], g[2], 0]);
                                Dispatch {
                                    groups: Groups::Indirect(args.slice(slot..slot + 1)),
                                    name: node.name.clone(),
                                    condition: predicate.clone(),
                                    ..d
                                }
                            }
                        });
                    }
                    Rewritten::Gated {
                        name,
                        flags,
                        push: [word, mask, first as u32, (counts.len() - first) as u32],
                        nodes,
                    }
                }
            });
        }
        if counts.is_empty() {
            counts.push([0; 4]);
        }
        let counts_buf = ctx.upload_buffer(
            &format!("{}.gate_counts", self.name),
            &counts,
            BufferUsage::STORAGE,
        )?;
        let mut out = Graph::new(self.name.clone());
        for part in rewritten {
            match part {
                Rewritten::Always(g) => out.append(g),
                Rewritten::Gated {
                    name,
                    flags,
                    push,
                    nodes,
                } => {
                    let (first, count) = (push[2] as usize, push[3] as usize);
                    if count > 0 {
                        out.dispatch(
                            Dispatch::new(
                                format!("gate[{name}]"),
                                ids::PRIMITIVES_GATE_ARGS,
                                [1, 1, 1],
                            )
                            .workgroup_size(WG)
                            .bind(flags, Access::READ)
                            .read(&counts_buf)
                            .write(args.slice(first..first + count))
                            .push(&push),
                        );
                    }
                    for d in nodes {
                        out.dispatch(d);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A fill as a dispatch of `fill_u32.comp`.
fn fill_dispatch(name: &str, dst: BufferSlice, value: u32) -> VkResult<Dispatch> {
    let n = words(name, &dst)?;
    Ok(Dispatch::new(
        name,
        ids::PRIMITIVES_FILL_U32,
        [n.div_ceil(WG).max(1), 1, 1],
    )
    .workgroup_size(WG)
    .bind(dst, Access::WRITE)
    .push(&[n, value]))
}

/// A copy as a dispatch of `copy_u32.comp` (the smaller of both ranges).
fn copy_dispatch(name: &str, src: BufferSlice, dst: BufferSlice) -> VkResult<Dispatch> {
    let n = words(name, &src)?.min(words(name, &dst)?);
    Ok(Dispatch::new(
        name,
        ids::PRIMITIVES_COPY_U32,
        [n.div_ceil(WG).max(1), 1, 1],
    )
    .workgroup_size(WG)
    .bind(src, Access::READ)
    .bind(dst, Access::WRITE)
    .push(&n))
}

/// The 4-byte words of a range (fills and copies of gated sections move whole words).
fn words(name: &str, b: &BufferSlice) -> VkResult<u32> {
    if !b.size.is_multiple_of(4) || b.size / 4 > u32::MAX as u64 {
        return Err(VkError::Graph {
            graph: name.to_string(),
            message: format!(
                "a gated fill or copy of '{}' covers {} bytes: whole 4-byte words only",
                b.raw.name, b.size
            ),
        });
    }
    Ok((b.size / 4) as u32)
}
